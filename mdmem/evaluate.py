"""Retrieval-quality harness (``mdmem eval``): LoCoMo and the project's gold set, scored per mode.

The core is pure: metrics over ranked note ids, the LoCoMo loader and evidence normalisation, and
the note renderers that turn a conversation into the notes an agent that captured it would write.
The shell builds one vault per conversation under a cache directory (reused across runs, so the
sidecar indexes persist), runs every query through each retrieval mode and prints one table.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from .vault import Vault

LIMIT = 10  # every mode is asked for this many hits; all metrics are @10 or less
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
VAULT_MODES = ("search", "vsearch", "query", "query-relevance", "recall")  # Vault methods (text, limit=LIMIT)
# mode → (Vault method, extra keyword arguments): "query-relevance" is query without priors, the
# row that shows what the priors cost or gain.
MODE_CALLS: dict[str, tuple[str, dict[str, Any]]] = {"query-relevance": ("query", {"priors": False})}
ALL_MODES = ("grep", *VAULT_MODES)
DEFAULT_LOCOMO = Path("..") / "shared" / "data" / "locomo10.json"
DEFAULT_GOLD = Path("benchmarks") / "gold"

# ---------------------------------------------------------------------------------------------
# metrics (pure)


def recall_at(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """|top-k ∩ relevant| / |relevant| (0 when nothing is relevant)."""
    if not relevant:
        return 0.0
    return len(set(ranked[:k]) & set(relevant)) / len(set(relevant))


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
class Query:
    """One judged query: relevant note ids with grades, notes that must not show up, a group."""

    id: str
    text: str
    relevant: Mapping[str, int]
    group: str = ""
    excluded: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one mode returned for one query, and how long it took."""

    query: Query
    ranked: tuple[str, ...]
    seconds: float


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
    quiet: float | None = None  # share of no-answer queries that returned no hit
    n_noanswer: int = 0
    leak: float | None = None  # share of queries with excluded notes that showed one in the top 10
    n_excluded: int = 0


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def summarize(outcomes: Sequence[Outcome], *, dataset: str, level: str, mode: str, group: str) -> Row:
    """Average the metrics of ``outcomes``; no-answer and excluded-note queries are scored apart."""
    answerable = [o for o in outcomes if o.query.relevant]
    noanswer = [o for o in outcomes if not o.query.relevant]
    guarded = [o for o in outcomes if o.query.excluded]

    def avg(metric: Callable[[Outcome], float]) -> float | None:
        return _mean([metric(o) for o in answerable])

    return Row(
        dataset=dataset, level=level, mode=mode, group=group, n=len(answerable),
        r1=avg(lambda o: recall_at(o.ranked, o.query.relevant, 1)),
        r5=avg(lambda o: recall_at(o.ranked, o.query.relevant, 5)),
        r10=avg(lambda o: recall_at(o.ranked, o.query.relevant, 10)),
        mrr=avg(lambda o: reciprocal_rank(o.ranked, o.query.relevant)),
        ndcg10=avg(lambda o: ndcg_at(o.ranked, o.query.relevant, 10)),
        ms_per_query=1000 * (_mean([o.seconds for o in outcomes]) or 0.0),
        quiet=_mean([1.0 if not o.ranked else 0.0 for o in noanswer]), n_noanswer=len(noanswer),
        leak=_mean([1.0 if set(o.ranked[:10]) & set(o.query.excluded) else 0.0 for o in guarded]),
        n_excluded=len(guarded),
    )


def summarize_groups(outcomes: Sequence[Outcome], *, dataset: str, level: str, mode: str,
                     by_group: bool, order: Sequence[str] = ()) -> list[Row]:
    """The ``all`` row, then (with ``by_group``) one row per group: those in ``order`` first, the
    rest in order of first appearance."""
    rows = [summarize(outcomes, dataset=dataset, level=level, mode=mode, group="all")]
    if by_group:
        seen = dict.fromkeys(o.query.group for o in outcomes)
        groups = [g for g in order if g in seen] + [g for g in seen if g not in order]
        for g in groups:
            rows.append(summarize([o for o in outcomes if o.query.group == g],
                                  dataset=dataset, level=level, mode=mode, group=g))
    return rows


