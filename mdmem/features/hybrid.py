"""The retrieval pipelines: BM25 search, vector search and the hybrid query (fusion, spreading,
rerank, priors, near-duplicates), and the hits they return.

Features over the store's read door (``index.reading``) and its vector side (``index.semantic``); the
ranking arithmetic is pure (``rank``, ``memory``). Every pipeline reads through one view of the index
(``IndexStore.reading``), which repairs it first: the one step by which a read may write the index.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..adapters.config import QuerySettings
from ..core.links import display_text
from ..core.memory import PRIOR_WEIGHT, superseded_scores
from ..core.note import iso_from_timestamp
from ..core.rank import (
    Candidate,
    Filters,
    blend,
    clear_winner,
    flatness,
    hold_back_duplicates,
    no_answer,
    rrf,
    tied_ranks,
)
from ..core.text import snippet, terms
from ..results.search import Hit, Hits

if TYPE_CHECKING:
    from ..adapters.files import Files
    from ..index.reading import IndexRead
    from ..index.semantic import Semantic
    from ..index.store import IndexStore


FULL = 0.999  # a BM25 note with this share of the query holds every word of it
WINNER_MARGIN = 1.05  # a clear vector winner's score over the best one: above what a prior can add (≤ 1 %)


# -- the hits a pipeline returns -----------------------------------------------------------------


def search(store: IndexStore, text: str, limit: int, filters: Filters, *, explain: bool = False) -> Hits:
    """BM25 over the notes (no model is loaded); a superseded note goes below its successor.
    ``explain``: each hit's BM25 score and coverage (the share of the query's words it holds)."""
    with store.reading() as idx:
        raw = _superseded_last(
            idx, idx.search(text, limit, filters, coverage=explain, corrections=idx.corrections(text))
        )
    qterms = set(terms(text))
    return Hits(
        (
            Hit(
                id=h.id,
                path=h.path,
                title=h.title,
                score=round(h.score, 4),
                snippet=snippet(_body(store.files, h.path), qterms),
                type=h.type,
                tags=h.tags,
                scope=h.scope,
                date=iso_from_timestamp(h.date),
                explain={"bm25": round(h.score, 4), "coverage": round(h.coverage, 3)} if explain else None,
            )
            for h in raw
        ),
        text,
        index_info(store, {}),
    )


def _superseded_last(idx: IndexRead, hits: list[Any]) -> list[Any]:
    """BM25 order after version chains (``memory.superseded_scores``): a superseded note has half its
    score and ranks below its successor."""
    successors = idx.superseded_by(h.path for h in hits) if hits else {}
    if not successors:
        return hits
    scores = superseded_scores({h.path: h.score for h in hits}, successors)
    return sorted((replace(h, score=scores[h.path]) for h in hits), key=lambda h: (-round(h.score, 9), h.path))


def make_hits(store: IndexStore, cands: list[Candidate], text: str, explain: bool, info: dict[str, Any]) -> Hits:
    """The hits for a pipeline's ranked candidates: catalogue fields, the snippet of the best chunk
    (else of the body), and ``explain`` when asked."""
    with store.reading() as idx:
        rows = idx.rows(c.path for c in cands)
    qterms = set(terms(text))
    hits = Hits(query=text, info=index_info(store, info))
    for c in cands:
        row = rows.get(c.path)
        if row is None:
            continue
        body = display_text(c.chunk_text) if c.chunk_text else _body(store.files, c.path)
        hits.append(
            Hit(
                id=row["id"],
                path=c.path,
                title=row["title"],
                score=round(c.score, 6),
                snippet=snippet(body, qterms),
                type=row["type"],
                tags=row["tags"],
                scope=row["scope"],
                date=iso_from_timestamp(row["date"]),
                explain={**c.explain, "final": round(c.score, 6)} if explain else None,
            )
        )
    return hits


def index_info(store: IndexStore, info: dict[str, Any]) -> dict[str, Any]:
    """``info`` with ``index`` when the answer came from an index a background job is still catching
    up (``Indexer.notice``): ``{"catching_up": true, "why": ...}`` in ``--json``; stderr says it too."""
    if store.indexer.catching_up is None:
        return info
    return {**info, "index": {"catching_up": True, "why": store.indexer.catching_up}}


def with_links(store: IndexStore, hits: Hits, top: int = 3, per_hit: int = 3) -> Hits:
    """Connection hints on the top hits: up to ``per_hit`` typed neighbours each (causal links
    first, then other typed links, then mentions and entities), so an agent can follow them."""
    from .graph_view import connection_hints  # the graph loads only for the hits that show their links

    if not hits:
        return hits
    hints = connection_hints(store, [h.path for h in hits[:top]], per_hit)
    return Hits((replace(h, links=hints[h.path]) if hints.get(h.path) else h for h in hits), hits.query, hits.info)


def _body(files: Files, path: str) -> str:
    """A note's body as a reader sees it (``display_text``): what snippets are cut from."""
    try:
        return display_text(files.body(path))
    except OSError:
        return ""


