"""recall (intent-routed retrieval) and context (memory for a prompt within a token budget)."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..core.graph import ABOUT, CAUSAL_TYPES, CITES, MENTIONS, VIRTUAL
from ..core.links import display_text, shown_part
from ..core.memory import PRIOR_WEIGHT, RECALL_WHY_SEEDS, NewestAsked, classify, newest_asked
from ..core.rank import Candidate, spread
from ..core.text import STOPWORDS, terms
from ..core.topics import interleave, split
from ..core.when import Window, around_anchor, named_in, strip, topic_terms, topic_text, window
from ..results.search import ContextItem, Hits, MemoryContext
from .graph_view import graph_of
from .hybrid import hybrid_search, make_hits, with_links

if TYPE_CHECKING:
    from ..core.rank import Filters
    from ..index.reading import IndexRead
    from ..index.semantic import Semantic
    from ..index.store import IndexStore

WHY_SPREAD = (0.7, 0.35)  # share of a hit's score its cause gets one link away, two links away
ENTITY_SPREAD = (0.4,)  # share of the top score a note gets for being about an entity the query names


def recall(
    store: IndexStore, sem: Semantic | None, text: str, limit: int, filters: Filters, *, explain: bool = False
) -> Hits:
    """Intent-routed retrieval as hits with connection hints; ``info`` has the intent and the route."""
    with store.reading():  # one repair and one generation for the hits and their links
        cands, info = recall_candidates(store, sem, text, limit, filters)
        return with_links(store, make_hits(store, cands, info.get("topic") or text, explain, info))


def recall_candidates(
    store: IndexStore,
    sem: Semantic | None,
    text: str,
    limit: int,
    filters: Filters,
    *,
    prior_weight: float | None = None,
) -> tuple[list[Candidate], dict[str, Any]]:
    """Classify the query, then run the route that suits it (``sem`` None: no vectors)."""
    with store.reading() as idx:
        return _recall(store, idx, sem, text, limit, filters, prior_weight)


def _recall(
    store: IndexStore,
    idx: IndexRead,
    sem: Semantic | None,
    text: str,
    limit: int,
    filters: Filters,
    prior_weight: float | None,
) -> tuple[list[Candidate], dict[str, Any]]:
    intent = classify(text)
    if intent == "general" and _names_someone(idx, text):
        intent = "who"  # "what did Ada decide": a person's name (or first name) makes it a who-question
    pool = max(limit * 3, 20)
    recent = intent == "recent"
    now = filters.visible_at if filters.visible_at is not None else store.now()
    win = window(text, now)
    # The words of a relative time phrase and of the question around the topic are no content for
    # BM25: "last", "year", "learned" and "about" matched every note of the year that said them. A
    # calendar phrase or an event is ("camping in June", "after the road trip": LoCoMo's notes say
    # so in words; 10 of 2 conversations' answers fell without them). The vectors read the whole
    # question (without "today" gold recent-04's second answer fell below their noise floor).
    relative = win is not None and win.source.startswith("relative")
    asked = f"{strip(text, win.phrase)} {named_in(win.phrase)}".strip() if win is not None and relative else text
    rest = (topic_text(asked) or asked) if relative else text
    parts = topic_plan(idx, rest, filters)
    if parts:
        ranked, info = _by_topic(store, sem, parts, pool, filters, prior_weight=prior_weight, recent_intent=recent)
    else:
        ranked, info = hybrid_search(
            store,
            sem,
            text,
            pool,
            filters,
            prior_weight=prior_weight,
            recent_intent=recent,
            words=rest if rest.strip() else None,
        )
    if win is not None:
        info["topic"] = rest  # what BM25 searched and what the snippets mark
    route = {
        "why": "hybrid + causal links",
        "who": "hybrid + entity match",
        "when": "hybrid + time window",
        "recent": "hybrid, recency-weighted",
        "general": "hybrid",
    }[intent]
    if intent == "why":
        ranked = _follow_causal(idx, ranked, filters)
    elif intent == "who":
        ranked = _entity_boost(idx, text, ranked, filters, info)
    if win is not None and win.anchor is not None:
        dated = _date_anchor(idx, win, filters, now)
        if dated is None:
            info["window"] = {**win.describe(), "source": f"anchor not found: {win.anchor}"}
        win = dated
    if win is not None:
        ranked = _in_window(idx, text, win, ranked, filters, pool)
        info["window"] = win.describe()
        _window_answered(info, win, ranked)
        route = route if intent == "when" else route + " + time window"
    wants = newest_asked(text) if intent != "why" else None
    if wants is not None and (not filters.types or wants.type in filters.types):
        ranked, newest = _newest_first(idx, text, wants, win, ranked, filters, pool)
        if newest:
            info["newest"] = {"type": wants.type, "notes": newest, "said": list(wants.said)}
            route += f" + newest {wants.type} first"
    info.update({"intent": intent, "route": route})
    return ranked[:limit], info


def _window_answered(info: dict[str, Any], win: Window, ranked: list[Candidate]) -> None:
    """The words of the time phrase ("May" in "what happened in May 2026") are read by the window, not
    looked for in the notes: no "no note mentions May" above them. When the window's notes are what the
    list holds and no other name is unknown, the answer stands (not "nothing matches")."""
    said = {w.casefold() for w in re.findall(r"\w+", win.phrase)}
    unknown = [u for u in info.get("unknown") or () if not set(re.findall(r"\w+", u.casefold())) <= said]
    if unknown:
        info["unknown"] = unknown
        return
    if info.pop("unknown", None) is not None and any(c.explain.get("in_window") for c in ranked):
        info["relevant"] = True


def _names_someone(idx: IndexRead, text: str) -> bool:
    """Whether the question writes a name (a capitalised word, a run of two, or an @handle) that is a
    person's identity or the first word of one (a catalogue look-up; no graph is built for it)."""
    words = re.findall(r"(?<![\w@])@[\w.-]*\w|[^\W\d_][\w'’-]*", text)
    caps = [w for w in words if w.startswith("@") or w[0].isupper()]
    if not caps:
        return False
    names = {w.casefold() for w in caps}
    names |= {f"{a} {b}".casefold() for a, b in zip(words, words[1:]) if a in caps and b in caps}
    return idx.people_named(sorted(names))


