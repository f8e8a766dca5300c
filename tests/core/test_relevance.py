"""The relevance model's features and probability (pure)."""

from __future__ import annotations

import math

from mdmem.core.relevance import FEATURES, Evidence, Model, feature_rows
from mdmem.core.relevance_model import MODEL


def test_feature_rows_read_both_legs_and_the_cosine_gap() -> None:
    pool = {
        "a.md": Evidence(bm25=4.0, bm25_rank=1, coverage=1.0, cosine=0.7, cosine_top3=0.6, vec_rank=1, named=True),
        "b.md": Evidence(bm25=2.0, bm25_rank=2, coverage=0.5),
        "c.md": Evidence(cosine=0.5, cosine_top3=0.5, vec_rank=2),
    }
    rows = {
        p: dict(zip(FEATURES, x, strict=True))
        for p, x in feature_rows(pool, best_coverage=1.0, unknown_share=0.0).items()
    }
    assert rows["a.md"]["bm25"] == 1.0 and rows["b.md"]["bm25"] == 0.5 and rows["c.md"]["bm25_rr"] == 0.0
    assert math.isclose(rows["a.md"]["cosine_gap"], 0.2) and math.isclose(rows["c.md"]["cosine_gap"], -0.2)
    assert rows["b.md"]["cosine"] == 0.5  # not in the vector list: at most its last cosine
    assert rows["a.md"]["both"] == 1.0 and rows["b.md"]["both"] == 0.0 and rows["a.md"]["named"] == 1.0


def test_the_model_is_a_probability_whose_contributions_sum_to_its_log_odds() -> None:
    model = Model.from_dict(MODEL)
    assert model.names == FEATURES and 0.0 < model.threshold < 1.0
    x = (1.0, 1.0, 1.0, 0.7, 0.6, 0.2, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.7, 0.0)
    weak = (0.0, 0.0, 0.0, 0.3, 0.3, -0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.2, 0.3, 0.8)
    p = model.probability(x)
    z = model.intercept + sum(model.contributions(x).values())
    assert math.isclose(p, 1 / (1 + math.exp(-z))) and p > model.probability(weak)
    assert model.probability(weak) < model.threshold < p
