"""``[query] ranking = "head"`` (the default): the fusion chooses the first notes, the learned model orders
them. Pure on hand-made candidates, then through a real index against ``ranking = "rules"``."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mdmem.api.vault import Vault
from mdmem.core.rank import Candidate
from mdmem.core.relevance import FEATURES, Evidence, Model
from mdmem.features import judged
from mdmem.features.judged import order_head

from ..conftest import mdmem_in_process

# A model that reads one feature: the best chunk's cosine (every other weight 0).
COSINE_ONLY = Model(
    mean=(0.0,) * len(FEATURES),
    scale=(1.0,) * len(FEATURES),
    coef=tuple(10.0 if n == "cosine" else 0.0 for n in FEATURES),
    intercept=-5.0,
    threshold=0.5,
)


def fused(*paths: str) -> list[Candidate]:
    """Candidates in the fusion's order, scores falling from 1.0."""
    return [Candidate(path=p, score=1.0 - i / 10) for i, p in enumerate(paths)]


def test_the_model_orders_the_head_and_each_place_keeps_its_score() -> None:
    ranked = fused("a.md", "b.md", "graph-only.md", "c.md", "d.md")
    pool = {
        "a.md": Evidence(bm25=9.0, bm25_rank=1, coverage=1.0, cosine=0.30, vec_rank=3),
        "b.md": Evidence(bm25=5.0, bm25_rank=2, coverage=0.5, cosine=0.40, vec_rank=2),
        "c.md": Evidence(cosine=0.80, vec_rank=1),
        "d.md": Evidence(cosine=0.90, vec_rank=1),  # past the head: the model never sees it
    }
    best = order_head(ranked, pool, 4, best_coverage=1.0, unknown_share=0.0, model=COSINE_ONLY)
    assert [c.path for c in ranked] == ["c.md", "b.md", "graph-only.md", "a.md", "d.md"]
    assert [c.score for c in ranked] == [1.0, 0.9, 0.8, 0.7, 0.6]  # the fusion's scale, place by place
    assert math.isclose(best, COSINE_ONLY.probability(_x(ranked[0]))) and round(best, 4) == ranked[0].explain["p"]
    assert ranked[0].explain["fused_rank"] == 4 and ranked[3].explain["fused_rank"] == 1
    assert "p" not in ranked[2].explain  # lent by the graph: no evidence, its place kept
    assert "p" not in ranked[4].explain
    assert set(ranked[0].explain["weights"]) == set(FEATURES)


def test_each_legs_first_notes_join_the_head_in_place_of_the_fusions_last() -> None:
    """A note the vectors put first that the fusion left below the head (RRF weighs a vector place at 0.3
    of a BM25 one) takes the head's last place; the note it displaced leads what follows."""
    ranked = fused("a.md", "b.md", "c.md", "d.md", "e.md", "v.md")
    pool = {f"{p}.md": Evidence(bm25=5.0 - i, bm25_rank=i + 1, coverage=0.5, cosine=0.2) for i, p in enumerate("abcde")}
    pool["v.md"] = Evidence(cosine=0.8, vec_rank=1)
    legs = {"bm25": ["a.md", "b.md"], "vectors": ["v.md", "a.md"]}
    order_head(ranked, pool, 3, legs=legs, per_leg=2, best_coverage=0.5, unknown_share=0.0, model=COSINE_ONLY)
    paths = [c.path for c in ranked]
    assert sorted(paths[:3]) == ["a.md", "b.md", "v.md"] and paths[0] == "v.md"  # joined, then judged first
    assert paths[3:] == ["c.md", "d.md", "e.md"]  # the displaced one first, then the fusion's order
    assert next(c for c in ranked if c.path == "v.md").explain["joined"] == "vectors 1"
    scores = [c.score for c in ranked]
    assert scores[:3] == [1.0, 0.9, 0.8] and scores == sorted(scores, reverse=True) and len(set(scores)) == 6
    again = fused("a.md", "b.md", "c.md", "v.md")
    order_head(again, pool, 3, legs=legs, per_leg=0, best_coverage=0.5, unknown_share=0.0, model=COSINE_ONLY)
    assert "v.md" not in [c.path for c in again[:3]]  # per_leg 0: the fusion alone chooses


def _x(c: Candidate) -> tuple[float, ...]:
    return tuple(c.explain["features"][n] for n in FEATURES)


def test_no_evidence_leaves_the_order_alone() -> None:
    ranked = fused("a.md", "b.md")
    assert order_head(ranked, {}, 10, best_coverage=0.0, unknown_share=0.0, model=COSINE_ONLY) == 0.0
    assert [c.path for c in ranked] == ["a.md", "b.md"]


