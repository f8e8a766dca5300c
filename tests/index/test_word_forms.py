"""Word forms, prefixes and exact identifiers in BM25, on the real whoosh index of a small vault."""

from __future__ import annotations

import pytest

from mdmem import Vault
from mdmem.core.text import terms
from mdmem.index import lexical_spelling

NOTES = {
    "alpha": "The deployment ran at night for the team.",
    "beta": "The team deployed it at night.",
    "gamma": "At night the team will deploy it.",
    "organisation": "Our organization organized a meetup.",
    "gateway": "ERR_PAY_504 is raised by the payment gateway.",
    "timeouts": "ERR_PAY_TIMEOUT: paying customers wait.",
    "users-api": "Call getUsers to list them.",
    "user-api": "Call getUser to read one.",
    "spot": "# Spot\n\nA spot on the map; spots on the wall.",
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Vault:
    root = tmp_path_factory.mktemp("forms")
    for name, body in NOTES.items():
        (root / f"{name}.md").write_text(body + "\n")
    v = Vault.open(root)
    v.reindex(full=True)
    return v


def found(v: Vault, query: str) -> list[str]:
    return [h.path.removesuffix(".md") for h in v.search(query)]


@pytest.mark.parametrize("query", ["deploy", "deployed", "deployment", "Deploying", "deploys"])
def test_every_form_finds_every_form(vault: Vault, query: str) -> None:
    assert set(found(vault, query)) == {"alpha", "beta", "gamma"}


@pytest.mark.parametrize(("query", "first"), [("deployment", "alpha"), ("deployed", "beta"), ("deploy", "gamma")])
def test_the_form_as_written_ranks_first(vault: Vault, query: str, first: str) -> None:
    hits = vault.search(query)
    assert hits[0].path == f"{first}.md"
    assert hits[0].score > hits[1].score  # ahead by the exact form, not by a tie broken by path


def test_a_prefix_finds_the_words_it_starts(vault: Vault) -> None:
    assert set(found(vault, "deploy*")) == {"alpha", "beta", "gamma"}
    assert set(found(vault, "deplo*")) == {"alpha", "beta", "gamma"}  # no word is "deplo"
    assert found(vault, "organiz*") == ["organisation"]
    assert vault.store.lexical.corrections("organiz*") == {}  # a prefix is no typo
    hits = vault.store.lexical.search("deplo*", 10, coverage=True)
    assert {round(h.coverage, 6) for h in hits} == {1.0}  # one word of the query, however many forms


def test_a_prefix_expands_to_a_bounded_number_of_forms(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    vault.store.repair()
    with vault.store.lexical.ix.searcher() as s:
        assert set(lexical_spelling.expand(s, "deploy")) == {"deploy"}  # three forms, one stem
        monkeypatch.setattr(lexical_spelling, "PREFIX_SCAN", 3)
        monkeypatch.setattr(lexical_spelling, "PREFIX_TERMS", 2)
        assert len(lexical_spelling.expand(s, "")) <= 2  # every word starts with "": the cap holds


def test_cold_and_warm_searches_agree_on_forms_and_prefixes(vault: Vault) -> None:
    """The first BM25 search of a process goes through whoosh, later ones through cached arrays."""
    vault.store.repair()
    lex = vault.store.lexical
    lex.close()  # a fresh searcher: its first search is whoosh's
    query = "deployed organiz* ERR_PAY_504 getUsers"
    runs = [{h.path: (round(h.score, 6), round(h.coverage, 6)) for h in lex.search(query, 20, coverage=True)}]
    runs.append({h.path: (round(h.score, 6), round(h.coverage, 6)) for h in lex.search(query, 20, coverage=True)})
    assert runs[0] == runs[1] and len(runs[0]) >= 5


def test_identifiers_stay_exact(vault: Vault) -> None:
    assert {"err_pay_504", "v1.2.3", "user.emails"} <= set(terms("ERR_PAY_504 v1.2.3 user.emails"))  # unstemmed
    hits = vault.search("ERR_PAY_504")
    assert hits[0].path == "gateway.md"
    assert hits[0].score > 1.5 * hits[1].score  # the other ERR_PAY_ note shares parts, not the identifier
    assert found(vault, "getUsers")[0] == "users-api"  # a camelCase word as written first
    assert found(vault, "getUser")[0] == "user-api"


def test_a_word_the_vault_has_in_another_form_is_not_corrected(vault: Vault) -> None:
    vault.store.repair()
    lex = vault.store.lexical
    assert lex.corrections("spotting") == {}  # the vault says spot and spots
    assert lex.corrections("deploying organizing") == {}
    assert found(vault, "spotting") == ["spot"]
    assert lex.corrections("spto map") == {}  # short words are never read as typos
