"""``[query] ranking = "model"`` through a real index: the learned model ranks, and ``relevance`` says
whose verdict "nothing in the vault is relevant" is: the model's threshold or the rules'."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from mdmem.api.vault import Vault
from mdmem.core.errors import ConfigError
from mdmem.features import judged

from ..conftest import mdmem_in_process

QUESTIONS = ["descaling the coffee machine", "kafka consumer lag", "the unicorn migration plan of Ferrix"]


def answers(vault: Path, monkeypatch: pytest.MonkeyPatch, settings: str) -> dict[str, tuple[list[str], bool]]:
    monkeypatch.setenv("MDMEM_QUERY", settings)
    with Vault.open(vault) as v:
        out = {}
        for q in QUESTIONS:
            hits = v.query(q, 5, vectors=False)
            out[q] = ([h.path for h in hits], hits.info.get("relevant") is not False)
        return out


def test_the_model_ranks_while_the_rules_judge_relevance(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mdmem_in_process("--vault", str(vault_dir), "reindex")
    rules = answers(vault_dir, monkeypatch, "ranking=rules")
    assert rules[QUESTIONS[0]][0] and rules[QUESTIONS[0]][1] and rules[QUESTIONS[1]][1]
    # a model that finds nothing likely enough: its own verdict is "nothing relevant" on every question
    strict = dataclasses.replace(judged.shipped_model(), threshold=0.9999)
    monkeypatch.setattr(judged, "shipped_model", lambda: strict)
    model = answers(vault_dir, monkeypatch, "ranking=model")
    assert [model[q][1] for q in QUESTIONS] == [False, False, False]
    assert model == answers(vault_dir, monkeypatch, "ranking=model,relevance=model")
    mixed = answers(vault_dir, monkeypatch, "ranking=model,relevance=rules")
    for q in QUESTIONS:
        assert mixed[q][0] == model[q][0], q  # the model's order
        assert mixed[q][1] == rules[q][1], q  # the rules' verdict


def test_an_unknown_relevance_is_refused(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_QUERY", "relevance=vibes")
    with pytest.raises(ConfigError, match="relevance must be"):
        with Vault.open(vault_dir) as v:
            v.query("kafka", 5, vectors=False)


def test_the_models_verdict_without_its_ranking_is_refused(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's probability exists only when it ranks: with the fusion alone, ``relevance = "model"``
    would be ignored."""
    monkeypatch.setenv("MDMEM_QUERY", "ranking=rules,relevance=model")
    with pytest.raises(ConfigError, match="needs the model to rank"):
        with Vault.open(vault_dir) as v:
            v.query("kafka", 5, vectors=False)