def _fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:.3f}"


def format_table(rows: Sequence[Row]) -> str:
    """The rows as one aligned text table (quiet/leak columns only when some row has them)."""
    extra = any(r.n_noanswer or r.n_excluded for r in rows)
    head = ["dataset", "level", "group", "mode", "R@1", "R@5", "R@10", "MRR", "nDCG@10", "n", "ms/q"]
    if extra:
        head += ["quiet", "leak"]
    body = []
    for r in rows:
        cells = [r.dataset, r.level, r.group, r.mode, _fmt(r.r1), _fmt(r.r5), _fmt(r.r10), _fmt(r.mrr),
                 _fmt(r.ndcg10), str(r.n), f"{r.ms_per_query:.1f}"]
        if extra:
            cells += [f"{_fmt(r.quiet)} /{r.n_noanswer}" if r.n_noanswer else "",
                      f"{_fmt(r.leak)} /{r.n_excluded}" if r.n_excluded else ""]
        body.append(cells)
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    left = 4  # text columns are left-aligned, numbers right-aligned

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

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
# LoCoMo (pure)

_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_SESSION_KEY = re.compile(r"session_(\d+)")
_MONTHS = {m: i for i, m in enumerate(
    "january february march april may june july august september october november december".split(), 1)}
_SESSION_DATE = re.compile(
    r"\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*", re.IGNORECASE)


def normalize_evidence(raw: Iterable[Any]) -> tuple[str, ...]:
    """LoCoMo evidence ids as clean ``D<session>:<turn>`` ids, in order, without duplicates.

    Splits "D8:6; D9:17" and space-separated lists, mends "D:11:26" → D11:26 and "D30:05" → D30:5,
    and drops a bare "D" (data/README.md).
    """
    out: dict[str, None] = {}
    for item in raw:
        for piece in re.split(r"[;,\s]+", str(item)):
            m = _EVIDENCE.fullmatch(piece)
            if m:
                out.setdefault(f"D{int(m[1])}:{int(m[2])}", None)
    return tuple(out)


def parse_session_date(text: str) -> str:
    """"1:56 pm on 8 May, 2023" → "2023-05-08T13:56:00Z" (LoCoMo times carry no zone)."""
    m = _SESSION_DATE.fullmatch(text)
    month = _MONTHS.get(m[5].lower()) if m else None
    if m is None or month is None:
        raise ValueError(f"not a LoCoMo session date: {text!r}")
    hour, minute = int(m[1]) % 12, int(m[2])
    if m[3].lower() == "p":
        hour += 12
    return f"{int(m[6]):04d}-{month:02d}-{int(m[4]):02d}T{hour:02d}:{minute:02d}:00Z"


def session_of(dia_id: str) -> int:
    """The session number of a dialogue id: "D8:6" → 8."""
    return int(dia_id[1:].split(":", 1)[0])


@dataclass(frozen=True, slots=True)
class Turn:
    """One utterance; photo turns carry the caption of the shared image."""

    dia_id: str
    speaker: str
    text: str
    caption: str | None = None


@dataclass(frozen=True, slots=True)
class Session:
    """A dated session of a conversation."""

    number: int
    date_time: str  # as LoCoMo writes it: "1:56 pm on 8 May, 2023"
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Question:
    """A scorable question: categories 1–4 with at least one evidence id."""

    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    """One LoCoMo sample: two speakers, their sessions and the questions about them."""

    sample_id: str
    speakers: tuple[str, ...]
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]


