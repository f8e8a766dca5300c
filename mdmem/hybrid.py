"""Vectors and the hybrid pipeline: embedding, vector search, fusion, rerank, diversity.

I/O through the Vault's stores; the ranking arithmetic is in ``rank.py``. The model is never
needed to keep BM25 fresh: ``reindex`` only records chunks, and vectors are filled by ``embed``
(or by a query, a few at a time, or by ``mdmem serve``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .embed import release_memory
from .rank import Filters, hold_back_duplicates, rrf, tied_ranks

if TYPE_CHECKING:
    import numpy as np

    from .embed import Embedder
    from .index.vectors import EmbeddingCache, VectorIndex
    from .vault import Vault

# Edge types that mean "comes right before/after" (a conversation, a log, a series of notes).
SEQUENCE_EDGES = ("follows", "precedes", "next", "previous", "prev", "reply_to", "replies_to", "continues",
                  "continued_by")
AUTO_EMBED_MAX = 16  # a query embeds at most this many pending chunks itself (~1–3 s at 5–12 chunks/s here)


@dataclass(frozen=True, slots=True)
class QuerySettings:
    """[query] in mdmem.toml: fusion weights and thresholds (measured with ``mdmem eval``)."""

    candidates: int = 50  # per leg
    rrf_k: int = 60
    bm25_weight: float = 1.0
    vector_weight: float = 0.3  # MiniLM is the weaker leg on LoCoMo (alone R@10 .39 vs BM25 .65)
    min_similarity: float = 0.25  # cosine floor: below it a vector match is noise
    strong_ratio: float = 2.0  # BM25 top score ≥ this × the second: skip the vector leg
    duplicate_similarity: float = 0.9  # notes at least this similar (best chunks) count as copies
    duplicate_places: int = 2  # a copy waits until this many other notes are placed after its twin
    expand: bool = False  # pseudo-relevance feedback list; off: it lowered LoCoMo R@10 (.663 → .649)
    expand_weight: float = 0.5  # its weight in the fusion
    top_bonus: float = 0.01  # added to BM25's first hit: fusion kept burying it (turn MRR .517 → .482)
    rerank_model: str = ""  # a local cross-encoder folder; empty = no rerank
    rerank_top: int = 30
    min_coverage: float = 0.0  # a BM25-only candidate must match this share of the query's IDF mass
    strong_similarity: float = 0.45  # a vector match this close passes the coverage floor anyway
    # Spreading along sequence edges: a hit lends this share of its score to the notes one link
    # away (and spread × spread_decay two links away). A chat turn's answer is usually the next
    # turn, which shares no words with the question (LoCoMo turn R@10 .659 → .676, MRR .499 → .508).
    spread: float = 0.2
    spread_decay: float = 0.5
    spread_hops: int = 2
    spread_types: tuple[str, ...] = SEQUENCE_EDGES
    # Only fragments lend and receive: a note of a few sentences (a chat turn) means little without
    # its neighbours, a long note stands alone (one note per LoCoMo session: R@5 .864 → .816 when
    # whole sessions spread to the next).
    spread_max_bytes: int = 2000

    def __post_init__(self) -> None:
        # Bounds a cloned vault's mdmem.toml cannot step out of (a huge candidate list or hop count
        # would make every query slow); the float settings must be real numbers.
        import math

        from .errors import ConfigError

        for name, low, high in (("candidates", 1, 10_000), ("rrf_k", 1, 10_000), ("rerank_top", 0, 1_000),
                                ("duplicate_places", 0, 100), ("spread_hops", 0, 4),
                                ("spread_max_bytes", 0, 10_000_000)):
            if not low <= getattr(self, name) <= high:
                raise ConfigError(f"[query] {name} must be from {low} to {high}, got {getattr(self, name)}.")
        for name in ("bm25_weight", "vector_weight", "min_similarity", "strong_ratio", "duplicate_similarity",
                     "expand_weight", "top_bonus", "min_coverage", "strong_similarity", "spread", "spread_decay"):
            if not math.isfinite(getattr(self, name)):
                raise ConfigError(f"[query] {name} must be a finite number, got {getattr(self, name)}.")

    @classmethod
    def from_config(cls, data: dict[str, Any]) -> QuerySettings:
        """From [query]/[rerank] in mdmem.toml, then $MDMEM_QUERY ("vector_weight=0.4,expand=false")."""
        import os

        raw = dict(data.get("query", {})) if isinstance(data.get("query"), dict) else {}
        for item in filter(None, os.environ.get("MDMEM_QUERY", "").split(",")):
            key, _, value = item.partition("=")
            raw[key.strip()] = value.strip().lower() not in ("false", "0", "no") if value.strip().lower() in (
                "true", "false", "yes", "no") else value.strip()
        rerank = data.get("rerank", {})
        kwargs: dict[str, Any] = {}
        if raw:
            for f in ("candidates", "rrf_k", "bm25_weight", "vector_weight", "min_similarity",
                      "strong_ratio", "duplicate_similarity", "duplicate_places", "rerank_top", "expand", "expand_weight", "top_bonus", "min_coverage", "strong_similarity", "spread", "spread_decay", "spread_hops",
                      "spread_types", "spread_max_bytes"):
                if f in raw:
                    kind = type(getattr(cls(), f))
                    if kind is tuple:
                        value = raw[f]
                        items = value.split("|") if isinstance(value, str) else list(value)
                        kwargs[f] = tuple(str(v).strip() for v in items if str(v).strip())
                    else:
                        try:
                            kwargs[f] = raw[f] if kind is bool and isinstance(raw[f], bool) else kind(raw[f])
                        except (TypeError, ValueError) as exc:
                            from .errors import ConfigError

                            word = {int: "a whole number", float: "a number"}.get(kind, kind.__name__)
                            raise ConfigError(f"[query] {f} = {raw[f]!r} must be {word}.") from exc
        if isinstance(rerank, dict) and rerank.get("model"):
            kwargs["rerank_model"] = str(rerank["model"])
        return cls(**kwargs)


@dataclass(slots=True)
class EmbedReport:
    """What ``embed`` did."""

    model: str
    embedded: int = 0  # chunks run through the model
    reused: int = 0  # chunks whose vector came from the cache
    removed: int = 0
    done: int = 0  # chunks with a vector now
    total: int = 0
    interrupted: bool = False
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}  # type: ignore[attr-defined]


@dataclass(slots=True)
class Candidate:
    """A note under consideration, with everything ``--explain`` reports."""

    path: str
    explain: dict[str, Any] = field(default_factory=dict)
    chunk_key: int | None = None
    chunk_text: str = ""
    score: float = 0.0


class Semantic:
    """The vector side of a vault: embedder, embedding cache, usearch index."""

    def __init__(self, vault: Vault) -> None:
        from .embed import EmbedSettings, make_embedder

        self.vault = vault
        self.settings = EmbedSettings.from_config(vault.config.extra)
        self.query_settings = QuerySettings.from_config(vault.config.extra)
        self.embedder: Embedder = make_embedder(self.settings)
        self._cache: EmbeddingCache | None = None
        self._reader: tuple[Any, VectorIndex] | None = None
        self._reranker: Any = None

    @property
    def cache(self) -> EmbeddingCache:
        if self._cache is None:
            from .index.vectors import EmbeddingCache

            self.vault.state.mkdir(exist_ok=True)
            self._cache = EmbeddingCache(self.vault.state / "embeddings.sqlite")
        return self._cache

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
        self._cache = None
        self._reader = None

    def vector_path(self) -> Path:
        gen = self.vault.current_generation()
        return self.vault.state / gen / f"vectors-{self.embedder.fingerprint}.usearch"

    # -- filling ---------------------------------------------------------------------------------

    def embed(self, progress: Callable[[int, int], None] | None = None, *, max_new: int | None = None,
              wait: bool = True) -> EmbedReport:
        """Embed chunks that have no vector (cache first), then add them to the vector index."""
        started = time.perf_counter()
        fp = self.embedder.fingerprint
        report = EmbedReport(model=fp)
        cat = self.vault.catalog
        pending = cat.pending_chunks() if cat.get_meta("vector_model") == fp else \
            [(k, h, t) for k, h, t in _all_chunks(cat)]
        text_of = {h: t for _, h, t in pending}
        missing = self.cache.missing(fp, text_of)
        if max_new is not None:
            missing = missing[:max_new]
        # Similar lengths in a batch: padding to the longest chunk wasted half the model's work
        # (a 128-chunk sample: 16.1 s in stored order, 10.5 s sorted).
        missing.sort(key=lambda h: len(text_of[h]))
        batch = max(1, self.settings.batch_size)
        try:
            for i in range(0, len(missing), batch):
                part = missing[i : i + batch]
                vectors = self.embedder.embed([text_of[h] for h in part])
                self.cache.put_many(fp, list(zip(part, vectors)))
                report.embedded += len(part)
                release_memory()
                if progress:
                    progress(report.embedded, len(missing))
        except KeyboardInterrupt:
            report.interrupted = True  # finished batches are cached; the next run resumes
        except Exception as exc:  # the cache is written outside the writer lock, so translate here
            from .errors import write_failure

            err = write_failure(exc, self.cache.path)
            if err is None:
                raise
            raise err from exc
        with self.vault.writer_lock(None if wait else 0.0):
            added, removed = self._sync()
        report.reused = max(0, added - report.embedded)
        report.removed = removed
        report.done, report.total = self.vault.catalog.coverage()
        report.seconds = time.perf_counter() - started
        if report.interrupted:
            raise KeyboardInterrupt
        return report

    def _sync(self) -> tuple[int, int]:
        """Under the writer lock: bring the usearch file in line with the catalogue's chunks."""
        import numpy as np

        from .index.vectors import DamagedVectorFile, VectorIndex

        self.vault._tidy([])  # a killed save's temp file goes here
        cat = self.vault._get_catalog()
        fp, dim = self.embedder.fingerprint, self.embedder.dim
        path = self.vector_path()
        if cat.get_meta("vector_model") != fp:
            cat.reset_vectors(fp)
            for old in path.parent.glob("vectors-*.usearch"):
                old.unlink()  # another model's vectors: never mixed, never kept
        pending = cat.pending_chunks()
        dead = cat.dead_keys()
        vecs = self.cache.get_many(fp, [h for _, h, _ in pending], dim)
        ready = [(k, vecs[h]) for k, h, _ in pending if h in vecs]
        if not ready and not dead:
            return 0, 0
        try:
            index = VectorIndex.open(path, dim, writable=True)
        except DamagedVectorFile as exc:
            self._drop_vector_file(str(exc))
            return self._sync()
        index.remove(dead)
        if ready:
            index.add([k for k, _ in ready], np.stack([v for _, v in ready]))
        index.save()
        cat.finish_vector_sync([k for k, _ in ready], dead)
        self._reader = None
        return len(ready), len(dead)

    def _drop_vector_file(self, why: str) -> None:
        """Under the writer lock: delete a damaged usearch file; every chunk is re-added from the cache."""
        import sys

        print(f"mdmem: vector index unreadable ({why}); rebuilding it from the embedding cache.", file=sys.stderr)
        self._reader = None
        self.vector_path().unlink(missing_ok=True)
        self.vault._get_catalog().reset_vectors(self.embedder.fingerprint)

    def auto_fill(self) -> None:
        """Before a vector query: add cached vectors, and embed a few pending chunks if that is cheap."""
        cat = self.vault.catalog
        fp = self.embedder.fingerprint
        if cat.get_meta("vector_model") == fp and not cat.pending_chunks() and not cat.dead_keys():
            return
        pending = cat.pending_chunks() if cat.get_meta("vector_model") == fp else _all_chunks(cat)
        missing = self.cache.missing(fp, [h for _, h, _ in pending])
        from .errors import LockHeld

        try:
            if len(missing) <= AUTO_EMBED_MAX:
                self.embed(wait=False)
            else:
                with self.vault.writer_lock(0.0):
                    self._sync()
        except LockHeld:
            pass  # another writer is busy; answer with the vectors we have

    # -- reading ---------------------------------------------------------------------------------

    def reader(self, repair: bool = True) -> VectorIndex | None:
        """The vector index for reading, re-opened when a writer replaced the file (and rebuilt
        from the embedding cache when the file is damaged)."""
        from .index.vectors import DamagedVectorFile, VectorIndex

        path = self.vector_path()
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        stamp = (str(path), st.st_ino, st.st_mtime_ns)
        if self._reader is None or self._reader[0] != stamp:
            try:
                self._reader = (stamp, VectorIndex.open(path, self.embedder.dim))
            except DamagedVectorFile as exc:
                if not repair:
                    raise
                with self.vault.writer_lock():
                    if path.exists() and path.stat().st_ino == st.st_ino:  # not replaced meanwhile
                        self._drop_vector_file(str(exc))
                    self._sync()
                return self.reader(repair=False)
        return self._reader[1]

    def coverage(self) -> tuple[int, int]:
        cat = self.vault.catalog
        if cat.get_meta("vector_model") != self.embedder.fingerprint:
            return 0, cat.coverage()[1]
        return cat.coverage()

    def note_candidates(self, qvec: np.ndarray, k: int, filters: Filters,
                        min_similarity: float) -> list[Candidate]:
        """Notes by their best chunk's cosine similarity, filtered, above the floor."""
        index = self.reader()
        if index is None or len(index) == 0:
            return []
        cat = self.vault.catalog
        want = max(k * 4, 64)  # ~2 chunks a note: usually enough notes at once, else 4× more
        while True:
            matches = index.search(qvec, want)
            chunks = cat.chunks_by_key((key for key, sim in matches if sim >= min_similarity), text=False)
            best: dict[str, Candidate] = {}
            for key, sim in matches:
                ch = chunks.get(key)
                if ch is None or sim < min_similarity:
                    continue
                if ch["path"] not in best:
                    best[ch["path"]] = Candidate(
                        path=ch["path"], chunk_key=key,
                        explain={"cosine": round(sim, 4), "chunk": ch["heading"] or "(top)"})
            out = _first_matching(list(best.values()), k, filters, cat)
            enough = len(out) >= k or want >= len(index) or (matches and matches[-1][1] < min_similarity)
            if enough:
                out = out[:k]
                texts = cat.chunks_by_key(c.chunk_key for c in out if c.chunk_key is not None)
                for c in out:
                    if c.chunk_key in texts:
                        c.chunk_text = _chunk_body(texts[c.chunk_key]["embed_text"])
                return out
            want *= 4

    def similarity(self, keys: list[int]) -> Callable[[int, int], float]:
        """Cosine between chunks by key, for the near-duplicate check."""
        import numpy as np

        index = self.reader()
        if index is None or not keys:
            return lambda a, b: 0.0
        vecs = index.vectors(keys)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        vecs = vecs / np.where(norms == 0, 1, norms)
        pos = {k: i for i, k in enumerate(keys)}

        def sim(a: int, b: int) -> float:
            return float(vecs[pos[a]] @ vecs[pos[b]])

        return sim

    def reranker(self) -> Any:
        if self._reranker is None and self.query_settings.rerank_model:
            from .embed import CrossEncoderReranker

            self._reranker = CrossEncoderReranker(Path(self.query_settings.rerank_model).expanduser(),
                                                  threads=self.settings.threads)
        return self._reranker