NOTES = {
    "coffee-descaling.md": "# Descaling the coffee machine\n\nRun citric acid through the espresso machine monthly.",
    "coffee-beans.md": "# Coffee beans\n\nWe buy whole beans from the roastery and grind them for the machine.",
    "coffee-grinder.md": "# Grinder settings\n\nA finer grind for espresso, coarser for the filter coffee machine.",
    "kettle.md": "# The kettle\n\nLimescale builds up in the kettle; vinegar removes it.",
    "kafka-lag.md": "# Kafka consumer lag\n\nLag grows when consumers fall behind the producers.",
    "kafka-topics.md": "# Kafka topics\n\nEach topic has twelve partitions and a retention of a week.",
    "queue-backlog.md": "# Queue backlog alert\n\nThe alert fires when messages wait longer than a minute.",
    "deploy.md": "# Deploying the app\n\nWe deploy with a release train every Tuesday.",
    "rollback.md": "# Rolling back a release\n\nRevert the deploy and rerun the pipeline.",
}
# Paraphrases (BM25 covers little of them: the blend is on) and questions in the notes' own words.
QUESTIONS = [
    "cleaning scale out of the coffee machine",
    "kafka consumers falling behind",
    "how do we ship a release",
    "coffee machine",
    "kafka consumer lag",
    "release",
]


def top(vault: Path, monkeypatch: pytest.MonkeyPatch, settings: str, q: str) -> list[tuple[str, dict[str, Any]]]:
    return ask(vault, monkeypatch, settings, q)[0]


def ask(
    vault: Path, monkeypatch: pytest.MonkeyPatch, settings: str, q: str
) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    monkeypatch.setenv("MDMEM_QUERY", settings)
    with Vault.open(vault) as v:
        hits = v.query(q, 10, priors=False, explain=True)
        return [(h.path, h.explain or {}) for h in hits], hits.info["stages"]


@pytest.fixture
def embedded(tmp_path: Path) -> Path:
    """A small vault of overlapping topics, indexed and embedded with the real model."""
    vault = tmp_path / "vault"
    vault.mkdir()
    for name, text in NOTES.items():
        (vault / name).write_text(text + "\n", encoding="utf-8")
    mdmem_in_process("--vault", str(vault), "reindex")
    mdmem_in_process("--vault", str(vault), "embed")
    return vault


def test_the_head_holds_the_fusions_notes_in_the_models_order(embedded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a model that reads the cosine alone, the fusion's first two come in cosine order where BM25
    answers the question, in the blend's order where it does not (a paraphrase; the model's p still
    shown), and the notes after them stay where the fusion put them."""
    monkeypatch.setattr(judged, "shipped_model", lambda: COSINE_ONLY)
    moved = longer = blended = 0
    for q in QUESTIONS:
        rules = [p for p, _ in top(embedded, monkeypatch, "ranking=rules", q)]
        head, stages = ask(embedded, monkeypatch, "head=2,head_per_leg=0", q)
        paths = [p for p, _ in head]
        assert len(rules) >= 2 and sorted(paths[:2]) == sorted(rules[:2]), q  # the fusion chose them
        longer += len(rules) > 2
        assert paths[2:] == rules[2:], q  # past the head: the fusion's order
        assert all("p" in e for _, e in head[:2]) and all("p" not in e for _, e in head[2:]), q
        assert [e["fused_rank"] for _, e in head[:2]] == [rules.index(p) + 1 for p in paths[:2]], q
        if any("blend:" in st for st in stages):
            blended += 1
            assert paths == rules and "model-head:2 (blend's order)" in stages, q
        else:
            cosines = [e["features"]["cosine"] for _, e in head[:2]]
            assert cosines == sorted(cosines, reverse=True), q  # the model's order
            moved += paths != rules
        assert [p for p, _ in top(embedded, monkeypatch, "head=0", q)] == rules, q  # no head: the fusion
    assert longer and moved and blended  # each branch seen (else this test shows nothing)


def test_the_models_verdict_needs_the_model_to_rank(embedded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mdmem.core.errors import ConfigError

    strict = replace(judged.shipped_model(), threshold=0.9999)  # finds nothing likely enough
    monkeypatch.setattr(judged, "shipped_model", lambda: strict)
    monkeypatch.setenv("MDMEM_QUERY", "relevance=model")
    with Vault.open(embedded) as v:
        hits = v.query(QUESTIONS[0], 5)
    assert hits and hits.info["relevant"] is False  # the head's model judged
    monkeypatch.setenv("MDMEM_QUERY", "")
    with Vault.open(embedded) as v:
        assert v.query(QUESTIONS[0], 5).info["relevant"] is True  # the rules judge by default
    for settings in ("ranking=rules,relevance=model", "head=0,relevance=model"):
        monkeypatch.setenv("MDMEM_QUERY", settings)
        with pytest.raises(ConfigError, match="needs the model to rank"):
            with Vault.open(embedded) as v:
                v.query("kafka", 5)