TOPIC_COVERAGE = 0.5  # share of a part's words (IDF-weighted) its best BM25 hit must cover to stand alone


def topic_plan(idx: IndexRead, text: str, filters: Filters) -> list[str]:
    """The parts of a question about several things (``topics.split``) when each stands as a query
    on its own: its best BM25 hit covers ``TOPIC_COVERAGE`` of it, and the parts' best hits differ
    (one note answering both is one topic). [] otherwise: the question runs whole."""
    parts = split(text)
    tops = []
    for part in parts:
        hits = idx.search(part, 1, filters, coverage=True)
        if not hits or hits[0].coverage < TOPIC_COVERAGE:
            return []
        tops.append(hits[0].path)
    return parts if len(set(tops)) == len(tops) else []


def _by_topic(
    store: IndexStore, sem: Semantic | None, parts: list[str], pool: int, filters: Filters, **kw: Any
) -> tuple[list[Candidate], dict[str, Any]]:
    """Each part as its own hybrid query, merged round-robin (``topics.interleave``): the list takes
    each topic's best in turn. Scores stay each note's share of its part's best, made non-increasing
    down the merged list; ``explain`` names the topic and the rank it had there."""
    lists, infos = [], []
    for part in parts:
        ranked, info = hybrid_search(store, sem, part, pool, filters, **kw)
        lists.append({c.path: c for c in ranked})
        infos.append(info)
    merged: list[Candidate] = []
    last = float("inf")
    for path, topic, rank in interleave([list(li) for li in lists], pool):
        c = lists[topic][path]
        top = max(x.score for x in lists[topic].values()) or 1.0
        c.score = last = min(c.score / top, last - 1e-6)
        c.explain.update({"topic": topic + 1, "topic_rank": rank})
        merged.append(c)
    info = {
        **infos[0],
        "stages": [f"topic {i + 1}: " + " ".join(x["stages"]) for i, x in enumerate(infos)],
        "topics": [{"query": p, "hits": len(li)} for p, li in zip(parts, lists)],
        "plan": "round-robin",
        "relevant": any(x.get("relevant", True) for x in infos),
    }
    if info["relevant"]:
        info.pop("unknown", None)
    return merged, info