def _first_matching(cands: list[Candidate], k: int, filters: Filters, cat: Any) -> list[Candidate]:
    """The first ``k`` candidates whose catalogue row passes the filters (rows read k at a time)."""
    if filters.empty:
        return cands[:k]
    out: list[Candidate] = []
    for i in range(0, len(cands), k):
        part = cands[i : i + k]
        rows = cat.rows(c.path for c in part)
        out += [c for c in part if c.path in rows and filters.matches(rows[c.path])]
        if len(out) >= k:
            break
    return out[:k]


def _all_chunks(cat: Any) -> list[tuple[int, str, str]]:
    return list(cat.db.execute("SELECT key, hash, embed_text FROM chunks ORDER BY key"))


def _chunk_body(embed_text: str) -> str:
    """A chunk's own text (its first line is the title › heading context)."""
    return embed_text.split("\n", 1)[1] if "\n" in embed_text else embed_text


def vector_search(sem: Semantic, text: str, limit: int, filters: Filters) -> tuple[list[Candidate], dict[str, Any]]:
    """Vectors only: notes ranked by cosine similarity of their best chunk."""
    sem.auto_fill()
    done, total = sem.coverage()
    t0 = time.perf_counter()
    qvec = sem.embedder.embed([text], query=True)[0]
    cands = sem.note_candidates(qvec, limit, filters, sem.query_settings.min_similarity)
    for c in cands:
        c.score = c.explain["cosine"]
    info = {"coverage": _coverage(done, total), "model": sem.embedder.name,
            "ms_embed": round((time.perf_counter() - t0) * 1000, 1)}
    return cands, info


