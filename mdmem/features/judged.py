"""The hybrid query's candidates judged by one learned model of relevance (``[query] ranking = "model"``)."""

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
        p = model.probability(x)
        c.score = p
        c.explain["p"] = round(p, 4)
        c.explain["features"] = {n: round(v, 4) for n, v in zip(model.names, x, strict=True)}
        c.explain["weights"] = {n: round(w, 3) for n, w in model.contributions(x).items()}
        best = max(best, p)
    for path in [p for p in by_path if p not in rows]:  # only what neither leg found (a spread, a prior)
        by_path[path].score = 0.0
    return best