def _graph_spread(
    idx: IndexRead,
    ranked: list[Candidate],
    filters: Filters,
    seeds: dict[str, float],
    types: frozenset[str],
    weights: tuple[float, ...],
    label: dict[str, str] | None = None,
) -> list[Candidate]:
    """Propagate relevance from ``seeds`` (node → share of the top score) along the graph's
    ``types`` edges, both ways (``rank.spread``): a linked note gains ``weights[h-1]`` × its seed's
    share at ``h`` hops, added to its own score, and joins the list if it was not on it. Each
    gainer's ``via`` names the edge and the seed that gave the most."""
    if not seeds:
        return ranked
    g = graph_of(idx)

    def neighbours(items: set[str]) -> dict[str, list[tuple[str, str]]]:
        return {
            k: [(other, e.type if way == "out" else f"{e.type}⁻¹") for e, other, way in g.edges(k, "both", types)]
            for k in items
        }

    lent = spread(seeds, neighbours, weights)
    top = max((c.score for c in ranked), default=1.0) or 1.0
    by_path = {c.path: c for c in ranked}
    rows = idx.rows(p for p in lent if p not in by_path and not p.startswith(VIRTUAL))
    for path, ln in lent.items():
        if path.startswith(VIRTUAL):
            continue  # an entity or external node is a hub, not a result
        c = by_path.get(path)
        if c is None:
            row = rows.get(path)
            if row is None or not filters.matches(row):
                continue
            c = by_path[path] = Candidate(path=path, score=0.0)
        c.score += ln.gain * top
        seed = (label or {}).get(ln.seed) or (g.nodes[ln.seed].id if ln.seed in g.nodes else ln.seed)
        c.explain["graph"] = round(ln.gain, 4)
        c.explain["via"] = f"{ln.edge} {seed}" + (f" ({ln.hops} hops)" if ln.hops > 1 else "")
    return sorted(by_path.values(), key=lambda c: (-c.score, c.path))


def _follow_causal(idx: IndexRead, ranked: list[Candidate], filters: Filters) -> list[Candidate]:
    """Causes and consequences of the top hits, two links each way (caused_by, led_to, …)."""
    top = max((c.score for c in ranked), default=1.0) or 1.0
    seeds = {c.path: c.score / top for c in ranked[:RECALL_WHY_SEEDS]}
    return _graph_spread(idx, ranked, filters, seeds, CAUSAL_TYPES, WHY_SPREAD)


def _entity_boost(
    idx: IndexRead, text: str, ranked: list[Candidate], filters: Filters, info: dict[str, Any]
) -> list[Candidate]:
    """Notes about an entity the query names (its ``entities``, a note titled or aliased so, a
    note that links to it, one whose prose names the person) rise, and join the list if they were
    missing. A name several people go by lifts none of them: ``info["ambiguous"]`` lists them."""
    from .people import people_in

    words = [w for w in re.findall(r"[^\W\d_][\w.\-]*", text)]
    g = graph_of(idx)
    # people first, by any identity ("alice@example.com", "@alice", a name): their notes rise, and
    # so does the person's own note, the answer to "who is …"
    shared: dict[str, tuple[str, ...]] = {}
    named: dict[str, str] = people_in(g, text, shared)
    if shared:
        info["ambiguous"] = {name: list(paths) for name, paths in shared.items()}
    own = dict(named)
    for n in (3, 2, 1):  # longest names first: "Priya Raman" before "Priya"
        for i in range(len(words) - n + 1):
            name = " ".join(words[i : i + n])
            if n == 1 and len(name) < 3:
                continue
            node = g.entity(name)
            if (
                node is not None
                and node not in named
                and not any(name in other for other in named.values())
                and name not in shared
            ):
                named[node] = name
    if not named:
        return ranked
    ranked = _graph_spread(
        idx,
        ranked,
        filters,
        {node: 1.0 for node in named},
        frozenset({ABOUT, MENTIONS, CITES}),
        ENTITY_SPREAD,
        label={node: f"entity {name}" for node, name in named.items()},
    )
    return _lift(idx, ranked, filters, own, ENTITY_SPREAD[0]) if own else ranked