def vsearch(
    store: IndexStore, sem: Semantic, text: str, limit: int, filters: Filters, *, explain: bool = False
) -> Hits:
    """Vector search as hits, with what it did (``info``: coverage, model)."""
    cands, info = vector_search(sem, text, limit, filters)
    with store.reading(notice=False):  # the vector side's repair has just noticed what changed
        return make_hits(store, cands, text, explain, info)


def query(
    store: IndexStore,
    sem: Semantic | None,
    text: str,
    limit: int,
    filters: Filters,
    *,
    explain: bool = False,
    priors: bool = True,
) -> Hits:
    """The hybrid query as hits with connection hints, and what it did (``info``: stages, coverage)."""
    with store.reading():  # one repair and one generation for the hits and their links
        cands, info = hybrid_search(store, sem, text, limit, filters, prior_weight=None if priors else 0.0)
        return with_links(store, make_hits(store, cands, text, explain, info))


# -- the pipelines -------------------------------------------------------------------------------


def vector_search(sem: Semantic, text: str, limit: int, filters: Filters) -> tuple[list[Candidate], dict[str, Any]]:
    """Vectors only: notes ranked by cosine similarity of their best chunk."""
    sem.repair()
    done, total = sem.coverage()
    t0 = time.perf_counter()
    qvec = sem.embedder.embed([text], query=True)[0]
    cands = sem.note_candidates(qvec, limit, filters, sem.query_settings.min_similarity)
    for c in cands:
        c.score = c.explain["cosine"]
    info = {
        "coverage": _coverage(done, total, sem),
        "model": sem.embedder.name,
        "ms_embed": round((time.perf_counter() - t0) * 1000, 1),
    }
    return cands, info


def hybrid_search(
    store: IndexStore,
    sem: Semantic | None,
    text: str,
    limit: int,
    filters: Filters,
    *,
    prior_weight: float | None = None,
    recent_intent: bool = False,
    words: str | None = None,
) -> tuple[list[Candidate], dict[str, Any]]:
    """BM25 + vectors by weighted RRF, spreading along sequence links, optional rerank, priors, then
    near-duplicates held back. ``words``: what BM25 looks for, when not all of ``text`` (the vectors
    read the whole question: recall's time questions without "learn", "about", "what happened")."""
    meaning, text = text, words or text
    qs = sem.query_settings if sem else QuerySettings.from_config(store.config.extra)
    info: dict[str, Any] = {"stages": [], "ms": {}}
    lap = _laps(info["ms"])
    with store.reading() as idx:
        return _hybrid(idx, sem, qs, info, lap, meaning, text, limit, filters, prior_weight, recent_intent)