def parse_locomo(data: Sequence[Mapping[str, Any]]) -> list[Conversation]:
    """The conversations of a locomo10.json document, keeping only scorable questions."""
    convs = []
    for sample in data:
        c = sample["conversation"]
        sessions = []
        for key, turns in c.items():
            m = _SESSION_KEY.fullmatch(key)
            if not m or not isinstance(turns, list):
                continue  # session_N_date_time, speakers, or a dated session that has no turns
            sessions.append(Session(
                number=int(m[1]), date_time=str(c.get(f"{key}_date_time", "")),
                turns=tuple(Turn(dia_id=normalize_evidence([t["dia_id"]])[0], speaker=t["speaker"],
                                 text=t.get("text", ""), caption=t.get("blip_caption")) for t in turns),
            ))
        questions = []
        for qa in sample.get("qa", []):
            cat = qa.get("category")
            evidence = normalize_evidence(qa.get("evidence") or [])
            if cat in CATEGORIES and evidence:
                questions.append(Question(text=str(qa["question"]), category=int(cat), evidence=evidence))
        convs.append(Conversation(
            sample_id=str(sample["sample_id"]),
            speakers=tuple(s for s in (c.get("speaker_a"), c.get("speaker_b")) if s),
            sessions=tuple(sorted(sessions, key=lambda s: s.number)), questions=tuple(questions),
        ))
    return convs


def _turn_text(t: Turn) -> str:
    if not t.caption:
        return t.text
    cap = t.caption.strip()
    if cap.lower().startswith(("a photo", "a picture")):
        shared = f"[shares {cap}]"
    else:
        shared = f"[shares a photo: {cap}]"
    return f"{t.text} {shared}".strip()


def _date_label(date_time: str) -> str:
    """A short human date for titles: "1:56 pm on 8 May, 2023" → "8 May 2023"."""
    m = _SESSION_DATE.fullmatch(date_time)
    return f"{int(m[4])} {m[5]} {m[6]}" if m else date_time


def _iso_or_none(date_time: str) -> str | None:
    try:
        return parse_session_date(date_time)
    except ValueError:
        return None


def session_id(number: int) -> str:
    """The note id of a session note."""
    return f"session-{number}"


def turn_notes(conv: Conversation) -> dict[str, str]:
    """One note per turn, as an agent capturing the chat would write it: path → text."""
    from .note import render_note

    notes = {}
    for s in conv.sessions:
        when = _date_label(s.date_time)
        previous = None
        for t in s.turns:
            sess, turn = t.dia_id[1:].split(":")
            meta = {"id": t.dia_id, "title": f"{t.speaker}, {when}" if when else t.speaker,
                    "type": "conversation", "created": _iso_or_none(s.date_time), "entities": [t.speaker]}
            if previous:  # the chat's order, as a typed link to the turn before
                meta["links"] = [{"type": "follows", "target": previous}]
            previous = t.dia_id
            notes[f"notes/session-{int(sess):02d}/turn-{int(turn):03d}.md"] = render_note(meta, _turn_text(t))
    return notes


def session_notes(conv: Conversation) -> dict[str, str]:
    """One note per session: every turn as a "Speaker: text" line."""
    from .note import render_note

    notes = {}
    previous = None
    for s in conv.sessions:
        when = _date_label(s.date_time)
        speakers = list(dict.fromkeys([*conv.speakers, *(t.speaker for t in s.turns)]))
        meta = {"id": session_id(s.number),
                "title": f"Session {s.number} with {' and '.join(speakers)}" + (f", {when}" if when else ""),
                "type": "conversation", "created": _iso_or_none(s.date_time), "entities": speakers}
        if previous:
            meta["links"] = [{"type": "follows", "target": previous}]
        previous = meta["id"]
        body = "\n".join(f"{t.speaker}: {_turn_text(t)}" for t in s.turns)
        notes[f"notes/session-{s.number:02d}.md"] = render_note(meta, body)
    return notes


def locomo_queries(conv: Conversation, level: str) -> list[Query]:
    """The conversation's questions with their relevant turn (or session) note ids."""
    out = []
    for i, q in enumerate(conv.questions):
        if level == "turn":
            relevant = {e: 1 for e in q.evidence}
        else:
            relevant = {session_id(session_of(e)): 1 for e in q.evidence}
        out.append(Query(id=f"{conv.sample_id}#{i}", text=q.text, relevant=relevant,
                         group=CATEGORIES[q.category]))
    return out


