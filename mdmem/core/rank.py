"""Pure ranking: filters on catalogue rows, weighted reciprocal rank fusion, graph spreading,
near-duplicate hold-back, PRF terms."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .schema import INCLUDE_CHOICES, FilterArgs


@dataclass(slots=True)
class Candidate:
    """A note under consideration by a retrieval pipeline, with everything ``--explain`` reports."""

    path: str
    explain: dict[str, Any] = field(default_factory=dict)
    chunk_key: int | None = None
    chunk_text: str = ""
    score: float = 0.0


@dataclass(frozen=True, slots=True)
class Filters:
    """Restrictions every retrieval path applies, so ``limit`` counts only eligible notes."""

    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    since: float | None = None
    until: float | None = None
    path: str | None = None
    visible_at: float | None = None  # hide forgotten/archived/snoozed/expired notes as of this time
    include: tuple[str, ...] = ()  # widen visibility: forgotten, archived, snoozed, expired

    def matches(self, row: Mapping[str, Any]) -> bool:
        """Whether a catalogue row (``Catalog.row``) passes; mirrors the lexical index's filter."""
        import fnmatch

        if self.visible_at is not None and not self.statuses:
            from .memory import hidden_reason

            if hidden_reason(row, self.visibility()) is not None:
                return False

        if self.types and row.get("type") not in self.types:
            return False
        if self.scopes and not scope_in(str(row.get("scope")), self.scopes):
            return False
        if self.statuses and row.get("status") not in self.statuses:
            return False
        if self.tags:
            have = {t.lower().lstrip("#") for t in row.get("tags") or []}
            if not all(t.lower().lstrip("#") in have for t in self.tags):
                return False
        date = row.get("date") if row.get("date") is not None else row.get("mtime")
        if self.since is not None and (date is None or date < self.since):
            return False
        if self.until is not None and (date is None or date > self.until):
            return False
        if self.path:
            p, path = self.path.strip("/"), str(row.get("path"))
            if any(c in p for c in "*?["):
                return fnmatch.fnmatchcase(path, p)
            return path in (p, p + ".md") or path.startswith(p + "/")
        return True

    @property
    def empty(self) -> bool:
        return self == Filters()

    def visibility(self) -> Any:
        from .memory import Visibility

        inc = set(self.include)
        return Visibility(
            now=self.visible_at or 0.0,
            include_forgotten="forgotten" in inc,
            include_archived="archived" in inc,
            include_snoozed="snoozed" in inc,
            include_expired="expired" in inc,
        )


def date_bound(v: Any, name: str, end: bool = False) -> float | None:
    """A --since/--until/--as-of value as a timestamp (``end``: a bare date means its last second)."""
    from .errors import MdmemError
    from .note import iso_to_timestamp, to_iso

    if v is None or v == "":
        return None
    iso = to_iso(v) if not isinstance(v, str) else to_iso(v.strip())
    if iso is None:
        raise MdmemError(f"--{name} must be a date like 2026-01-31, got {v!r}.")
    ts = iso_to_timestamp(iso)
    assert ts is not None
    return ts + 86399.999 if end and len(iso) == 10 else ts


def scope_in(scope: str, scopes: tuple[str, ...]) -> bool:
    """Whether a note's scope is one of ``scopes``; ``topic:*`` (a kind and ``:*``) takes every topic."""
    return scope in scopes or any(s.endswith(":*") and scope.startswith(s[:-1]) for s in scopes)


def make_filters(args: FilterArgs | None = None, visible_at: float | None = None) -> Filters:
    """``Filters`` from the filter arguments, ``as_of`` already turned into ``visible_at``."""
    from .errors import MdmemError

    a = args if args is not None else FilterArgs()
    bad = [i for i in a.include if i not in INCLUDE_CHOICES]
    if bad:
        raise MdmemError(f"--include takes {', '.join(INCLUDE_CHOICES)}; got {', '.join(bad)}.")
    return Filters(
        types=a.type,
        tags=a.tag,
        scopes=(*a.scope, "global") if a.scope else (),
        statuses=a.status,
        since=date_bound(a.since, "since"),
        until=date_bound(a.until, "until", end=True),
        path=a.path,
        visible_at=visible_at,
        include=a.include,
    )


