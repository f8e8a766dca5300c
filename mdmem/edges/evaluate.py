"""Retrieval-quality harness (``mdmem eval``): metrics, the results table, and the runs.

Metrics over ranked note ids and the table are pure; the datasets (LoCoMo, the gold set, public
corpora) and the notes built from them are in ``eval_data``. The runs build one vault per
conversation (or a corpus's checkout) under a cache directory (reused across runs, so the sidecar
indexes persist), send every query through each retrieval mode and collect one row per mode and group.
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import sys
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from ..core.eval_data import (
    Conversation,
    Corpus,
    Query,
    gold_as_of,
    load_gold,
    locomo_queries,
    resolve_answers,
    session_notes,
    turn_notes,
)

if TYPE_CHECKING:
    from ..api.vault import Vault

LIMIT = 10  # every mode is asked for this many hits; all metrics are @10 or less
VAULT_MODES = ("search", "vsearch", "query", "query-relevance", "recall")  # query-relevance: query without priors
# mode → (Vault method, extra keyword arguments): "query-relevance" is query without priors, the
# row that shows what the priors cost or gain.
ALL_MODES = ("grep", *VAULT_MODES)

# ---------------------------------------------------------------------------------------------
# metrics (pure)


def recall_at(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """|top-k ∩ relevant| / |relevant| (0 when nothing is relevant)."""
    if not relevant:
        return 0.0
    return len(set(ranked[:k]) & set(relevant)) / len(set(relevant))


def hit_at(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """1 when any relevant item is in the top k (a question that any one of several notes answers)."""
    return 1.0 if set(ranked[:k]) & set(relevant) else 0.0


def first_hit_ndcg(ranked: Sequence[str], relevant: Collection[str], k: int = 10) -> float:
    """nDCG@k when one relevant item is all the question needs: 1 / log2(1 + rank of the first)."""
    for i, item in enumerate(ranked[:k], 1):
        if item in relevant:
            return 1.0 / math.log2(i + 1)
    return 0.0


def reciprocal_rank(ranked: Sequence[str], relevant: Collection[str]) -> float:
    """1 / rank of the first relevant item in the ranked list, 0 if there is none."""
    for i, item in enumerate(ranked, 1):
        if item in relevant:
            return 1.0 / i
    return 0.0


def ndcg_at(ranked: Sequence[str], gains: Mapping[str, float], k: int = 10) -> float:
    """nDCG@k with gain = grade (linear gains; a grade-1-only set is binary nDCG)."""
    dcg = sum(gains.get(item, 0.0) / math.log2(i + 1) for i, item in enumerate(ranked[:k], 1))
    ideal = sorted((g for g in gains.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, 1))
    return dcg / idcg if idcg > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one mode returned for one query, and how long it took."""

    query: Query
    ranked: tuple[str, ...]
    seconds: float
    silenced: bool = False  # the mode said nothing in the vault matches well (hits kept for the metrics)


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the results table: averages over the answerable queries of a group."""

    dataset: str
    level: str
    mode: str
    group: str
    n: int
    r1: float | None
    r5: float | None
    r10: float | None
    mrr: float | None
    ndcg10: float | None
    ms_per_query: float
    quiet: float | None = None  # share of no-answer queries that returned no hit or said nothing matches well
    n_noanswer: int = 0
    leak: float | None = None  # share of queries with excluded notes that showed one in the top 10
    n_excluded: int = 0
    muted: float | None = None  # share of answerable queries wrongly said to have no good match


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def summarize(outcomes: Sequence[Outcome], *, dataset: str, level: str, mode: str, group: str) -> Row:
    """Average the metrics of ``outcomes``; no-answer and excluded-note queries are scored apart."""
    answerable = [o for o in outcomes if o.query.relevant]
    noanswer = [o for o in outcomes if not o.query.relevant]
    guarded = [o for o in outcomes if o.query.excluded]

    def avg(metric: Callable[[Outcome], float]) -> float | None:
        return _mean([metric(o) for o in answerable])

    def rec(o: Outcome, k: int) -> float:
        return (hit_at if o.query.any_of else recall_at)(o.ranked, o.query.relevant, k)

    return Row(
        dataset=dataset,
        level=level,
        mode=mode,
        group=group,
        n=len(answerable),
        r1=avg(lambda o: rec(o, 1)),
        r5=avg(lambda o: rec(o, 5)),
        r10=avg(lambda o: rec(o, 10)),
        mrr=avg(lambda o: reciprocal_rank(o.ranked, o.query.relevant)),
        ndcg10=avg(
            lambda o: (
                first_hit_ndcg(o.ranked, o.query.relevant)
                if o.query.any_of
                else ndcg_at(o.ranked, o.query.relevant, 10)
            )
        ),
        ms_per_query=1000 * (_mean([o.seconds for o in outcomes]) or 0.0),
        quiet=_mean([1.0 if not o.ranked or o.silenced else 0.0 for o in noanswer]),
        n_noanswer=len(noanswer),
        leak=_mean([1.0 if set(o.ranked[:10]) & set(o.query.excluded) else 0.0 for o in guarded]),
        n_excluded=len(guarded),
        muted=_mean([1.0 if o.silenced else 0.0 for o in answerable]),
    )


def summarize_groups(
    outcomes: Sequence[Outcome], *, dataset: str, level: str, mode: str, by_group: bool, order: Sequence[str] = ()
) -> list[Row]:
    """The ``all`` row, then (with ``by_group``) one row per group: those in ``order`` first, the
    rest in order of first appearance."""
    rows = [summarize(outcomes, dataset=dataset, level=level, mode=mode, group="all")]
    if by_group:
        seen = dict.fromkeys(o.query.group for o in outcomes)
        groups = [g for g in order if g in seen] + [g for g in seen if g not in order]
        for g in groups:
            rows.append(
                summarize([o for o in outcomes if o.query.group == g], dataset=dataset, level=level, mode=mode, group=g)
            )
    return rows


def _fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:.3f}"


def format_table(rows: Sequence[Row]) -> str:
    """The rows as one aligned text table (quiet/leak columns only when some row has them)."""
    extra = any(r.n_noanswer or r.n_excluded for r in rows)
    head = ["dataset", "level", "group", "mode", "R@1", "R@5", "R@10", "MRR", "nDCG@10", "n", "ms/q"]
    if extra:
        head += ["quiet", "leak", "muted"]
    body = []
    for r in rows:
        cells = [
            r.dataset,
            r.level,
            r.group,
            r.mode,
            _fmt(r.r1),
            _fmt(r.r5),
            _fmt(r.r10),
            _fmt(r.mrr),
            _fmt(r.ndcg10),
            str(r.n),
            f"{r.ms_per_query:.1f}",
        ]
        if extra:
            cells += [
                f"{_fmt(r.quiet)} /{r.n_noanswer}" if r.n_noanswer else "",
                f"{_fmt(r.leak)} /{r.n_excluded}" if r.n_excluded else "",
                _fmt(r.muted) if r.muted else "",
            ]
        body.append(cells)
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    left = 4  # text columns are left-aligned, numbers right-aligned

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    out = [line(head), "  ".join("-" * w for w in widths)]
    prev: tuple[str, str, str] | None = None
    for r, cells in zip(rows, body, strict=True):
        key = (r.dataset, r.level, r.group)
        if prev is not None and key[:2] != prev[:2]:
            out.append("")
        prev = key
        out.append(line(cells))
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# retrieval modes

Searcher = Callable[[str], tuple[list[str], bool]]  # query text → ranked note ids (at most LIMIT), silenced


def query_words(text: str) -> list[str]:
    """The distinct lower-cased words of a query, stripped of surrounding punctuation."""
    words = (w.strip(".,;:!?\"'()[]{}<>«»“”‘’`") for w in text.lower().split())
    return list(dict.fromkeys(w for w in words if w))


def grep_rank(text: str, docs: Sequence[tuple[str, str, str]], limit: int = LIMIT, key: str = "id") -> list[str]:
    """Baseline: rank (path, id, lower-cased file text) docs by how many distinct query words occur
    in them as substrings, ties by path; docs with no word are not returned. Returns their ids (or
    paths, ``key="path"``)."""
    words = query_words(text)
    scored = []
    for path, nid, body in docs:
        n = sum(1 for w in words if w in body)
        if n:
            scored.append((-n, path, nid))
    scored.sort()
    return [nid if key == "id" else path for _, path, nid in scored[:limit]]


def grep_docs(vault: Vault) -> list[tuple[str, str, str]]:
    """Every note of the vault as (path, id, lower-cased file text)."""
    docs = []
    for rel in vault.notes():
        note = vault.read(rel)
        docs.append((rel, note.note.id, note.text.lower()))
    return docs


def make_searcher(vault: Vault, mode: str, key: str = "id") -> Searcher:
    """A function that runs ``mode`` on ``vault``; it names hits by id (or by path, ``key="path"``)."""
    if mode == "grep":
        docs = grep_docs(vault)
        return lambda text: (grep_rank(text, docs, LIMIT, key), False)
    from ..api.reader import Ask, Mode

    def run(text: str) -> tuple[list[str], bool]:
        if mode == "query-relevance":
            hits = vault.query(text, LIMIT, priors=False)
        else:
            hits = Ask(cast(Mode, mode), text, LIMIT).of(vault)
        return [h.id if key == "id" else h.path for h in hits], getattr(hits, "info", {}).get("relevant") is False

    return run


# ---------------------------------------------------------------------------------------------
# building the vaults (I/O)


def file_sha(path: Path) -> str:
    """sha256 of a file's bytes, hex."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mdmem" / "eval"