def hybrid_search(vault: Vault, sem: Semantic | None, text: str, limit: int, filters: Filters, *,
                  prior_weight: float | None = None, recent_intent: bool = False,
                  ) -> tuple[list[Candidate], dict[str, Any]]:
    """BM25 + vectors by weighted RRF, spreading along sequence links, optional rerank, priors, then
    near-duplicates held back."""
    qs = sem.query_settings if sem else QuerySettings.from_config(vault.config.extra)
    info: dict[str, Any] = {"stages": [], "ms": {}}
    lap = _laps(info["ms"])
    lex = vault._repairing(lambda: vault.lexical.search(text, qs.candidates, filters,
                                                         coverage=qs.min_coverage > 0))
    info["stages"].append(f"bm25:{len(lex)}")
    lap("bm25")
    strong = _clear_winner(text, lex, qs.strong_ratio)
    vec: list[Candidate] = []
    if sem is not None:
        sem.auto_fill()
        info["coverage"] = _coverage(*sem.coverage())
        lap("coverage")
    foreign = sem is not None and not sem.settings.multilingual and _non_latin(text)
    if foreign:
        # all-MiniLM-L6-v2 knows English: for a Chinese or Russian query its neighbours are noise
        # (gold multilingual R@10: search .853, query with vectors .794).
        info["stages"].append("vectors:skipped (query language; set [embed] multilingual for a multilingual model)")
    if sem is not None and not strong and not foreign:
        if info["coverage"]["chunks_with_vectors"]:
            qvec = sem.embedder.embed([text], query=True)[0]
            lap("embed_query")
            vec = sem.note_candidates(qvec, qs.candidates, filters, qs.min_similarity)
            info["stages"].append(f"vectors:{len(vec)}")
            lap("vectors")
    elif strong:
        info["stages"].append("vectors:skipped (clear BM25 winner)")
    else:
        info["stages"].append("vectors:unavailable")
    lists = {"bm25": [(h.path, h.score) for h in lex], "vec": [(c.path, c.explain["cosine"]) for c in vec]}
    if qs.expand and not strong and len(lex) >= 2:
        prf = _expanded(vault, text, lex, qs.candidates, filters)
        if prf:
            lists["prf"] = [(h.path, h.score) for h in prf]
            info["stages"].append(f"prf:{len(prf)}")
    fused = rrf(lists, {"bm25": qs.bm25_weight, "vec": qs.vector_weight, "prf": qs.expand_weight}, k=qs.rrf_k)
    if qs.top_bonus and lists["bm25"]:
        # The exact-words list's winner: fusion may not bury what the user literally typed.
        for item, rank in tied_ranks(lists["bm25"]):
            if rank == 1:
                fused[item]["rrf"] += qs.top_bonus
    by_path: dict[str, Candidate] = {c.path: c for c in vec}
    for rank, h in enumerate(lex, 1):
        c = by_path.setdefault(h.path, Candidate(path=h.path))
        c.explain["bm25"] = round(h.score, 4)
    for path, parts in fused.items():
        c = by_path.setdefault(path, Candidate(path=path))
        c.explain.update({k: v for k, v in parts.items() if k.endswith("_rank")})
        c.explain["rrf"] = round(parts["rrf"], 6)
        c.score = parts["rrf"]
    if qs.min_coverage > 0:
        # A score floor: drop candidates that match only a sliver of the query (a shared common
        # word) unless the vectors find them genuinely close. Questions about things the vault
        # does not hold then come back empty instead of returning the top of a random list.
        cov = {h.path: h.coverage for h in lex}
        for path, c in list(by_path.items()):
            c.explain["coverage"] = round(cov.get(path, 0.0), 3) if path in cov else None
            if cov.get(path, 0.0) < qs.min_coverage and c.explain.get("cosine", 0.0) < qs.strong_similarity:
                del by_path[path]
    if qs.spread > 0 and qs.spread_hops > 0 and qs.spread_types and by_path:
        lent = _spread(vault, by_path, filters, qs)
        if lent:
            info["stages"].append(f"spread:{lent}")
        lap("spread")
    ranked = sorted(by_path.values(), key=lambda c: (-c.score, c.path))
    reranker = sem.reranker() if sem else None
    if reranker is not None and len(ranked) > 1:
        ranked = _rerank(vault, reranker, text, ranked, qs.rerank_top)
        info["stages"].append(f"rerank:{min(len(ranked), qs.rerank_top)}")
        lap("rerank")
    from .memory import PRIOR_WEIGHT

    weight = PRIOR_WEIGHT["recent" if recent_intent else "direct"] if prior_weight is None else prior_weight
    ranked = apply_memory(vault, ranked, now=filters.visible_at or time.time(), weight=weight,
                          recent_intent=recent_intent)
    info["stages"].append(f"priors:{weight}")
    lap("priors")
    if sem is not None and vec and len(ranked) > 1:
        ranked = _diversify(sem, ranked, limit, qs.duplicate_places, qs.duplicate_similarity)
        info["stages"].append("duplicates")
        lap("duplicates")
    return ranked[:limit], info