def tied_ranks(scored: Sequence[tuple[str, float]]) -> list[tuple[str, int]]:
    """Competition ranks of a best-first list: equal scores share a rank (1, 1, 3, …)."""
    out: list[tuple[str, int]] = []
    prev: float | None = None
    rank = 0
    for i, (item, score) in enumerate(scored, 1):
        if prev is None or abs(score - prev) > 1e-9 * max(1.0, abs(prev)):
            rank = i
        prev = score
        out.append((item, rank))
    return out


def rrf(
    rankings: Mapping[str, Sequence[tuple[str, float]]],
    weights: Mapping[str, float],
    k: int = 60,
) -> dict[str, dict[str, float]]:
    """Weighted reciprocal rank fusion over (item, score) lists, best first.

    Returns ``{item: {"rrf": score, "<list>_rank": rank, …}}`` where each list contributes
    ``weight / (k + rank)``. Equal scores share a rank, so two equally good notes stay tied and
    the priors, not the lists' arbitrary order, decide between them.
    """
    out: dict[str, dict[str, float]] = {}
    for name, scored in rankings.items():
        w = weights.get(name, 1.0)
        for item, rank in tied_ranks(scored):
            entry = out.setdefault(item, {"rrf": 0.0})
            entry["rrf"] += w / (k + rank)
            entry[f"{name}_rank"] = rank
    return out


def flatness(best_coverage: float, full: float, none: float) -> float:
    """How little BM25 can answer a query, from 0 to 1: 1 when its best match covers at most ``full``
    of the query's IDF mass (the user's words are not in the vault), 0 from ``none`` up, linear between."""
    if best_coverage >= none:
        return 0.0
    if best_coverage <= full or none <= full:
        return 1.0
    return (none - best_coverage) / (none - full)