def load_locomo(path: Path) -> list[Conversation]:
    """Read and parse a locomo10.json file."""
    with open(path, encoding="utf-8") as fh:
        return parse_locomo(json.load(fh))


# ---------------------------------------------------------------------------------------------
# gold set


def parse_gold(data: Any) -> list[Query]:
    """Queries from queries.yaml: a list, or a mapping holding the list (under ``queries``)."""
    if isinstance(data, Mapping):
        items = data.get("queries")
        if items is None:
            items = next((v for v in data.values() if isinstance(v, list)), [])
    else:
        items = data or []
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) or not item.get("query"):
            continue
        rel = item.get("relevant") or {}
        if isinstance(rel, Mapping):
            relevant = {str(k): int(v) for k, v in rel.items() if v}
        else:  # a plain list of ids: all grade 1
            relevant = {str(k): 1 for k in rel}
        out.append(Query(id=str(item.get("id", f"q{i + 1}")), text=str(item["query"]), relevant=relevant,
                         group=str(item.get("kind") or "other"),
                         excluded=tuple(str(x) for x in item.get("excluded") or ())))
    return out


def load_gold(folder: Path) -> list[Query]:
    """The gold queries in ``folder/queries.yaml``."""
    import yaml

    with open(folder / "queries.yaml", encoding="utf-8") as fh:
        return parse_gold(yaml.safe_load(fh))


# ---------------------------------------------------------------------------------------------
# retrieval modes

Searcher = Callable[[str], list[str]]  # query text → ranked note ids (at most LIMIT)


def query_words(text: str) -> list[str]:
    """The distinct lower-cased words of a query, stripped of surrounding punctuation."""
    words = (w.strip(".,;:!?\"'()[]{}<>«»“”‘’`") for w in text.lower().split())
    return list(dict.fromkeys(w for w in words if w))


def grep_rank(text: str, docs: Sequence[tuple[str, str, str]], limit: int = LIMIT) -> list[str]:
    """Baseline: rank (path, id, lower-cased file text) docs by how many distinct query words occur
    in them as substrings, ties by path; docs with no word are not returned."""
    words = query_words(text)
    scored = []
    for path, nid, body in docs:
        n = sum(1 for w in words if w in body)
        if n:
            scored.append((-n, path, nid))
    scored.sort()
    return [nid for _, _, nid in scored[:limit]]


def grep_docs(vault: Vault) -> list[tuple[str, str, str]]:
    """Every note of the vault as (path, id, lower-cased file text)."""
    docs = []
    for rel in sorted(vault.scan()):
        note, _, raw = vault.read_note(rel)
        docs.append((rel, note.id, raw.decode("utf-8", errors="replace").lower()))
    return docs


def available_modes(requested: Sequence[str]) -> tuple[list[str], list[str]]:
    """Split modes into those this mdmem can run and those its Vault lacks (yet)."""
    from .vault import Vault

    ok, missing = [], []
    for m in requested:
        name = MODE_CALLS.get(m, (m, {}))[0]
        (ok if m == "grep" or callable(getattr(Vault, name, None)) else missing).append(m)
    return ok, missing


def make_searcher(vault: Vault, mode: str) -> Searcher:
    """A function that runs ``mode`` on ``vault``."""
    if mode == "grep":
        docs = grep_docs(vault)
        return lambda text: grep_rank(text, docs, LIMIT)
    name, extra = MODE_CALLS.get(mode, (mode, {}))
    method = getattr(vault, name)
    return lambda text: [h.id for h in method(text, limit=LIMIT, **extra)]


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

    @property
    def n_queries(self) -> int:
        return sum(len(qs) for _, qs in self.vaults)


def build_locomo(convs: Sequence[Conversation], cache: Path, levels: Sequence[str],
                 rebuild: bool) -> list[Suite]:
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
    return Suite("gold", "note", [(folder, load_gold(gold))])


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