def sync_tree(root: Path, files: Mapping[str, str | bytes]) -> int:
    """Make ``root`` hold exactly ``files`` (hidden folders such as .mdmem/ are left alone).

    Only files whose bytes differ are written, so an unchanged vault keeps its index fresh and a
    changed renderer or data file is picked up by an incremental reindex. Returns files changed.
    """
    changed = 0
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        data = content.encode("utf-8") if isinstance(content, str) else content
        p = root / rel
        try:
            if p.read_bytes() == data:
                continue
        except OSError:
            p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        changed += 1
    for dirpath, dirnames, filenames in os.walk(root, topdown=True):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            rel = Path(dirpath, name).relative_to(root).as_posix()
            if rel not in files:
                os.unlink(os.path.join(dirpath, name))
                changed += 1
    return changed


def read_tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` outside hidden folders: relative path → bytes."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root, topdown=True):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.startswith("."):
                continue
            p = Path(dirpath, name)
            out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


@dataclass(slots=True)
class Suite:
    """One dataset at one level: vault folders, each with the queries to run in it."""

    dataset: str
    level: str
    vaults: list[tuple[Path, list[Query]]] = field(default_factory=list)
    as_of: str | None = None  # the dataset's "today" (gold: queries.yaml's as_of): $MDMEM_NOW while it runs
    key: str = "id"  # how the queries name notes: by id, or by path (a corpus's questions)

    @property
    def n_queries(self) -> int:
        return sum(len(qs) for _, qs in self.vaults)


def build_locomo(convs: Sequence[Conversation], cache: Path, levels: Sequence[str], rebuild: bool) -> list[Suite]:
    """Write (or refresh) one vault per conversation and level under ``cache``."""
    render = {"turn": turn_notes, "session": session_notes}
    suites = []
    for level in levels:
        suite = Suite("locomo", level)
        for conv in convs:
            folder = cache / level / conv.sample_id
            if rebuild and folder.exists():
                shutil.rmtree(folder)
            sync_tree(folder, render[level](conv))
            suite.vaults.append((folder, locomo_queries(conv, level)))
        suites.append(suite)
    return suites


def build_gold(gold: Path, cache: Path, rebuild: bool) -> Suite:
    """Copy the gold vault into the cache (never writing into ``gold``) with its queries."""
    folder = cache / f"gold-{hashlib.sha256(str(gold.resolve()).encode()).hexdigest()[:12]}" / "vault"
    if rebuild and folder.exists():
        shutil.rmtree(folder)
    sync_tree(folder, read_tree(gold / "vault"))
    return Suite("gold", "note", [(folder, load_gold(gold))], as_of=gold_as_of(gold))


def build_corpus(corpus: Corpus, source: Path, cache: Path, rebuild: bool) -> list[Suite]:
    """Check the corpus out of its repository at ``source`` into the cache (``source`` is only
    read), with its ``mdmem.toml``; two suites over that vault: the questions to tune on, and those
    held out."""
    from ..adapters.git import sparse_clone
    from ..core.errors import MdmemError

    folder = cache / f"corpus-{corpus.slug}-{corpus.commit[:12]}" / "vault"
    if rebuild and folder.parent.exists():
        shutil.rmtree(folder.parent)
    sparse_clone(source, folder, corpus.commit, list(corpus.sparse))
    toml = folder / "mdmem.toml"
    if corpus.config:
        if not toml.is_file() or toml.read_text(encoding="utf-8") != corpus.config:
            toml.write_text(corpus.config, encoding="utf-8")
    elif toml.is_file() and "mdmem.toml" not in _tracked(folder):
        toml.unlink()
    queries, problems = resolve_answers(corpus.questions, note_paths(folder))
    if problems:
        raise MdmemError(
            f"{corpus.name} at {corpus.commit[:12]}: {len(problems)} answers name no single note: "
            f"{'; '.join(problems[:5])}{' …' if len(problems) > 5 else ''}. Fix the questions file."
        )
    tune = [q for q in queries if q.id not in corpus.heldout]
    held = [q for q in queries if q.id in corpus.heldout]
    return [
        Suite(corpus.slug, level, [(folder, qs)], key="path") for level, qs in (("tune", tune), ("heldout", held)) if qs
    ]


def self_suite(folder: Path, dataset: str, *, per_kind: int, seed: int = 0) -> Suite:
    """The queries the vault at ``folder`` provides itself (``core.self_queries``), as a suite of
    level "self" whose queries name notes by path; reads the vault's notes and its link graph. A note
    retrieval hides by default (not active, snoozed, with an end of validity, superseded) asks nothing."""
    from ..api.vault import Vault
    from ..core.self_queries import SelfNote, anchor_map, self_queries

    with Vault.open(folder) as v:
        v.reindex()
        graph = v.graph()
        links: list[tuple[str, str, str]] = []
        notes = []
        replaced: set[str] = set()  # a superseded note ranks below its successor by design
        for rel in v.notes():
            try:
                n = v.get(rel)
            except Exception:  # noqa: BLE001 - a note that does not parse offers no queries
                continue
            if n.supersedes:
                replaced.add(graph.resolve(n.supersedes, rel)[0] or "")
            if n.status != "active" or n.snoozed_until or n.valid_until:
                continue  # retrieval hides it (forgotten, archived, snoozed, expiring) by design
            for e in graph.out.get(rel, []):  # a wikilink's label, a markdown link's words
                if e.dst and e.label:
                    links.append((rel, e.dst, e.label))
            notes.append(
                SelfNote(
                    path=rel,
                    title=n.title,
                    aliases=tuple(a for a in n.aliases if isinstance(a, str)),
                    headings=tuple(h.text for h in n.headings),
                    text=n.text,
                    names=(Path(rel).stem,),
                )
            )
    anchors = anchor_map(links)
    notes = [replace(n, anchors=tuple(anchors.get(n.path, ()))) for n in notes if n.path not in replaced]
    return Suite(dataset, "self", [(folder, self_queries(notes, per_kind=per_kind, seed=seed))], key="path")


def note_paths(root: Path) -> list[str]:
    """The markdown files under ``root`` outside hidden folders, as relative POSIX paths."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root, topdown=True):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        out += [Path(dirpath, n).relative_to(root).as_posix() for n in filenames if n.endswith(".md")]
    return out


def _tracked(folder: Path) -> set[str]:
    """The files git tracks at the top of ``folder`` (so a corpus's own mdmem.toml is never removed)."""
    import subprocess

    done = subprocess.run(["git", "ls-files"], cwd=folder, capture_output=True, text=True)
    return {line for line in done.stdout.splitlines() if "/" not in line}


# ---------------------------------------------------------------------------------------------
# running


@contextmanager
def _progress(items: Sequence[Any], label: str) -> Iterator[Iterable[Any]]:
    """A progress bar on stderr when it is a terminal; the plain items otherwise."""
    if sys.stderr.isatty():
        with click.progressbar(items, label=label, file=sys.stderr) as bar:
            yield bar
    else:
        with nullcontext(items) as plain:
            yield plain


VECTOR_MODES = frozenset({"vsearch", "query", "query-relevance", "recall"})  # modes that need every note embedded first


Report = Callable[[str], Callable[[int, int], None]]  # a label → a (done, total) callback: lines for a pipe


def index_suite(suite: Suite, modes: Collection[str] = (), report: Report | None = None) -> float:
    """Bring every vault's index up to date (and its vectors, for vector modes); returns seconds.
    ``report``: progress for a stderr that is no terminal (a corpus's first embedding takes minutes)."""
    from ..api.vault import Vault

    started = time.perf_counter()
    vectors = bool(VECTOR_MODES & set(modes))
    with _progress(suite.vaults, f"indexing {suite.dataset}/{suite.level}") as bar, _embedding_here(vectors):
        for folder, _ in bar:
            with Vault.open(folder) as v:
                v.reindex()
                if vectors and callable(getattr(v, "embed", None)):
                    # cached in the vault's .mdmem/, so later runs embed nothing
                    where = "" if folder.name == "vault" else f" {folder.name}"  # a LoCoMo conversation's
                    v.embed(report(f"embedding {suite.dataset}/{suite.level}{where}") if report else None)
    return time.perf_counter() - started


@contextmanager
def _embedding_here(on: bool) -> Iterator[None]:
    """While ``on`` (eval embeds every vault itself, right after its reindex), writes give chunks no
    vectors by themselves: the reindex would otherwise start the background job on the very chunks
    the embed here is about to do, and each would do all of them (a hub's 6-minute embedding twice)."""
    with _environ("MDMEM_AUTO_EMBED", "0" if on else None):
        yield


def run_suite(suite: Suite, modes: Sequence[str], report: Report | None = None) -> dict[str, list[Outcome]]:
    """Run every query of the suite through each mode, within its own vault (``report``: as in
    ``index_suite``)."""
    from ..api.vault import Vault

    results: dict[str, list[Outcome]] = {m: [] for m in modes}
    label = f"querying {suite.dataset}/{suite.level}"
    with _clock(suite.as_of), _counting(suite.n_queries * len(modes), label, report) as step:
        for folder, queries in suite.vaults:
            with Vault.open(folder) as v:
                for mode in modes:
                    search = make_searcher(v, mode, suite.key)
                    for q in queries:
                        t0 = time.perf_counter()
                        ranked, silenced = search(q.text)
                        results[mode].append(Outcome(q, tuple(ranked[:LIMIT]), time.perf_counter() - t0, silenced))
                        step()
    return results


@contextmanager
def _counting(total: int, label: str, report: Report | None = None) -> Iterator[Callable[[], None]]:
    """A progress bar of ``total`` steps on stderr when it is a terminal (a step per query asked):
    a vault's self-generated queries are a thousand questions in one vault; else ``report``'s lines."""
    if not sys.stderr.isatty():
        if report is None:
            yield lambda: None
            return
        update, done = report(label), [0]

        def step() -> None:
            done[0] += 1
            update(done[0], total)

        yield step
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield lambda: bar.update(1)


@contextmanager
def _clock(as_of: str | None) -> Iterator[None]:
    """$MDMEM_NOW = ``as_of`` for the block (nothing when None): the gold grades of "last month",
    "yesterday" and of what is snoozed or expired hold at the set's own today, not the machine's."""
    with _environ("MDMEM_NOW", as_of):
        yield


@contextmanager
def _environ(name: str, value: str | None) -> Iterator[None]:
    """$``name`` = ``value`` for the block, restored after it (nothing is set when ``value`` is None)."""
    if value is None:
        yield
        return
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def unknown_ids(suite: Suite) -> list[str]:
    """Relevant or excluded ids of the gold queries that no note in the vault carries."""
    from ..api.vault import Vault

    missing: list[str] = []
    for folder, queries in suite.vaults:
        with Vault.open(folder) as v:
            ids = {doc[1] for doc in grep_docs(v)}
        for q in queries:
            missing += [f"{q.id}:{i}" for i in (*q.relevant, *q.excluded) if i not in ids]
    return missing