def blend(
    fused: Mapping[str, float],
    bm25: Sequence[tuple[str, float]],
    cosines: Sequence[tuple[str, float]],
    share: float,
    vector_weight: float,
    floor: float,
    coverage: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Fused scores moved ``share`` of the way to a score-aware blend that keeps a clear vector win.

    RRF sees only ranks, so a note far closer in meaning than the rest counts no more than the
    runner-up, and BM25's near-random order on a query it cannot answer buries it. The blend is
    BM25 over its best score (times the share of the query the note holds, ``coverage``, when
    given) plus ``vector_weight`` × the cosine's position between ``floor`` and the best cosine;
    each side is normalised to its top, then mixed: (1 − share)·fused + share·blend.
    """
    top_b = bm25[0][1] if bm25 else 0.0
    top_c = cosines[0][1] if cosines else 0.0
    mixed: dict[str, float] = {}
    for item, score in bm25:
        part = score / top_b if top_b > 0 else 0.0
        mixed[item] = mixed.get(item, 0.0) + (part * coverage.get(item, 0.0) if coverage is not None else part)
    for item, cos in cosines:
        lift = (cos - floor) / (top_c - floor) if top_c > floor else 1.0
        mixed[item] = mixed.get(item, 0.0) + vector_weight * max(0.0, lift)
    top_f = max(fused.values(), default=0.0) or 1.0
    top_m = max(mixed.values(), default=0.0) or 1.0
    return {
        item: (1 - share) * fused.get(item, 0.0) / top_f + share * mixed.get(item, 0.0) / top_m
        for item in {*fused, *mixed}
    }


def clear_winner(cosines: Sequence[tuple[str, float]], gap: float, least: float, floor: float) -> str | None:
    """The vector leg's first note when it stands clear of the rest: its cosine at least ``least``
    and ``gap`` above the second's (or above ``floor``, the noise, when it is alone). None otherwise."""
    if gap <= 0 or not cosines or cosines[0][1] < least:
        return None
    second = cosines[1][1] if len(cosines) > 1 else floor
    return cosines[0][0] if cosines[0][1] - second >= gap else None


def no_answer(
    names: Sequence[str],
    unknown: float,
    coverage: float,
    cosine: float,
    *,
    big: bool,
    covered: float,
    strong: float,
    share: float,
    weak_share: float,
    weak_cosine: float,
) -> bool:
    """Whether the vault holds no answer to a query: it names something no note mentions (``names``),
    its best match holds under ``covered`` of it and no note is ``strong``ly close in meaning; in a
    ``big`` vault (enough text that a missing word says something) the name alone suffices (a note
    about DynamoDB is no answer to a question about Terraform), and so does a ``share`` of the query
    (IDF-weighted) in words no note has, or ``weak_share`` of it with no note closer than
    ``weak_cosine``. In a small vault (a chat, a few hundred short notes) an answer is often in other
    words than the question's."""
    if names and coverage < covered and (big or cosine < strong):
        return True
    return big and (unknown >= share or (unknown >= weak_share and cosine < weak_cosine))


@dataclass(frozen=True, slots=True)
class Lent:
    """Relevance one item received from scored items nearby in the graph."""

    gain: float  # the sum of every seed's share
    seed: str  # the seed that gave the most
    edge: str  # and the edge it came along, e.g. "follows" or "follows⁻¹" (reversed)
    hops: int


def spread(
    scores: Mapping[str, float],
    neighbours: Callable[[set[str]], Mapping[str, Sequence[tuple[str, str]]]],
    weights: Sequence[float],
) -> dict[str, Lent]:
    """Lend relevance along graph edges: each scored item gives ``weights[h-1] × its score`` to
    every item ``h`` hops away (breadth first, each item once per seed; gains from several
    seeds add up).

    ``neighbours(items)`` returns each item's (neighbour, edge label) pairs; it is called once
    per hop with all the items on that hop's frontier, so the caller can answer it with one query.
    """
    gains: dict[str, float] = {}
    best: dict[str, tuple[float, str, str, int]] = {}
    frontier = {seed: {seed} for seed, s in scores.items() if s > 0}
    seen = {seed: {seed} for seed in frontier}
    for hop, w in enumerate(weights, 1):
        nodes = set().union(*frontier.values()) if frontier else set()
        if not nodes or w <= 0:
            break
        adj = neighbours(nodes)
        nxt_frontier: dict[str, set[str]] = {}
        for seed, front in frontier.items():
            nxt: set[str] = set()
            for node in sorted(front):
                for other, label in adj.get(node, ()):
                    if other in seen[seed] or other in nxt:
                        continue
                    nxt.add(other)
                    g = w * scores[seed]
                    gains[other] = gains.get(other, 0.0) + g
                    if g > best.get(other, (0.0,))[0]:
                        best[other] = (g, seed, label, hop)
            seen[seed] |= nxt
            if nxt:
                nxt_frontier[seed] = nxt
        frontier = nxt_frontier
    return {item: Lent(gain=g, seed=best[item][1], edge=best[item][2], hops=best[item][3]) for item, g in gains.items()}


def hold_back_duplicates(
    items: Sequence[str], similarity: Callable[[str, str], float], threshold: float, places: int
) -> list[tuple[str, float]]:
    """Diversity for near-duplicates only: an item at least ``threshold`` similar to one already
    placed waits until ``places`` other items have been placed after it, then takes its turn.

    So copies never sit next to each other at the top, yet a relevant near-duplicate moves down a
    bounded number of places instead of out of sight (full MMR, which re-sorts by relevance minus
    redundancy, pushed graded-relevant near-duplicates out of the gold top 5: docs/retrieval.md).
    Returns (item, similarity to the item it duplicates, 0 if none) in the new order.
    """
    out: list[tuple[str, float]] = []
    waiting: list[tuple[int, str, float]] = []  # (placed count at which it may go, item, similarity)
    for item in items:
        while waiting and waiting[0][0] <= len(out):
            out.append(waiting.pop(0)[1:])
        sim = max((similarity(item, p) for p, _ in out), default=0.0)
        sim = max(sim, max((similarity(item, w) for _, w, _ in waiting), default=0.0))
        if sim >= threshold:
            waiting.append((max(len(out), waiting[-1][0] + 1 if waiting else 0) + places, item, sim))
        else:
            out.append((item, 0.0))
    out.extend(w[1:] for w in waiting)
    return out


def feedback_terms(
    docs: Sequence[Sequence[str]], doc_freq: Callable[[str], int], n_docs: int, exclude: set[str], top: int = 5
) -> list[tuple[str, float]]:
    """Pseudo-relevance feedback: the terms that best characterise the top documents (tf·idf)."""
    tf: dict[str, float] = {}
    for terms in docs:
        for t, c in Counter(terms).items():
            tf[t] = tf.get(t, 0.0) + 1.0 + math.log(c)
    scored = []
    for t, f in tf.items():
        if t in exclude or len(t) < 3 or t.isdigit():
            continue
        df = doc_freq(t)
        if df < 2:  # a word only these docs share says little about the topic
            continue
        scored.append((t, f * math.log(1 + n_docs / df)))
    scored.sort(key=lambda x: -x[1])
    return scored[:top]


# -- one scale across vaults -----------------------------------------------------------------------------


def evidence(explain: Mapping[str, Any], floor: float, strong: float, vectors: bool = True) -> float:
    """How well one hit answers the query, on a scale that means the same in every vault (0–1.1).

    Two signals survive the trip between separate indexes: ``coverage``, the share of the query's
    IDF-weighted words the note holds (a share, whatever the vault's size), and the vector leg's
    ``cosine`` (the same model gives the same cosine for the same texts; ``vectors`` False when the
    vaults' models differ). The cosine counts as its place between the vault's noise floor
    (``min_similarity``) and ``strong_similarity``, the closeness the pipeline already takes as good
    as full coverage (a candidate passes its score floor with either). The stronger of the two
    decides; a tenth of the weaker breaks ties (two notes that both hold every word). Raw BM25 scores
    (their IDF is the vault's own), RRF scores and the final scores (ranks; normalised to each vault's
    top hit) are not comparable and are not used."""
    cov = float(explain.get("coverage") or 0.0)
    cos = explain.get("cosine") if vectors else None
    lift = 0.0
    if cos is not None and strong > floor:
        lift = min(1.0, max(0.0, (float(cos) - floor) / (strong - floor)))
    return max(cov, lift) + 0.1 * min(cov, lift)


def envelope(values: Sequence[float]) -> list[float]:
    """Each position's best value at or below it in the list (a running maximum from the bottom): a
    non-increasing list, so a hit the vault ranked above a strong one is worth at least as much."""
    out = list(values)
    for i in range(len(out) - 2, -1, -1):
        out[i] = max(out[i], out[i + 1])
    return out


def merge_ranked(lists: Sequence[Sequence[float]], limit: int) -> list[tuple[int, int, float]]:
    """Merge ranked lists (each a list's evidence, best first) into one: (list, position, key) best
    first, at most ``limit``. The key is the list's ``envelope``, so every list keeps its own order
    (its pipeline knows best within one vault) and lists interleave by evidence alone; ties go to
    the earlier position, then the earlier list."""
    keyed = [(-key, pos, li) for li, values in enumerate(lists) for pos, key in enumerate(envelope(values))]
    keyed.sort()
    return [(li, pos, -neg) for neg, pos, li in keyed[:limit]]