def index_suite(suite: Suite, modes: Collection[str] = ()) -> float:
    """Bring every vault's index up to date (and its vectors, for vector modes); returns seconds."""
    from .vault import Vault

    started = time.perf_counter()
    with _progress(suite.vaults, f"indexing {suite.dataset}/{suite.level}") as bar:
        for folder, _ in bar:
            with Vault.open(folder) as v:
                v.reindex()
                if VECTOR_MODES & set(modes) and callable(getattr(v, "embed", None)):
                    v.embed()  # cached in the vault's .mdmem/, so later runs embed nothing
    return time.perf_counter() - started


def run_suite(suite: Suite, modes: Sequence[str]) -> dict[str, list[Outcome]]:
    """Run every query of the suite through each mode, within its own vault."""
    from .vault import Vault

    results: dict[str, list[Outcome]] = {m: [] for m in modes}
    with _progress(suite.vaults, f"querying {suite.dataset}/{suite.level}") as bar:
        for folder, queries in bar:
            with Vault.open(folder) as v:
                for mode in modes:
                    search = make_searcher(v, mode)
                    for q in queries:
                        t0 = time.perf_counter()
                        ranked = search(q.text)
                        results[mode].append(Outcome(q, tuple(ranked[:LIMIT]), time.perf_counter() - t0))
    return results


def unknown_ids(suite: Suite) -> list[str]:
    """Relevant or excluded ids of the gold queries that no note in the vault carries."""
    from .vault import Vault

    missing: list[str] = []
    for folder, queries in suite.vaults:
        with Vault.open(folder) as v:
            ids = {doc[1] for doc in grep_docs(v)}
        for q in queries:
            missing += [f"{q.id}:{i}" for i in (*q.relevant, *q.excluded) if i not in ids]
    return missing


def _path_option(value: str | None, default: Path) -> Path | None:
    """An explicit path, the default if it exists, or None ("none" turns a dataset off)."""
    if value is not None:
        return None if value.lower() in ("", "none", "-") else Path(value)
    return default if default.exists() else None


@click.command("eval")
@click.option("--locomo", "locomo_opt", metavar="PATH",
              help=f"LoCoMo locomo10.json [default: {DEFAULT_LOCOMO} if it exists; 'none' skips it].")
@click.option("--gold", "gold_opt", metavar="PATH",
              help=f"Gold set folder (queries.yaml + vault/) [default: {DEFAULT_GOLD} if it exists; "
                   "'none' skips it].")
@click.option("--level", type=click.Choice(["turn", "session", "both"]), default="both", show_default=True,
              help="LoCoMo: one note per turn, per session, or both.")
@click.option("--modes", default=",".join(ALL_MODES), show_default=True,
              help="Comma-separated retrieval modes: grep (baseline), search, vsearch, query, "
                   "query-relevance (query without priors), recall.")
@click.option("--by-category", is_flag=True, help="Add a row per LoCoMo category (multi-hop, temporal, …).")
@click.option("--by-kind", is_flag=True, help="Add a row per gold query kind.")
@click.option("--conversations", type=click.IntRange(min=1), metavar="N",
              help="Only the first N LoCoMo conversations (for quick runs).")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Where the evaluation vaults and their indexes live [default: ~/.cache/mdmem/eval].")
