"""The shipped relevance model: written by benchmarks/fit_relevance.py, not by hand."""

MODEL = {
    "names": [
        "bm25",
        "bm25_rr",
        "coverage",
        "cosine",
        "cosine_top3",
        "cosine_gap",
        "cosine_rr",
        "title_share",
        "named",
        "heading",
        "both",
        "q_coverage",
        "q_cosine",
        "q_unknown",
    ],
    "mean": [0.0] * 14,
    "scale": [1.0] * 14,
    "coef": [0.0] * 14,
    "intercept": 0.0,
    "threshold": 0.0,
}
