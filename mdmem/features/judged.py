"""The hybrid query's candidates judged by one learned model of relevance: the fusion's first notes put in
the model's order (``[query] ranking = "head"``, the default), or every candidate ranked by it (``"model"``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from ..core.rank import Candidate
from ..core.relevance import Evidence, Model, feature_rows
from ..core.text import terms

if TYPE_CHECKING:
    from ..index.reading import IndexRead


@cache
def shipped_model() -> Model:
    """The model fitted offline on the corpora's self-generated queries (benchmarks/fit_relevance.py)."""
    from ..core.relevance_model import MODEL

    return Model.from_dict(MODEL)


def evidence(idx: IndexRead, text: str, lex: Sequence[Any], vec: Sequence[Candidate]) -> dict[str, Evidence]:
    """What BM25 and the vectors said of every candidate of either leg, with its title's share of
    the query's words and whether the whole query is one of its names or headings."""
    pool: dict[str, Evidence] = {}
    for rank, h in enumerate(lex, 1):
        pool[h.path] = Evidence(bm25=h.score, bm25_rank=rank, coverage=h.coverage)
    for rank, c in enumerate(vec, 1):
        e = pool.setdefault(c.path, Evidence())
        e.cosine = c.explain.get("cosine")
        e.cosine_top3 = c.explain.get("cosine_top3", e.cosine)
        e.vec_rank = rank
    words = set(terms(text))
    if words:
        titles = {h.path: h.title for h in lex}
        missing = [p for p in pool if p not in titles]
        titles.update({p: r["title"] for p, r in idx.rows(missing).items()} if missing else {})
        for path, title in titles.items():
            if path in pool:
                pool[path].title_share = len(words & set(terms(title))) / len(words)
    for path, kind in idx.lookup(text) if len(text) <= 300 else ():
        if path in pool:
            if kind == "heading":
                pool[path].heading = True
            else:
                pool[path].named = True
    return pool


def judge(
    by_path: dict[str, Candidate],
    pool: Mapping[str, Evidence],
    *,
    best_coverage: float,
    unknown_share: float,
    model: Model | None = None,
) -> float:
    """Each candidate's score becomes the model's probability that it is the answer (its features
    and their contributions in ``explain``); returns the best probability (0 with no candidate)."""
    model = model or shipped_model()
    rows = feature_rows(pool, best_coverage=best_coverage, unknown_share=unknown_share)
    best = 0.0
    for path, x in rows.items():
        c = by_path.setdefault(path, Candidate(path=path))
        c.score = p = _judged(c, model, x)
        best = max(best, p)
    for path in [p for p in by_path if p not in rows]:  # only what neither leg found (a spread, a prior)
        by_path[path].score = 0.0
    return best


def order_head(
    ranked: list[Candidate],
    pool: Mapping[str, Evidence],
    head: int,
    *,
    legs: Mapping[str, Sequence[str]] | None = None,
    per_leg: int = 0,
    reorder: bool = True,
    best_coverage: float,
    unknown_share: float,
    model: Model | None = None,
) -> float:
    """Put the first ``head`` of ``ranked`` (the fusion's order) in the order of the model's probability,
    in place; returns the best probability among them (0 with none).

    The fusion chooses the head, with one exception: each leg's first ``per_leg`` notes (``legs``: each
    leg's notes, best first) join it when the fusion left them out, in place of its last ones (RRF
    weighs a place on the vector list at 0.3 of one on BM25's, so a note only the vectors found ranked
    below all of BM25's fifty, however clearly the vectors put it first). The model then orders the
    head: each place keeps its score, so what follows (priors, near-duplicates, the verdict) sees the
    fusion's scale, and the notes after the head stay in the fusion's order below it. A note neither
    leg found (the graph lent it relevance) has no evidence for the model and keeps its place. Each
    judged note's ``explain`` gets its probability, features and their contributions, its place in the
    fusion and, for a note that joined, the leg and place it came from. With ``reorder`` False the
    probabilities are reported (and judge relevance) but the head keeps the fusion's order, joined notes
    last: for a query BM25 cannot answer, which the model was not fitted on (hybrid.py says when)."""
    model = model or shipped_model()
    top = ranked[:head]
    here = {c.path for c in top}
    at = {c.path: i for i, c in enumerate(ranked)}
    joined: dict[str, str] = {}
    for name, order in (legs or {}).items():
        for rank, path in enumerate(order[:per_leg], 1):
            if path not in here and path not in joined and path in at:
                joined[path] = f"{name} {rank}"
    if joined:
        keep = max(0, len(top) - len(joined))
        newcomers = sorted((ranked[at[p]] for p in joined), key=lambda c: at[c.path])[: head - keep]
        scores = [c.score for c in top]  # the places' scores
        out = {c.path for c in (*top[:keep], *newcomers)}
        rest = [c for c in ranked if c.path not in out]
        top = [*top[:keep], *newcomers]
        floor = scores[len(top) - 1] if scores else 0.0
        for c, score in zip(top, scores, strict=False):
            c.score = score
        for c in rest:  # below the head, in the fusion's order
            floor = c.score = min(c.score, floor - 1e-9)
        ranked[:] = [*top, *rest]
        for c in newcomers:
            c.explain["joined"] = joined[c.path]
    # every candidate's evidence, as in fitting: a feature is relative to the best of both legs' lists
    rows = feature_rows(pool, best_coverage=best_coverage, unknown_share=unknown_share)
    slots = [i for i, c in enumerate(top) if c.path in rows]
    if not slots:
        return 0.0
    scores = [top[i].score for i in slots]
    chance: dict[str, float] = {}
    for i in slots:
        c = top[i]
        chance[c.path] = _judged(c, model, rows[c.path])
        c.explain["fused_rank"] = at[c.path] + 1
    if not reorder:
        return max(chance.values())
    judged = sorted((top[i] for i in slots), key=lambda c: -chance[c.path])  # stable: ties keep the fusion's order
    for i, c, score in zip(slots, judged, scores, strict=True):
        c.score = score
        ranked[i] = c
    return max(chance.values())


def _judged(c: Candidate, model: Model, x: Sequence[float]) -> float:
    """The model's probability for one candidate's features ``x``; its ``explain`` gets the probability,
    each feature and each feature's contribution (``--explain``)."""
    p = model.probability(x)
    c.explain["p"] = round(p, 4)
    c.explain["features"] = {n: round(v, 4) for n, v in zip(model.names, x, strict=True)}
    c.explain["weights"] = {n: round(w, 3) for n, w in model.contributions(x).items()}
    return p