def _hybrid(
    idx: IndexRead,
    sem: Semantic | None,
    qs: QuerySettings,
    info: dict[str, Any],
    lap: Callable[[str], None],
    meaning: str,
    text: str,
    limit: int,
    filters: Filters,
    prior_weight: float | None,
    recent_intent: bool,
) -> tuple[list[Candidate], dict[str, Any]]:
    """``hybrid_search`` on one view of the index (``meaning``: what the vectors read)."""
    fixes = idx.corrections(text)
    lex = idx.search(text, qs.candidates, filters, coverage=True, corrections=fixes)
    if fixes:  # words no note has, read as the name one edit away ("dataveiw" → dataview)
        info["stages"].append("typos:" + ",".join(f"{a}→{b}" for a, b in fixes.items()))
    info["stages"].append(f"bm25:{len(lex)}")
    lap("bm25")
    judged = qs.ranking == "model"  # the model reads both legs' evidence for every query
    strong = not judged and _clear_winner(text, lex, qs.strong_ratio, qs.blend_coverage)
    sized: list[bool] = []

    def large() -> bool:  # whether the vault holds enough text for a missing word to mean something (once)
        if not sized:
            sized.append(idx.body_words() >= qs.large_vault_words)
        return sized[0]

    vec: list[Candidate] = []
    if sem is not None:
        sem.repair()
        info["coverage"] = _coverage(*sem.coverage(), sem)
        lap("coverage")
    foreign = sem is not None and not sem.settings.any_language and _non_latin(meaning)
    if foreign:
        # all-MiniLM-L6-v2 knows English: for a Chinese or Japanese query its nearest notes are the
        # other notes in that script, whatever they say. Gate off, gold's CJK queries kept the same
        # answers under those extra hits. A multilingual model gets the vector leg, which helps it there
        # (docs/retrieval.md, "The measurements behind the settings").
        info["stages"].append('vectors:skipped (query language; set [embed] model = "multilingual-e5-small")')
        info["language"] = {"vectors": "skipped", "model": sem.embedder.name if sem else ""}  # the CLI says how
    if sem is not None and not strong and not foreign:
        if info["coverage"]["chunks_with_vectors"]:
            qvec = sem.embedder.embed([meaning], query=True)[0]
            lap("embed_query")
            vec = sem.note_candidates(qvec, qs.candidates, filters, qs.min_similarity)
            info["stages"].append(f"vectors:{len(vec)}")
            lap("vectors")
    elif strong:
        info["stages"].append("vectors:skipped (clear BM25 winner)")
    elif not foreign:
        info["stages"].append("vectors:unavailable")
    lists = {"bm25": [(h.path, h.score) for h in lex], "vec": [(c.path, c.explain["cosine"]) for c in vec]}
    # While vectors are coming, the leg has not read every note: on BM25's hits it has not wholly read it
    # abstains (on the help vault's questions asked during the first embedding, `query` had fallen
    # below `search` without it: docs/retrieval.md).
    unseen = _unseen(idx, lex, info["coverage"]) if lists["vec"] else set()
    abstained = _abstain(lex, lists["vec"], unseen, latin_only=sem is not None and not sem.settings.any_language)
    if abstained:
        lists["vec"] = sorted(
            [*(pc for pc in lists["vec"] if pc[0] not in abstained), *abstained.items()], key=lambda pc: -pc[1]
        )
        info["stages"].append(f"vectors:abstained:{len(abstained)}")
    if qs.expand and not strong and len(lex) >= 2:
        prf = _expanded(idx, text, lex, qs.candidates, filters)
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
    for h in lex:
        c = by_path.setdefault(h.path, Candidate(path=h.path))
        c.explain["bm25"] = round(h.score, 4)
        c.explain["coverage"] = round(h.coverage, 3)  # comparable across vaults (rank.evidence)
        if h.path in abstained:
            c.explain["vec_abstained"] = 1
    for path, parts in fused.items():
        c = by_path.setdefault(path, Candidate(path=path))
        c.explain.update({k: v for k, v in parts.items() if k.endswith("_rank")})
        c.explain["rrf"] = round(parts["rrf"], 6)
        c.score = parts["rrf"]
    best = _section_coverage(idx, lex, fixes, text) if qs.section_coverage else None
    if best is not None:
        info["section_coverage"] = round(best, 3)
    else:
        best = max((h.coverage for h in lex), default=0.0)
    share = 0.0 if judged else flatness(best, qs.blend_coverage_full, qs.blend_coverage)
    chance = None
    missing: float | None = None
    if judged:
        from .judged import evidence, judge

        missing = idx.unknown_share(text, fixes)
        chance = judge(by_path, evidence(idx, text, lex, vec), best_coverage=best, unknown_share=missing)
        info["stages"].append(f"model:{chance:.2f}")
    if share > 0 and lists["vec"]:
        # BM25 matched little of the query (a paraphrase): trust the vectors' scores, not just their
        # ranks (see QuerySettings.blend_coverage and docs/retrieval.md).
        mixed = blend(
            {p: c.score for p, c in by_path.items()},
            lists["bm25"],
            lists["vec"],
            share,
            qs.blend_vector_weight,
            qs.min_similarity,
            {h.path: h.coverage for h in lex} if qs.blend_by_coverage and large() else None,
        )
        for path, score in mixed.items():
            c = by_path.setdefault(path, Candidate(path=path))
            c.score = score
            c.explain["blend"] = round(score, 6)
        info["stages"].append(f"blend:{share:.2f}")
    winner = None if judged else clear_winner(lists["vec"], qs.winner_gap, qs.winner_cosine, qs.min_similarity)
    if winner is not None and winner in by_path and not (lex and lex[0].coverage >= FULL and lex[0].path != winner):
        # the vectors' clear first goes first, unless BM25's first holds every word of the query
        best_score = max(c.score for c in by_path.values())
        by_path[winner].score = max(by_path[winner].score, best_score * WINNER_MARGIN)
        by_path[winner].explain["vector_winner"] = 1
        info["stages"].append("vector-winner")
    if not judged and keep_titles(lex, by_path, fixes, text):
        info["stages"].append("titles-kept")
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
        lent = _spread(idx, by_path, filters, qs)
        if lent:
            info["stages"].append(f"spread:{lent}")
        lap("spread")
    ranked = sorted(by_path.values(), key=lambda c: (-c.score, c.path))
    if qs.ranking == "head" and qs.head > 0 and len(ranked) > 1:
        # The fusion chose the first notes (each leg's first joining them); the learned judgement orders
        # them where BM25 answers the query. It was fitted on queries a vault asks itself (titles,
        # headings, first sentences), which BM25 always answers: where BM25 cannot (a paraphrase: the
        # blend is on) it has seen nothing, and ordered gold's paraphrases worse than the blend
        # (docs/retrieval.md), so there the blend's order stands.
        from .judged import evidence, order_head

        missing = 0.0 if strong else idx.unknown_share(text, fixes)
        chance = order_head(
            ranked,
            evidence(idx, text, lex, vec),
            qs.head,
            legs={"bm25": [p for p, _ in lists["bm25"]], "vectors": [p for p, _ in lists["vec"]]},
            per_leg=qs.head_per_leg,
            reorder=share == 0,
            best_coverage=best,
            unknown_share=missing,
        )
        info["stages"].append(f"model-head:{min(qs.head, len(ranked))}" + ("" if share == 0 else " (blend's order)"))
        lap("model")
    reranker = sem.reranker() if sem else None
    if reranker is not None and len(ranked) > 1:
        ranked = _rerank(idx.files, reranker, text, ranked, qs.rerank_top)
        info["stages"].append(f"rerank:{min(len(ranked), qs.rerank_top)}")
        lap("rerank")
    weight = PRIOR_WEIGHT["recent" if recent_intent else "direct"] if prior_weight is None else prior_weight
    ranked = apply_memory(
        idx, ranked, now=filters.visible_at or time.time(), weight=weight, recent_intent=recent_intent
    )
    info["stages"].append(f"priors:{weight}")
    lap("priors")
    if sem is not None and vec and len(ranked) > 1:
        ranked = _diversify(sem, ranked, limit, qs.duplicate_places, qs.duplicate_similarity)
        info["stages"].append("duplicates")
        lap("duplicates")
    # in a large vault the first word counts too ("Terraform state …"); in a chat it is often "Whose"
    unknown = [] if strong else idx.unknown_names(text, fixes, first_word=large())
    if missing is None:  # (the model read it already)
        missing = 0.0 if strong else idx.unknown_share(text, fixes)
    best_cosine = max((c.explain["cosine"] for c in vec), default=0.0)
    # The vault has no answer when the query names what no note mentions, or much of it is words no
    # note has (rank.no_answer; public corpora: see QuerySettings.unknown_share).
    if chance is not None and qs.verdict == "model":
        from .judged import shipped_model

        info["relevant"] = not ranked or chance >= shipped_model().threshold
    else:
        info["relevant"] = not (
            ranked
            and no_answer(
                unknown,
                missing,
                best,
                best_cosine,
                big=bool(unknown or missing) and large(),
                covered=qs.blend_coverage,
                strong=qs.strong_similarity,
                share=qs.unknown_share,
                weak_share=qs.weak_unknown_share,
                weak_cosine=qs.weak_similarity,
            )
        )
    if unknown:
        info["unknown"] = unknown  # said above the notes shown, when they are shown
    if missing:
        info["unknown_share"] = round(missing, 3)
    return ranked[:limit], info