def _lift(
    idx: IndexRead, ranked: list[Candidate], filters: Filters, notes: dict[str, str], share: float
) -> list[Candidate]:
    """``notes`` (path → the words that named it) gain ``share`` of the top score, joining the list if missing."""
    top = max((c.score for c in ranked), default=1.0) or 1.0
    by_path = {c.path: c for c in ranked}
    rows = idx.rows(p for p in notes if p not in by_path)
    for path, name in notes.items():
        c = by_path.get(path)
        if c is None:
            if path not in rows or not filters.matches(rows[path]):
                continue
            c = by_path[path] = Candidate(path=path, score=0.0)
        c.score += share * top
        c.explain["person"] = name
    return sorted(by_path.values(), key=lambda c: (-c.score, c.path))


WINDOW_BOOST = 1.0  # share of the top score a note dated in the query's time window gains: it goes first
ANCHOR_BOOST = 0.3  # the same for a window dated by a note ("after the tour"): a prior, not a filter, since
# "what did he plan after the tour" was often said before it (LoCoMo: 1 of 11 lost its answer at 1.0)
ANCHOR_HITS = 3  # BM25 hits read to date the event of "before the migration"
TOPIC_COSINE = 0.45  # a note the vectors find this close is about the topic without sharing its words


def _in_window(
    idx: IndexRead, text: str, win: Window, ranked: list[Candidate], filters: Filters, pool: int
) -> list[Candidate]:
    """Notes dated in the query's time window that are about its topic rise by ``WINDOW_BOOST`` of the
    top score (``ANCHOR_BOOST`` when a note dated the window; dated as the index dates them: their own
    dates, else git's); the window's notes that match the topic ("incidents" in "incidents
    last month") but missed the pool join it, below. The window's other notes, newest first, fill the
    list only when the question has no topic of its own ("what happened last month": ``topic_terms``)
    or no note in the window is about it; a note that matched only the question's words ("what did I
    learn about …") gets nothing."""
    top = max((c.score for c in ranked), default=1.0) or 1.0
    boost = WINDOW_BOOST if win.anchor is None else ANCHOR_BOOST
    by_path = {c.path: c for c in ranked}
    topic = " ".join(topic_terms(strip(text, win.phrase)))
    inside = replace(filters, since=win.start, until=None if win.end is None else win.end - 1e-3)
    extra = idx.search(topic, pool, inside) if topic else []
    best = max((h.score for h in extra), default=1.0) or 1.0
    for h in extra:
        if h.path not in by_path:
            by_path[h.path] = Candidate(path=h.path, score=0.0, explain={"window_bm25": round(h.score, 4)})
            by_path[h.path].score = 0.5 * boost * top * h.score / best
    on_topic: set[str] | None = None
    if topic:  # the candidates that match a word of the topic, or that the vectors find close in meaning
        hits = idx.search(topic, max(pool, len(by_path)) * 4, filters)
        on_topic = {h.path for h in hits} | {
            c.path for c in by_path.values() if (c.explain.get("cosine") or 0.0) >= TOPIC_COSINE
        }
        # and the window's notes filed under it: "billing" is their scope, a tag, their folder or type
        wanted = set(topic.split())
        dated = idx.dated_between(win.start, win.end, pool * 4)
        for path, row in idx.rows(dated).items():
            filed = " ".join(
                [
                    str(row.get("scope") or ""),
                    str(row.get("type") or ""),
                    *(row.get("tags") or []),
                    *path.split("/")[:-1],
                ]
            )
            if wanted & set(terms(filed)) and filters.matches(row):
                on_topic.add(path)
                if path not in by_path:
                    by_path[path] = Candidate(
                        path=path,
                        score=0.5 * boost * top * (1 - len(by_path) / (4 * pool)),
                        explain={"window_filed": True},
                    )
    rows = idx.rows(by_path)
    if on_topic is not None and not any(
        p in on_topic and win.contains((rows.get(p) or {}).get("date")) for p in by_path
    ):
        on_topic = None  # nothing in the window is about it in so many words ("what was handed over")
    if on_topic is None and len(extra) < pool:  # the window's notes, newest first: "what happened last month"
        dated = idx.dated_between(win.start, win.end, pool)
        rows = idx.rows(p for p in dated if p not in by_path)
        for i, path in enumerate(dated):
            if path in rows and filters.matches(rows[path]):
                by_path[path] = Candidate(
                    path=path, score=0.1 * boost * top * (1 - i / pool), explain={"window_only": True}
                )
        rows = idx.rows(by_path)
    for c in by_path.values():
        if win.contains((rows.get(c.path) or {}).get("date")) and (on_topic is None or c.path in on_topic):
            c.score += boost * top
            c.explain["in_window"] = True
    return sorted(by_path.values(), key=lambda c: (-c.score, c.path))