@click.option("--rebuild", is_flag=True, help="Rewrite the evaluation vaults and their indexes from scratch.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def eval_command(locomo_opt: str | None, gold_opt: str | None, level: str, modes: str, by_category: bool,
                 by_kind: bool, conversations: int | None, cache_dir: Path | None, rebuild: bool,
                 as_json: bool) -> None:
    """Measure retrieval quality: recall@k, MRR and nDCG@10 per mode on LoCoMo and the gold set.

    \b
    Each LoCoMo question is searched only within its own conversation, written as one note per
    turn (--level turn) or per session (--level session); relevant notes are its evidence.
    The gold set's no-answer queries give the quiet rate (share with no hit at all) and its
    queries with excluded notes the leak rate (share showing one in the top 10).
    The vaults are built once under the cache directory and reused; --rebuild remakes them.
    """
    from .errors import MdmemError

    requested = [m.strip() for m in modes.split(",") if m.strip()]
    bad = [m for m in requested if m not in ALL_MODES]
    if bad or not requested:
        raise click.BadParameter(f"unknown mode(s) {', '.join(bad) or '(none)'}; use some of "
                                 f"{', '.join(ALL_MODES)}.", param_hint="--modes")
    run_modes, missing = available_modes(requested)
    for m in missing:
        click.echo(f"mdmem eval: skipping mode {m}: this mdmem's Vault has no {m}() yet.", err=True)
    if not run_modes:
        raise click.ClickException("No retrieval mode left to run; try --modes grep,search.")

    locomo = _path_option(locomo_opt, DEFAULT_LOCOMO)
    gold = _path_option(gold_opt, DEFAULT_GOLD)
    if locomo_opt is None and locomo is None:
        click.echo(f"mdmem eval: no LoCoMo data at {DEFAULT_LOCOMO}; skipping it (pass --locomo PATH).",
                   err=True)
    if locomo is not None and not locomo.is_file():
        raise click.BadParameter(f"no file at {locomo}.", param_hint="--locomo")
    if gold is not None and not (gold / "queries.yaml").is_file():
        raise click.BadParameter(f"{gold} has no queries.yaml (expected queries.yaml and vault/).",
                                 param_hint="--gold")
    if locomo is None and gold is None:
        raise click.ClickException("Nothing to evaluate: pass --locomo PATH (locomo10.json) "
                                   "or --gold FOLDER.")

    cache = (cache_dir or default_cache_dir()).expanduser()
    started = time.perf_counter()
    suites: list[Suite] = []
    info: dict[str, Any] = {"modes": run_modes, "skipped_modes": missing, "cache_dir": str(cache)}
    try:
        if locomo is not None:
            sha = file_sha(locomo)
            convs = load_locomo(locomo)[:conversations]
            levels = ["turn", "session"] if level == "both" else [level]
            suites += build_locomo(convs, cache / sha[:16], levels, rebuild)
            info["locomo"] = {"path": str(locomo), "sha256": sha, "conversations": len(convs),
                              "questions": sum(len(c.questions) for c in convs)}
        if gold is not None:
            gs = build_gold(gold, cache, rebuild)
            suites.append(gs)
            unknown = unknown_ids(gs)
            info["gold"] = {"path": str(gold), "queries": gs.n_queries, "unknown_ids": unknown}
            if unknown:
                click.echo(f"mdmem eval: {len(unknown)} gold ids name no note in the vault: "
                           f"{', '.join(unknown[:8])}{' …' if len(unknown) > 8 else ''}", err=True)
        rows: list[Row] = []
        timings = {}
        for suite in suites:
            index_s = index_suite(suite, run_modes)
            t0 = time.perf_counter()
            results = run_suite(suite, run_modes)
            timings[f"{suite.dataset}/{suite.level}"] = {
                "index_s": round(index_s, 2), "query_s": round(time.perf_counter() - t0, 2)}
            breakdown = by_category if suite.dataset == "locomo" else by_kind
            per_mode = {m: summarize_groups(results[m], dataset=suite.dataset, level=suite.level, mode=m,
                                            by_group=breakdown, order=list(CATEGORIES.values()))
                        for m in run_modes}
            # Rows grouped so the modes of one group sit together: all, then each group.
            for i in range(len(per_mode[run_modes[0]])):
                rows += [per_mode[m][i] for m in run_modes]
    except MdmemError as exc:
        raise click.ClickException(str(exc)) from exc
    info["timings"] = timings
    info["total_s"] = round(time.perf_counter() - started, 2)
    if as_json:
        click.echo(json.dumps({"rows": [asdict(r) for r in rows], **info}, indent=2, ensure_ascii=False))
        return
    click.echo(format_table(rows))
    click.echo("")
    for name, t in timings.items():
        click.echo(f"{name}: index {t['index_s']:.1f} s, queries {t['query_s']:.1f} s")
    if any(r.n_noanswer or r.n_excluded for r in rows):
        click.echo("quiet = share of no-answer queries with no hit at all; "
                   "leak = share of queries with excluded notes that showed one in the top 10 (/count).")
    click.echo(f"total {info['total_s']:.1f} s; vaults in {cache}")
