"""Fit the relevance model of ``[query] ranking = "model"`` on the corpora's self-generated queries.

    python benchmarks/fit_relevance.py --cache-dir /tmp/eval-corpora-x [--per-kind 120] [--write]

Every corpus vault under the cache (``corpus-*/vault``, as ``mdmem eval --corpus`` leaves them,
embedded) gives its self-generated queries (``core/self_queries``, seed 1: not the draw
``eval --self`` reports on); each query's candidates (both legs' lists) are feature rows
(``core/relevance.FEATURES``) labelled 1 for the note that answers it. The queries of the other
corpora asked in a vault are its no-answer queries: every candidate 0. The written questions of
benchmarks/corpora/*.yaml, the gold set and LoCoMo are never read.

It prints, per corpus held out (fitted on the others), R@1/R@10/MRR of the fusion's order
(ranking = "rules"), of the fusion's first ten in the model's order (ranking = "head", the default) and
of the model's order over every candidate (ranking = "model"), and the share of no-answer queries the
threshold flags; then fits on all corpora, and with --write writes mdmem/core/relevance_model.py.
The threshold is the probability below which at most 2% of the answerable queries' best candidate
falls.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from mdmem import Vault
from mdmem.core.rank import make_filters
from mdmem.core.relevance import FEATURES
from mdmem.edges.evaluate import self_suite

MUTED = 0.02  # share of answerable queries the threshold may call unanswered
CROSS = int(os.environ.get("FIT_CROSS", "100"))  # no-answer queries drawn from each other corpus


def collect(folder: Path, queries: list[Any]) -> list[tuple[list[str], np.ndarray, set[str], list[str]]]:
    """Per query: candidate paths, their feature rows, the answers, and `query`'s order by the rules."""
    from mdmem.features.hybrid import hybrid_search

    out = []
    with Vault.open(folder) as v:
        store, sem = v.store, v.semantic
        base = sem.query_settings
        judged, plain = replace(base, ranking="model"), replace(base, ranking="rules")
        filters = make_filters(visible_at=v.now())
        for i, q in enumerate(queries):
            sem.__dict__["query_settings"] = judged  # a cached property: the settings this read uses
            cands, _ = hybrid_search(store, sem, q.text, 200, filters, prior_weight=0.0)
            rows = [(c.path, c.explain["features"]) for c in cands if "features" in c.explain]
            sem.__dict__["query_settings"] = plain
            rules, _ = hybrid_search(store, sem, q.text, 50, filters, prior_weight=0.0)
            x = np.array([[f[n] for n in FEATURES] for _, f in rows], dtype=float).reshape(-1, len(FEATURES))
            out.append(([p for p, _ in rows], x, set(q.relevant), [c.path for c in rules]))
            if i % 100 == 0:
                print(f"  {folder.parent.name}: {i}/{len(queries)}", file=sys.stderr)
    return out