def _laps(into: dict[str, float]) -> Callable[[str], None]:
    """A stopwatch: each call records the milliseconds since the previous one under its name."""
    last = [time.perf_counter()]

    def lap(name: str) -> None:
        now = time.perf_counter()
        into[name] = round((now - last[0]) * 1000, 1)
        last[0] = now

    return lap


def _spread(vault: Vault, by_path: dict[str, Candidate], filters: Filters, qs: QuerySettings) -> int:
    """Lend each candidate's score to the notes next to it along sequence edges (see
    ``QuerySettings.spread``); adds the notes that were not candidates. Returns how many gained."""
    from .rank import spread

    cat = vault.catalog
    types = tuple(qs.spread_types)
    marks = ",".join("?" * len(types))
    small = qs.spread_max_bytes

    def neighbours(paths: set[str]) -> dict[str, list[tuple[str, str]]]:
        adj: dict[str, list[tuple[str, str]]] = {}
        plist = sorted(paths)
        for i in range(0, len(plist), 400):
            part = plist[i:i + 400]
            pm = ",".join("?" * len(part))
            # out-edges, each target resolved by the best kind of name (id > path > stem > title > alias)
            for src, typ, other in cat.db.execute(
                    f"SELECT x.src, x.type, x.other FROM (SELECT l.src, l.type, (SELECT n.path FROM names n "
                    f"WHERE n.norm = l.target_norm ORDER BY CASE n.kind WHEN 'id' THEN 0 WHEN 'path' THEN 1 "
                    f"WHEN 'stem' THEN 2 WHEN 'title' THEN 3 ELSE 4 END LIMIT 1) AS other FROM links l "
                    f"JOIN notes s ON s.path = l.src WHERE l.src IN ({pm}) AND l.type IN ({marks}) "
                    f"AND s.size <= ?) x JOIN notes t ON t.path = x.other WHERE t.size <= ?",
                    (*part, *types, small, small)):
                if other and other != src:
                    adj.setdefault(src, []).append((other, typ))
            for src, typ, target in cat.db.execute(
                    f"SELECT l.src, l.type, n.path FROM links l JOIN names n ON n.norm = l.target_norm "
                    f"JOIN notes t ON t.path = n.path JOIN notes s ON s.path = l.src "
                    f"WHERE n.path IN ({pm}) AND l.type IN ({marks}) AND t.size <= ? AND s.size <= ?",
                    (*part, *types, small, small)):
                if src != target:
                    adj.setdefault(target, []).append((src, f"{typ}⁻¹"))
        return adj

    top = max(c.score for c in by_path.values()) or 1.0
    weights = [qs.spread * qs.spread_decay ** h for h in range(qs.spread_hops)]
    lent = spread({p: c.score / top for p, c in by_path.items()}, neighbours, weights)
    new = [p for p in lent if p not in by_path]
    rows = cat.rows(new) if new else {}
    seed_ids = {p: r["id"] for p, r in cat.rows({ln.seed for ln in lent.values()}).items()}
    gained = 0
    for path, ln in lent.items():
        c = by_path.get(path)
        if c is None:
            row = rows.get(path)
            if row is None or not filters.matches(row):
                continue
            c = by_path[path] = Candidate(path=path)
        c.score += ln.gain * top
        c.explain["spread"] = round(ln.gain, 4)
        c.explain["via"] = f"{ln.edge} {seed_ids.get(ln.seed, ln.seed)}" + (f" ({ln.hops} hops)" if ln.hops > 1 else "")
        gained += 1
    return gained