TITLE_HITS = 3  # BM25's first hits whose title may hold the whole query


def keep_titles(lex: list[Any], by_path: dict[str, Candidate], fixes: dict[str, str], text: str) -> bool:
    """A note among BM25's first ``TITLE_HITS`` whose title holds every word of the query keeps a
    place at most one below its BM25 rank: fusion may not drop what the user named ("Templater",
    "Kanban plugin") below notes that only one leg liked. Returns whether one was lifted."""
    from ..index.lexical_spelling import query_terms

    wanted = set(query_terms(text, fixes))
    if not wanted or not by_path:
        return False
    scores = sorted((c.score for c in by_path.values()), reverse=True)
    lifted = False
    for rank, h in enumerate(lex[:TITLE_HITS], 1):
        c = by_path.get(h.path)
        floor = scores[min(rank, len(scores) - 1)]  # the score at the place one below its BM25 rank
        if c is not None and c.score < floor and wanted <= set(terms(h.title)):
            c.score = floor + 1e-9
            c.explain["title_kept"] = rank
            lifted = True
    return lifted


def _laps(into: dict[str, float]) -> Callable[[str], None]:
    """A stopwatch: each call records the milliseconds since the previous one under its name."""
    last = [time.perf_counter()]

    def lap(name: str) -> None:
        now = time.perf_counter()
        into[name] = round((now - last[0]) * 1000, 1)
        last[0] = now

    return lap