def _newest_first(
    idx: IndexRead,
    text: str,
    asked: NewestAsked,
    win: Window | None,
    ranked: list[Candidate],
    filters: Filters,
    pool: int,
) -> tuple[list[Candidate], int]:
    """ "the latest decisions", "what did we do yesterday": the notes of the asked type go first,
    newest first, and the rest follow in their order. With a topic ("the latest decisions about
    billing") they are the type's notes BM25 finds for it; without one, the type's newest notes. In a
    time window only the type's notes dated in it count. Nothing moves when the vault has no such note
    (a chat log has no handoffs). Returns the list and how many went first."""
    rest = text
    for said in (*asked.said, *([win.phrase] if win is not None else [])):
        rest = strip(rest, said)
    # stop words are dropped as written: the index stems before it drops them ("are" stays as "ar")
    topic = " ".join(topic_terms(" ".join(w for w in rest.split() if w.casefold().strip("?.,!") not in STOPWORDS)))
    typed = replace(filters, types=(asked.type,))
    if win is not None and win.anchor is None:
        typed = replace(typed, since=win.start, until=None if win.end is None else win.end - 1e-3)
    if topic:
        paths = [h.path for h in idx.search(topic, pool, typed)]
    else:
        newest = idx.newest_paths(asked.type, pool * 4)
        rows = idx.rows(newest)
        paths = [p for p in newest if p in rows and typed.matches(rows[p])][:pool]
    if not paths:
        return ranked, 0
    rows = idx.rows(paths)

    def date(path: str) -> float:
        row = rows.get(path) or {}
        return float(row.get("date") or 0.0)

    first = sorted(paths, key=lambda p: (-date(p), p))
    top = max((c.score for c in ranked), default=1.0) or 1.0
    by_path = {c.path: c for c in ranked}
    out = []
    for i, path in enumerate(first):
        c = by_path.pop(path, None) or Candidate(path=path, score=0.0)
        c.score = top * (2.0 - i / len(first))  # above every other note, in date order
        c.explain["newest_first"] = i + 1
        out.append(c)
    return out + [c for c in ranked if c.path in by_path], len(first)


def _date_anchor(idx: IndexRead, win: Window, filters: Filters, now: float | None) -> Window | None:
    """ "before the migration": the window around the date of the note that best matches "the
    migration" (BM25), or None when no note does."""
    words = win.anchor or ""
    hits = idx.search(words, ANCHOR_HITS, filters)
    rows = idx.rows(h.path for h in hits)
    for h in hits:
        row = rows.get(h.path) or {}
        if row.get("date") is not None:
            return around_anchor(win, row["date"], row["id"], now)
    return None