def fit(
    x: np.ndarray, y: np.ndarray, l2: float = 1.0, iters: int = 30
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """L2-regularised logistic regression by Newton's method on standardised features."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    w = np.zeros(z.shape[1])
    reg = np.full(z.shape[1], l2)
    reg[0] = 0.0
    for _ in range(iters):
        p = 1 / (1 + np.exp(-z @ w))
        grad = z.T @ (p - y) + reg * w
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(reg + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return mean, scale, w[1:], float(w[0])


def prob(model: tuple[np.ndarray, np.ndarray, np.ndarray, float], x: np.ndarray) -> np.ndarray:
    mean, scale, coef, b = model
    return 1 / (1 + np.exp(-(b + ((x - mean) / scale) @ coef)))


def metrics(orders: list[list[str]], answers: list[set[str]]) -> tuple[float, float, float]:
    r1 = r10 = mrr = 0.0
    for order, ans in zip(orders, answers, strict=True):
        ranks = [i for i, p in enumerate(order, 1) if p in ans]
        r1 += bool(ranks and ranks[0] == 1)
        r10 += bool(ranks and ranks[0] <= 10)
        mrr += 1 / ranks[0] if ranks else 0.0
    n = max(len(orders), 1)
    return r1 / n, r10 / n, mrr / n


def head_order(
    model: Any, paths: list[str], x: np.ndarray, rules: list[str], head: int = 10, per_leg: int = 2
) -> list[str]:
    """The fusion's order with its first ``head`` notes in the model's order, each leg's first ``per_leg``
    notes joining them in place of the fusion's last ones (``features.judged.order_head``; a note
    without features keeps its place)."""
    p = dict(zip(paths, prob(model, x), strict=True)) if len(x) else {}
    legs = []
    for name in ("bm25_rr", "cosine_rr"):
        col = x[:, FEATURES.index(name)] if len(x) else np.zeros(0)
        legs += [paths[i] for i in np.argsort(-col, kind="stable") if col[i] > 0][:per_leg]
    top = rules[:head]
    joined = [c for c in dict.fromkeys(legs) if c not in top]
    top = [*top[: max(0, len(top) - len(joined))], *joined][:head]
    slots = [i for i, c in enumerate(top) if c in p]
    judged = sorted((top[i] for i in slots), key=lambda c: -p[c])
    for i, c in zip(slots, judged, strict=True):
        top[i] = c
    return top + [c for c in rules if c not in set(top)]


def threshold(model: Any, data: list[Any]) -> float:
    tops = sorted(float(prob(model, x).max()) for _, x, ans, _ in data if len(x) and ans)
    return tops[int(MUTED * len(tops))] if tops else 0.5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache-dir", type=Path, required=True)
    ap.add_argument("--per-kind", type=int, default=120)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    folders = sorted(args.cache_dir.glob("corpus-*/vault"))
    if not folders:
        sys.exit(f"no corpus-*/vault under {args.cache_dir}: run mdmem eval --corpus … --cache-dir there first")
    suites = {f: self_suite(f, f.parent.name.split("-")[1], per_kind=args.per_kind, seed=1) for f in folders}
    rng = random.Random(1)
    data: dict[Path, list[Any]] = {}
    cross: dict[Path, list[Any]] = {}
    for f, suite in suites.items():
        qs = suite.vaults[0][1]
        data[f] = collect(f, qs)
        others = [
            q for g, s in suites.items() if g != f for q in rng.sample(s.vaults[0][1], min(CROSS, len(s.vaults[0][1])))
        ]
        cross[f] = [(p, x, set(), r) for p, x, _, r in collect(f, others)]

    def stack(parts: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        xs = [x for _, x, _, _ in parts if len(x)]
        ys = [np.array([1.0 if p in ans else 0.0 for p in paths]) for paths, x, ans, _ in parts if len(x)]
        return np.vstack(xs), np.concatenate(ys)

    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(
        f"{'held out':<34} {'n':>5}  {'rules R@1':>9} {'R@10':>6} {'MRR':>6}  {'head R@1':>9} {'R@10':>6} {'MRR':>6}"
        f"  {'model R@1':>9} {'R@10':>6} {'MRR':>6}  {'flagged':>7} {'muted':>6}"
    )
    for f in folders:
        train = [r for g in folders if g != f for r in (*data[g], *cross[g])]
        model = fit(*stack(train))
        t = threshold(model, [r for g in folders if g != f for r in data[g]])
        answers = [ans for _, _, ans, _ in data[f]]
        rules = metrics([r for _, _, _, r in data[f]], answers)
        orders = [
            [p for _, p in sorted(zip(-prob(model, x), paths, strict=True))] if len(x) else []
            for paths, x, _, _ in data[f]
        ]
        learned = metrics(orders, answers)
        headed = metrics([head_order(model, paths, x, r) for paths, x, _, r in data[f]], answers)
        flagged = np.mean([len(x) == 0 or prob(model, x).max() < t for _, x, _, _ in cross[f]])
        muted = np.mean([len(x) > 0 and prob(model, x).max() < t for _, x, _, _ in data[f]])
        print(
            f"{f.parent.name:<34} {len(answers):>5}  {rules[0]:>9.3f} {rules[1]:>6.3f} {rules[2]:>6.3f}"
            f"  {headed[0]:>9.3f} {headed[1]:>6.3f} {headed[2]:>6.3f}"
            f"  {learned[0]:>9.3f} {learned[1]:>6.3f} {learned[2]:>6.3f}  {flagged:>7.3f} {muted:>6.3f}"
        )
    model = fit(*stack([r for f in folders for r in (*data[f], *cross[f])]))
    t = threshold(model, [r for f in folders for r in data[f]])
    mean, scale, coef, b = model
    print("\nfeature          coef (per standard deviation)")
    for n, c in zip(FEATURES, coef, strict=True):
        print(f"{n:<16} {c:+.3f}")
    print(f"intercept {b:+.3f}; threshold {t:.4f}")
    if args.write:
        target = Path(__file__).resolve().parents[1] / "mdmem" / "core" / "relevance_model.py"
        target.write_text(
            '"""The shipped relevance model: written by benchmarks/fit_relevance.py, not by hand."""\n\n'
            f'MODEL = {{\n    "names": {list(FEATURES)!r},\n'
            f'    "mean": {[round(float(v), 6) for v in mean]!r},\n'
            f'    "scale": {[round(float(v), 6) for v in scale]!r},\n'
            f'    "coef": {[round(float(v), 6) for v in coef]!r},\n'
            f'    "intercept": {round(b, 6)!r},\n    "threshold": {round(t, 6)!r},\n}}\n',
            encoding="utf-8",
        )
        print(f"wrote {target}")


if __name__ == "__main__":
    main()
