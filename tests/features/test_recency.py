"""Recency questions answered as asked ("the latest decisions", "what did we do yesterday") and
``list``: notes by filters alone, newest first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mdmem.core.memory import newest_asked

from ..conftest import git, mdmem_in_process


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("What are the latest decisions", "decision"),
        ("what did we decide recently about billing", "decision"),
        ("what did we do yesterday", "handoff"),
        ("where did we leave off last session", "handoff"),
        ("most recent handoff", "handoff"),
        ("our current preferences for code review", "preference"),
        ("the last time we had a payment incident", "problem"),
        ("newest facts about the staging host", "fact"),
        ("what decisions did we make about billing", None),  # no recency asked
        ("what is the current database host", None),  # no type asked
        ("the last conversation with Ada", None),  # a chat log's notes are all conversations
    ],
)
def test_a_recency_question_names_the_type_it_wants_newest_first(question: str, asked: str | None) -> None:
    found = newest_asked(question)
    assert (found.type if found else None) == asked


def note(root: Path, name: str, title: str, typ: str, body: str, date: str | None = None, extra: str = "") -> None:
    dated = f"created: {date}\n" if date else ""
    (root / "notes" / f"{name}.md").write_text(f"---\ntitle: {title}\ntype: {typ}\n{dated}{extra}---\n{body}\n")


@pytest.fixture(scope="module")
def dated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git vault of dated notes: decisions over a year (the newest dated by its commit alone), a
    person note that says "decisions" more than any decision, and on 2026-11-28 two handoffs and an
    import that says what was done."""
    root = tmp_path_factory.mktemp("recency") / "v"
    (root / "notes").mkdir(parents=True)
    note(root, "db", "Use Postgres for billing", "decision", "We chose Postgres for the billing data.", "2025-12-01")
    note(
        root,
        "queue",
        "Use a queue for invoices",
        "decision",
        "Invoices go through a queue; billing retries.",
        "2026-06-10T09:00:00Z",
        "tags: [billing]\nscope: project:acme\n",
    )
    note(root, "css", "Tailwind for the admin", "decision", "The admin pages use Tailwind.", "2026-09-01")
    note(
        root,
        "ada",
        "Ada Lovelace",
        "person",
        "Ada reviews the latest decisions; decisions, decisions: every decision goes past her.",
        "2026-11-01",
        "identities: [ada@example.com]\n",
    )
    note(root, "h1", "Handoff morning", "handoff", "Fixed the invoice export.", "2026-11-28T09:00:00Z")
    note(root, "h2", "Handoff evening", "handoff", "Reviewed the queue retries.", "2026-11-28T18:00:00Z")
    note(root, "h0", "Handoff before", "handoff", "Planned the export.", "2026-11-20T18:00:00Z")
    note(root, "imp", "Imported, what we did", "note", "What we did yesterday: we did imports.", "2026-11-28T20:00:00Z")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "notes")
    (root / "notes" / "cache.md").write_text(  # no dates of its own: its commit dates it, the newest decision
        "---\ntitle: Cache sessions in Redis\ntype: decision\n---\nSessions are cached in Redis.\n"
    )
    git(root, "add", ".")
    when = "2026-11-15T12:00:00+00:00"
    git(root, "commit", "-qm", "cache", env={"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})
    return root


@pytest.fixture
def vault(dated: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    from mdmem import Vault

    monkeypatch.setenv("MDMEM_NOW", "2026-11-29")
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    return Vault.open(dated)


def test_latest_decisions_come_newest_first_and_a_person_note_does_not_lead(vault: object) -> None:
    hits = vault.recall("What are the latest decisions", 6, explain=True)  # type: ignore[attr-defined]
    assert [h.path for h in hits[:4]] == ["notes/cache.md", "notes/css.md", "notes/queue.md", "notes/db.md"]
    assert hits.info["newest"]["type"] == "decision" and "newest decision first" in hits.info["route"]
    assert hits[0].explain["newest_first"] == 1


def test_latest_decisions_about_a_topic_are_that_topics_decisions_newest_first(vault: object) -> None:
    hits = vault.recall("the latest decisions about billing", 4)  # type: ignore[attr-defined]
    assert [h.path for h in hits[:2]] == ["notes/queue.md", "notes/db.md"]  # not the newer Tailwind one


def test_yesterday_and_last_session_put_the_handoffs_first(vault: object) -> None:
    hits = vault.recall("what did we do yesterday", 5)  # type: ignore[attr-defined]
    assert [h.path for h in hits[:2]] == ["notes/h2.md", "notes/h1.md"]  # that day's, not the import
    hits = vault.recall("where did we leave off last session", 3)  # type: ignore[attr-defined]
    assert hits[0].path == "notes/h2.md"


def test_nothing_moves_when_no_note_has_the_asked_type(vault: object) -> None:
    hits = vault.recall("the latest ideas about invoices", 3)  # type: ignore[attr-defined]
    assert "newest" not in hits.info
    hits = vault.recall("latest decisions", 3, type=["handoff"])  # type: ignore[attr-defined]
    assert "newest" not in hits.info and all(h.type == "handoff" for h in hits)  # the filter is the user's


def test_list_shows_the_filters_notes_newest_first(dated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_NOW", "2026-11-29")

    def listed(*args: str) -> list[str]:
        out = mdmem_in_process("--vault", str(dated), "list", "--json", *args).stdout
        return [r["path"] for r in json.loads(out)["results"]]

    assert listed("--type", "decision") == ["notes/cache.md", "notes/css.md", "notes/queue.md", "notes/db.md"]
    assert listed("--type", "decision", "-n", "2") == ["notes/cache.md", "notes/css.md"]
    assert listed("--tag", "billing") == ["notes/queue.md"]
    assert listed("--scope", "project:acme", "--type", "decision")[-1] == "notes/db.md"  # global notes qualify
    assert listed("--since", "2026-11-28", "--until", "2026-11-28") == ["notes/imp.md", "notes/h2.md", "notes/h1.md"]
    assert listed("--type", "handoff", "--status", "archived") == []
    out = mdmem_in_process("--vault", str(dated), "list", "--type", "handoff", "-n", "1").stdout
    assert "Handoff evening  [handoff]  notes/h2.md  2026-11-28" in out
    empty = mdmem_in_process("--vault", str(dated), "list", "--tag", "nope")
    assert empty.returncode == 0 and "No notes pass these filters." in empty.stderr
