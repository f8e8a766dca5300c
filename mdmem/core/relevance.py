"""One judgement of relevance (pure): a note's features for a query and a logistic model of its chance."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# The features of one candidate note for one query, each in [0, 1] or near it. The first group is
# the note's own evidence, the second the query's (the same for every note of a query: they move the
# probability, not the order, and so carry the "nothing relevant" answer).
FEATURES: tuple[str, ...] = (
    "bm25",  # BM25 score over the best BM25 score of the query
    "bm25_rr",  # 1 / BM25 rank (0: not among BM25's candidates)
    "coverage",  # share of the query's IDF weight the note holds
    "cosine",  # best chunk's cosine (below the vector list: its last cosine)
    "cosine_top3",  # mean cosine of the note's best three chunks: the note as a whole
    "cosine_gap",  # its cosine minus the best cosine of any other note (> 0 only for the first)
    "cosine_rr",  # 1 / vector rank (0: not among the vector candidates)
    "title_share",  # share of the query's words in the note's title
    "named",  # 1 when the whole query is the note's title, alias, id or file name
    "heading",  # 1 when the whole query is one of the note's headings
    "both",  # 1 when both legs found it
    "q_coverage",  # the best coverage any note has
    "q_cosine",  # the best cosine any note has
    "q_unknown",  # share of the query's weight in words no note has
)


@dataclass(frozen=True, slots=True)
class Model:
    """A logistic model over standardised features, and the probability below which nothing is relevant."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float
    names: tuple[str, ...] = FEATURES

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Model:
        def floats(key: str) -> tuple[float, ...]:
            return tuple(float(v) for v in data[key])  # type: ignore[attr-defined]

        return cls(
            floats("mean"),
            floats("scale"),
            floats("coef"),
            float(data["intercept"]),  # type: ignore[arg-type]
            float(data["threshold"]),  # type: ignore[arg-type]
            tuple(str(n) for n in data["names"]),  # type: ignore[attr-defined]
        )

    def contributions(self, x: Sequence[float]) -> dict[str, float]:
        """Each feature's share of the log-odds (``--explain``)."""
        return {
            n: w * (v - m) / s for n, w, v, m, s in zip(self.names, self.coef, x, self.mean, self.scale, strict=True)
        }

    def probability(self, x: Sequence[float]) -> float:
        """How likely the note with features ``x`` is the answer."""
        z = self.intercept + sum(self.contributions(x).values())
        return 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0


@dataclass(slots=True)
class Evidence:
    """What the two legs said of one candidate note."""

    bm25: float = 0.0
    bm25_rank: int = 0
    coverage: float = 0.0
    cosine: float | None = None
    cosine_top3: float | None = None
    vec_rank: int = 0
    title_share: float = 0.0
    named: bool = False
    heading: bool = False


def feature_rows(
    pool: Mapping[str, Evidence], *, best_coverage: float, unknown_share: float
) -> dict[str, tuple[float, ...]]:
    """The feature vector (``FEATURES``) of every candidate of one query."""
    top_bm25 = max((e.bm25 for e in pool.values()), default=0.0) or 1.0
    cosines = sorted((e.cosine for e in pool.values() if e.cosine is not None), reverse=True)
    floor = cosines[-1] if cosines else 0.0  # a note the vector list does not hold is at most this close
    best_cos = cosines[0] if cosines else 0.0
    second = cosines[1] if len(cosines) > 1 else floor
    out: dict[str, tuple[float, ...]] = {}
    for path, e in pool.items():
        cos = e.cosine if e.cosine is not None else floor
        top3 = e.cosine_top3 if e.cosine_top3 is not None else cos
        other = second if e.cosine is not None and cos >= best_cos else best_cos
        out[path] = (
            e.bm25 / top_bm25,
            1.0 / e.bm25_rank if e.bm25_rank else 0.0,
            e.coverage,
            cos,
            top3,
            cos - other,
            1.0 / e.vec_rank if e.vec_rank else 0.0,
            e.title_share,
            1.0 if e.named else 0.0,
            1.0 if e.heading else 0.0,
            1.0 if e.bm25_rank and e.vec_rank else 0.0,
            best_coverage,
            best_cos,
            unknown_share,
        )
    return out