def _spread(idx: IndexRead, by_path: dict[str, Candidate], filters: Filters, qs: QuerySettings) -> int:
    """Lend each candidate's score to the notes next to it along sequence edges (see
    ``QuerySettings.spread``); adds the notes that were not candidates. Returns how many gained."""
    from ..core.rank import spread

    def neighbours(paths: set[str]) -> dict[str, list[tuple[str, str]]]:
        return idx.sequence_neighbours(paths, qs.spread_types, qs.spread_max_bytes)

    top = max(c.score for c in by_path.values()) or 1.0
    weights = [qs.spread * qs.spread_decay**h for h in range(qs.spread_hops)]
    lent = spread({p: c.score / top for p, c in by_path.items()}, neighbours, weights)
    new = [p for p in lent if p not in by_path]
    rows = idx.rows(new) if new else {}
    seed_ids = {p: r["id"] for p, r in idx.rows({ln.seed for ln in lent.values()}).items()}
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


def _expanded(idx: IndexRead, text: str, lex: list[Any], limit: int, filters: Filters) -> list[Any]:
    """BM25 again, with the query plus the terms that characterise its top 3 hits."""
    from ..core.rank import feedback_terms
    from ..core.text import tokenize

    docs = []
    for h in lex[:3]:
        try:
            docs.append([t.text for t in tokenize(idx.files.body(h.path)[:5000])])
        except OSError:
            continue
    candidates = {t for d in docs for t in d}
    dfs, n = idx.doc_frequencies(candidates)
    extra = feedback_terms(docs, lambda t: dfs.get(t, 0), n, exclude=set(terms(text)))
    if not extra:
        return []
    top = extra[0][1]
    weighted = [(t, 0.3 * w / top) for t, w in extra]
    return idx.search(text, limit, filters, extra_terms=weighted)