# -- context ---------------------------------------------------------------------------------------


def key_line(body: str, limit: int = 160) -> str:
    """The first line of a body that says something (no headings, fences or blank lines), within the
    text shown (``shown_part``: a huge note of embeds would have a line read for each of them)."""
    for line in shown_part(body).splitlines():
        raw = line.strip().lstrip("> ")
        if not raw or raw.startswith(("#", "```", "~~~", "|", "---")):
            continue
        line = " ".join(display_text(line).split())  # text, not HTML or markdown syntax
        if not line:
            continue  # a line of only tags, an embed or a comment says nothing
        return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
    return ""


def memory_line(kind: str, title: str, body: str, ident: str, mark: str = "") -> str:
    """One note as a context or profile line: ``- [type] title — its key line (id: ID)``; what the hooks,
    ``context``, ``profile`` and a context across vaults all print."""
    return f"- [{kind}] {title}{mark} — {key_line(body)} (id: {ident})\n"


def build_context(
    store: IndexStore,
    sem: Semantic | None,
    prompt: str,
    *,
    budget: int = 600,
    scope: list[str] | None = None,
    as_of: str | None = None,
    explain: bool = False,
) -> MemoryContext:
    """The memories for a prompt within ``budget`` tokens: pinned notes first, then the most
    relevant (priors weigh more here than in a direct query; ``sem`` None: no vectors).
    Deterministic for the same vault. ``explain``: each relevant item keeps its ranking's signals
    (cosine, coverage: what a merge across vaults compares)."""
    started = time.perf_counter()
    with store.reading() as idx:
        return _context(store, idx, sem, prompt, budget, store.filters(scope=scope, as_of=as_of), explain, started)


def _context(
    store: IndexStore,
    idx: IndexRead,
    sem: Semantic | None,
    prompt: str,
    budget: int,
    filters: Filters,
    explain: bool,
    started: float,
) -> MemoryContext:
    """``build_context`` on one view of the index."""
    from ..core.text import estimate_tokens

    header = "Relevant memory from the mdmem vault (type, title, key line, id):\n"
    used = estimate_tokens(header)
    items: list[ContextItem] = []
    lines: list[str] = []
    seen: set[str] = set()

    def take(path: str, why: str, score: float | None, signals: dict[str, Any] | None = None) -> bool:
        nonlocal used
        row = idx.row(path)
        if row is None or path in seen:
            return True
        try:
            body = store.files.body(path)
        except OSError:
            return True
        line = memory_line(row["type"], row["title"], body, row["id"])
        cost = estimate_tokens(line)
        if used + cost > budget:
            return False
        used += cost
        seen.add(path)
        lines.append(line)
        items.append(
            ContextItem(
                row["id"],
                path,
                row["title"],
                row["type"],
                why,
                round(score, 4) if score is not None else None,
                explain=signals,
            )
        )
        return True

    for path in idx.pinned_paths():
        row = idx.row(path)
        if row is None or not filters.matches(row):
            continue
        if used > budget // 2 or not take(path, "pinned", None):
            break
    intent, vectors = None, False
    if prompt.strip():
        ranked, info = recall_candidates(store, sem, prompt, 15, filters, prior_weight=PRIOR_WEIGHT["context"])
        intent = info.get("intent")
        vectors = any(s.startswith("vectors:") and s[8:].isdigit() for s in info.get("stages", []))
        if info.get("relevant") is False:
            ranked = []  # the vault has no answer: an agent is better off with no memory than a wrong one
        for c in ranked:
            if not take(c.path, "relevant", c.score, dict(c.explain) if explain else None):
                break
    text = header + "".join(lines) if lines else ""
    return MemoryContext(
        text, used if lines else 0, budget, items, intent, round((time.perf_counter() - started) * 1000, 1), vectors
    )