def _expanded(vault: Vault, text: str, lex: list[Any], limit: int, filters: Filters) -> list[Any]:
    """BM25 again, with the query plus the terms that characterise its top 3 hits."""
    from .rank import feedback_terms
    from .text import terms, tokenize

    docs = []
    for h in lex[:3]:
        try:
            docs.append([t.text for t in tokenize(vault._body_for_snippet(h.path)[:5000])])
        except OSError:
            continue
    candidates = {t for d in docs for t in d}
    dfs, n = vault.lexical.doc_frequencies(candidates)
    extra = feedback_terms(docs, lambda t: dfs.get(t, 0), n, exclude=set(terms(text)))
    if not extra:
        return []
    top = extra[0][1]
    weighted = [(t, 0.3 * w / top) for t, w in extra]
    return vault.lexical.search(text, limit, filters, extra_terms=weighted)


def _non_latin(text: str) -> bool:
    """Whether the query's letters are mostly outside the Latin script."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return False
    latin = sum(1 for c in letters if c.isascii() or "\u00c0" <= c <= "\u024f")
    return latin < len(letters) / 2


def _clear_winner(text: str, lex: list[Any], ratio: float) -> bool:
    """A lexical hit that the vector leg cannot improve on: an identifier-like query with one
    dominant match (its score ``ratio`` times the next one's, or the only match)."""
    from .text import terms

    if not lex:
        return False
    q = terms(text)
    identifier = any(any(c.isdigit() for c in t) or "_" in t or "." in t for t in q)
    second = lex[1].score if len(lex) > 1 else 0.0
    return identifier and lex[0].score >= ratio * second


def apply_memory(vault: Vault, ranked: list[Candidate], *, now: float, weight: float,
                 recent_intent: bool = False) -> list[Candidate]:
    """Bounded priors (salience, pin, recency, confidence) and version chains on top of relevance.

    Scores are normalised to the top hit (1.0), then ``weight × prior`` is added: on a direct
    query (weight 0.08) a prior can reorder near-ties but never lift a clearly weaker match.
    A note that another note supersedes gets half its score and is placed below its successor.
    """
    from .memory import SUPERSEDED_FACTOR, prior

    if not ranked:
        return ranked
    cat = vault.catalog
    rows = cat.rows(c.path for c in ranked)
    top = max(c.score for c in ranked) or 1.0
    for c in ranked:
        row = rows.get(c.path)
        relevance = c.score / top
        if row is None:
            c.score = relevance
            continue
        parts = prior(row, now, recent_intent=recent_intent) if weight else {}
        c.score = relevance + weight * parts.get("prior", 0.0)
        if weight:
            c.explain.update({"relevance": round(relevance, 4), **parts, "prior_weight": weight})
    successors = cat.superseded_by(c.path for c in ranked)
    by_path = {c.path: c for c in ranked}
    for old, new in successors.items():
        c = by_path[old]
        c.score *= SUPERSEDED_FACTOR
        c.explain["superseded_by"] = rows[new]["id"] if new in rows else new
        if new in by_path and c.score >= by_path[new].score:
            c.score = by_path[new].score - 1e-6
    ranked.sort(key=lambda c: (-c.score, c.path))
    return ranked


def _rerank(vault: Vault, reranker: Any, text: str, ranked: list[Candidate], top: int) -> list[Candidate]:
    head, tail = ranked[:top], ranked[top:]
    passages = [c.chunk_text or _lead(vault, c.path) for c in head]
    scores = reranker.score(text, passages)
    best_rrf = max(c.score for c in head) or 1.0
    for c, s in zip(head, scores):
        c.explain["rerank"] = round(float(s), 4)
        # Blend: the cross-encoder decides, fusion breaks its ties and guards against its misses.
        c.score = 0.7 * float(s) + 0.3 * (c.score / best_rrf)
        c.explain["blended"] = round(c.score, 6)
    head.sort(key=lambda c: (-c.score, c.path))
    floor = min((c.score for c in head), default=0.0)
    for c in tail:
        c.score = min(c.score, floor - 1e-6)
    return head + tail


def _diversify(sem: Semantic, ranked: list[Candidate], limit: int, places: int,
               threshold: float) -> list[Candidate]:
    """Hold back near-duplicates (cosine ≥ ``threshold``) by ``places``: only copies count as
    redundant, since plain MMR also pushed down related-but-different relevant notes (LoCoMo
    turn R@10 .691 → .663)."""
    pool = ranked[: max(limit * 3, 20)]
    keyed = [c for c in pool if c.chunk_key is not None]
    sim_keys = sem.similarity([c.chunk_key for c in keyed])  # type: ignore[misc]
    key_of = {c.path: c.chunk_key for c in keyed}

    def similarity(a: str, b: str) -> float:
        ka, kb = key_of.get(a), key_of.get(b)
        return sim_keys(ka, kb) if ka is not None and kb is not None else 0.0

    by_path = {c.path: c for c in pool}
    out = []
    for path, sim in hold_back_duplicates([c.path for c in pool], similarity, threshold, places):
        c = by_path[path]
        if sim > 0:
            c.explain["duplicate_of_above"] = round(sim, 4)
        out.append(c)
    return out + ranked[len(pool):]


def _lead(vault: Vault, path: str) -> str:
    try:
        return vault._body_for_snippet(path)[:1000]
    except OSError:
        return ""


def _coverage(done: int, total: int) -> dict[str, Any]:
    return {"chunks_with_vectors": done, "chunks": total, "complete": done >= total}