def _non_latin(text: str) -> bool:
    """Whether the query's letters are mostly outside the Latin script."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return False
    latin = sum(1 for c in letters if c.isascii() or "\u00c0" <= c <= "\u024f")
    return latin < len(letters) / 2


SECTION_HITS = 10  # BM25's first hits whose sections are read for the coverage of the query


def _section_coverage(idx: IndexRead, lex: list[Any], fixes: dict[str, str], text: str) -> float | None:
    """How much of the query (IDF-weighted) the best-matching *section* covers, among BM25's hits.

    A long note covers a paraphrase's common words somewhere in its thousands ("get", "back",
    "copy", "note"), so its note-level coverage says BM25 answered when no part of it did, and
    fusion kept RRF's ranks, burying clear vector wins (help vault: query 13/20 in the top 10,
    vsearch 18/20). A note of one chunk keeps its note-level coverage (which sees its aliases and
    tags too); a longer one among the first ``SECTION_HITS`` counts its best chunk."""
    if not lex:
        return None
    counts = idx.chunk_counts([h.path for h in lex])
    if all(counts.get(h.path, 1) <= 1 for h in lex[:SECTION_HITS]):
        return None
    weights = idx.term_weights(text, fixes)
    total = sum(weights.values()) or 1.0
    best = max((h.coverage for h in lex if counts.get(h.path, 1) <= 1), default=0.0)
    for h in lex[:SECTION_HITS]:
        if counts.get(h.path, 1) <= 1 or h.coverage <= best:
            continue  # a section covers at most what its note does
        for found in idx.chunk_terms(h.path):
            best = max(best, min(h.coverage, sum(w for t, w in weights.items() if t in found) / total))
    return best


def _abstain(
    lex: list[Any], cosines: list[tuple[str, float]], unseen: Collection[str] = (), *, latin_only: bool = True
) -> dict[str, float]:
    """The notes among BM25's hits the vector leg cannot judge, each with the cosine the leg has at that
    note's BM25 rank (kept when its own cosine is higher): the leg abstains, as if it agreed with BM25,
    instead of voting against them. Those are notes with chunks not embedded yet (``unseen``) and, for an
    English-only model (``latin_only``), notes whose title is mostly outside the Latin script.

    Without this an English query answered by a Japanese note (gold multilingual-03, found at BM25
    ranks 5 and 7) had that note pushed below the English notes the model could score (docs/retrieval.md).
    English-only vaults with every vector have no such notes: nothing changes there."""
    if not cosines:
        return {}
    seen = dict(cosines)
    out = {}
    for rank, h in enumerate(lex):
        if h.path in unseen or (latin_only and h.path not in seen and _non_latin(h.title)):
            value = cosines[min(rank, len(cosines) - 1)][1]
            if value > seen.get(h.path, float("-inf")):
                out[h.path] = value
    return out


def _unseen(idx: IndexRead, lex: list[Any], coverage: dict[str, Any]) -> set[str]:
    """BM25's hits with a chunk that has no vector yet (none while every chunk has one); ``coverage``
    (the answer's ``info``) gets how many, so ``--json`` and ``--explain`` say how much the leg saw."""
    if coverage.get("complete", True) or not lex:
        return set()
    out = idx.not_embedded([h.path for h in lex])
    coverage["candidates_not_embedded"] = len(out)
    coverage["candidates"] = len(lex)
    return out


def _clear_winner(text: str, lex: list[Any], ratio: float, coverage: float) -> bool:
    """A lexical hit that the vector leg cannot improve on: an identifier-like query with one
    dominant match (its score ``ratio`` times the next one's, or the only match) that covers at
    least ``coverage`` of the query. A number in a paraphrase ("push v2 live to customers") makes
    no identifier query: a dominant match of a few of its words is no answer."""
    if not lex:
        return False
    q = terms(text)
    identifier = any(any(c.isdigit() for c in t) or "_" in t or "." in t for t in q)
    second = lex[1].score if len(lex) > 1 else 0.0
    return identifier and lex[0].score >= ratio * second and lex[0].coverage >= coverage


def apply_memory(
    idx: IndexRead, ranked: list[Candidate], *, now: float, weight: float, recent_intent: bool = False
) -> list[Candidate]:
    """Bounded priors (salience, pin, recency, confidence) and version chains on top of relevance.

    Scores are normalised to the top hit (1.0), then ``weight × prior`` is added: on a direct
    query (weight 0.08) a prior can reorder near-ties but never lift a clearly weaker match.
    A note that another note supersedes gets half its score and is placed below its successor.
    """
    from ..core.memory import prior

    if not ranked:
        return ranked
    rows = idx.rows(c.path for c in ranked)
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
    successors = idx.superseded_by(c.path for c in ranked)
    scores = superseded_scores({c.path: c.score for c in ranked}, successors)
    for c in ranked:
        c.score = scores[c.path]
        if c.path in successors:
            new = successors[c.path]
            c.explain["superseded_by"] = rows[new]["id"] if new in rows else new
    ranked.sort(key=lambda c: (-c.score, c.path))
    return ranked


def _rerank(files: Files, reranker: Any, text: str, ranked: list[Candidate], top: int) -> list[Candidate]:
    head, tail = ranked[:top], ranked[top:]
    passages = [c.chunk_text or _body(files, c.path)[:1000] for c in head]
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


def _diversify(sem: Semantic, ranked: list[Candidate], limit: int, places: int, threshold: float) -> list[Candidate]:
    """Hold back near-duplicates (cosine ≥ ``threshold``) by ``places``: only copies count as
    redundant, since plain MMR also pushed down related-but-different relevant notes (LoCoMo's
    turn level lost recall: docs/retrieval.md)."""
    pool = ranked[: max(limit * 3, 20)]
    keyed = [c for c in pool if c.chunk_key is not None]
    sim_keys = sem.similarity([c.chunk_key for c in pool if c.chunk_key is not None])
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
    return out + ranked[len(pool) :]


def _coverage(done: int, total: int, sem: Semantic) -> dict[str, Any]:
    out: dict[str, Any] = {"chunks_with_vectors": done, "chunks": total, "complete": done >= total}
    if done < total and (embedding := sem.embedding()):
        out["embedding"] = embedding  # "in the background" (the rest follow by themselves), "interrupted"
    return out
