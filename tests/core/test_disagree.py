"""Pure: what tells two notes on one subject apart (negation, a different choice, a different value),
the names a paraphrase keeps, and why two notes are on one subject."""

from __future__ import annotations

import pytest

from mdmem.core.disagree import disagreement, names, subject


@pytest.mark.parametrize(
    ("a", "b", "says"),
    [
        ("Use Postgres for the main database.", "Use MySQL for the main database.", 'use "postgres" vs use "mysql"'),
        ("Deploys happen on Fridays.", "Never deploy on Fridays.", 'only the second says "never"'),
        ("timeout: 30s", "timeout: 60s", "timeout: 30s vs 60s"),
        ("The rate limit is 100 per minute.", "The rate limit is 500 per minute.", "limit: 100 vs 500"),
        ("We switched to Terraform.", "We switched to Pulumi.", 'switch to "terraform" vs switch to "pulumi"'),
    ],
)
def test_disagreement_names_what_differs(a: str, b: str, says: str) -> None:
    assert says in disagreement(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Use Hotwire for the frontend.", "Use Hotwire for every frontend."),  # the same choice
        ("Use Hotwire instead of a JavaScript framework.", "Use Hotwire for new frontends."),  # negates nothing shared
        ("Deploy with Kamal to Hetzner.", "Releases ship through Kamal onto Hetzner."),
    ],
)
def test_agreeing_notes_give_no_evidence(a: str, b: str) -> None:
    assert disagreement(a, b) == []


def test_names_are_capitalised_words_inside_sentences_and_identifiers() -> None:
    assert names("We back up Postgres to Backblaze B2 at 02:00 UTC. Nightly runs.") == {
        "postgres",
        "backblaze",
        "b2",
        "02:00",
        "utc",
    }


def test_subject_comes_from_entities_names_titles_or_meaning() -> None:
    assert subject(("A", ["Sessions"], "x"), ("B", ["sessions"], "y")) == ["both about sessions"]
    assert subject(("A", [], "on Kamal and Hetzner"), ("B", [], "via Kamal to Hetzner")) == ["both name hetzner, kamal"]
    assert subject(("Session storage", [], ""), ("Session cache", [], "")) == ["titles share session"]
    assert subject(("A", [], ""), ("B", [], ""), 0.8) == ["close in meaning"]
    assert subject(("A", [], ""), ("B", [], ""), 0.3) == []
