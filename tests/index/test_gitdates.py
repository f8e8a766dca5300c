"""Dates from git: a note without created/updated of its own is dated by the first and last
commit that touched its file, following renames; on a fresh clone (every mtime the clone's) timeline,
--since, recency and get follow git; the frontmatter's dates win; mtime only for what git does not know."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

import pytest

from mdmem.adapters.git import FileHistory, walk_history
from mdmem.core.note import note_dates, parse_note

from ..conftest import git, mdmem, mdmem_in_process


def ts(day: str) -> float:
    return dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC).timestamp()


def commit(repo: Path, day: str, message: str, *paths: str) -> None:
    """Commit what is staged (and ``paths``) as of noon on ``day``, author and committer alike."""
    if paths:
        git(repo, "add", "--", *paths)
    when = f"{day}T12:00:00+00:00"
    git(repo, "commit", "-qm", message, env={"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})


def write(repo: Path, rel: str, text: str) -> None:
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text)


def jrun(vault: Path, *args: str) -> Any:
    return json.loads(mdmem_in_process("--vault", str(vault), *args, "--json").stdout)


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """Undated notes committed over two years (an add, edits, a ``git mv``), and one note with
    frontmatter dates, cloned fresh: every file's mtime is now. One untracked note beside them."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    write(origin, "notes/alpha.md", "# Alpha\n\nA memo about the ledger.\n")
    write(origin, "notes/dated.md", "---\ncreated: 2019-05-01\nupdated: 2019-06-01\n---\n# Dated\n\nA memo.\n")
    commit(origin, "2021-03-01", "alpha and dated", "notes")
    write(origin, "notes/beta.md", "# Beta\n\nA memo about the gateway.\n")
    commit(origin, "2021-07-01", "beta", "notes/beta.md")
    write(origin, "notes/gamma.md", "# Gamma\n\nA memo about the queue.\n")
    with open(origin / "notes/alpha.md", "a") as fh:
        fh.write("More on the ledger.\n")
    commit(origin, "2022-01-10", "gamma; alpha edited", "notes")
    (origin / "archive").mkdir()
    git(origin, "mv", "notes/beta.md", "archive/beta-moved.md")
    commit(origin, "2022-06-15", "move beta")
    with open(origin / "notes/gamma.md", "a") as fh:
        fh.write("The queue drains now.\n")
    commit(origin, "2023-02-20", "gamma edited", "notes/gamma.md")
    vault = tmp_path / "vault"
    git(tmp_path, "clone", "-q", str(origin), str(vault))
    (vault / ".git" / "info" / "exclude").write_text(".mdmem/\n")
    write(vault, "notes/loose.md", "# Loose\n\nA memo nobody committed.\n")
    os.utime(vault / "notes/loose.md", (ts("2024-01-01"), ts("2024-01-01")))
    return vault


EXPECTED = {  # path: (created, updated) of the note
    "notes/alpha.md": ("2021-03-01", "2022-01-10"),
    "archive/beta-moved.md": ("2021-07-01", "2022-06-15"),  # its first commit is the one before the move
    "notes/gamma.md": ("2022-01-10", "2023-02-20"),
    "notes/dated.md": ("2019-05-01", "2019-06-01"),  # the frontmatter's, not its commit's
    "notes/loose.md": ("2024-01-01", "2024-01-01"),  # untracked: its file's mtime
}
SOURCES = {
    "notes/alpha.md": "git",
    "archive/beta-moved.md": "git",
    "notes/gamma.md": "git",
    "notes/dated.md": "frontmatter",
    "notes/loose.md": "mtime",
}


def day_of(value: str | float | None) -> str | None:
    if isinstance(value, float):
        return dt.datetime.fromtimestamp(value, dt.UTC).date().isoformat()
    return value[:10] if value else None


@pytest.mark.parametrize("full", [True, False])
def test_a_fresh_clone_dates_its_notes_by_git(clone: Path, full: bool) -> None:
    from mdmem import Vault

    v = Vault.open(clone)
    v.reindex(full=full)
    for path, (created, updated) in EXPECTED.items():
        doc = jrun(clone, "get", path)
        assert (day_of(doc["created"]), day_of(doc["updated"])) == (created, updated), path
        assert doc["created_from"] == doc["updated_from"] == SOURCES[path], path
    rows = v.store.catalog.rows(EXPECTED)
    assert {p: day_of(r["date"]) for p, r in rows.items()} == {p: u for p, (_, u) in EXPECTED.items()}
    # --since/--until and the hits' dates follow git
    hits = jrun(clone, "search", "memo", "--since", "2022-01-01", "--until", "2022-12-31")["results"]
    assert {h["path"]: h["date"][:10] for h in hits} == {
        "notes/alpha.md": "2022-01-10",
        "archive/beta-moved.md": "2022-06-15",
    }
    assert [h["path"] for h in jrun(clone, "search", "memo", "--until", "2020-12-31")["results"]] == ["notes/dated.md"]
    # the timeline: authored, else created, oldest first
    doc = jrun(clone, "timeline", "notes/gamma", "--all", "--no-vectors")
    assert [i["path"] for i in doc["before"]] == ["notes/dated.md", "notes/alpha.md", "archive/beta-moved.md"]
    assert [i["path"] for i in doc["after"]] == ["notes/loose.md"]
    assert doc["anchor"]["date"][:10] == "2022-01-10"


def test_recency_follows_git(clone: Path) -> None:
    """A "latest" query weighs recency by the notes' git dates: among the committed notes about a
    topic, the one committed last comes first."""
    from mdmem import Vault

    for name, day in (("old", "2021-01-05"), ("new", "2023-09-09")):
        write(clone, f"notes/{name}-plan.md", f"# Release plan {name}\n\nThe release plan for the harbour.\n")
        commit(clone, day, name, f"notes/{name}-plan.md")
    os.utime(clone / "notes/new-plan.md", (ts("2020-01-01"), ts("2020-01-01")))  # mtimes say the opposite
    v = Vault.open(clone)
    v.reindex(full=True)
    hits = jrun(clone, "recall", "latest release plan harbour", "--no-vectors")["results"]
    assert [h["path"] for h in hits][:2] == ["notes/new-plan.md", "notes/old-plan.md"]


@pytest.mark.parametrize(
    ("query", "now"), [("the ledger and the queue in 2023", None), ("the ledger and the queue last week", "2023-03-01")]
)
def test_recall_time_windows_follow_git(
    clone: Path, monkeypatch: pytest.MonkeyPatch, query: str, now: str | None
) -> None:
    from mdmem import Vault

    if now:
        monkeypatch.setenv("MDMEM_NOW", now)
    v = Vault.open(clone)
    v.reindex()
    hits = v.recall(query, 5, explain=True, vectors=False)
    assert hits.info["intent"] == "when"
    assert [h.path for h in hits if (h.explain or {}).get("in_window")] == ["notes/gamma.md"]  # last commit 2023-02-20


def test_commits_through_the_hooks_move_the_dates(clone: Path) -> None:
    from mdmem import Vault

    mdmem("--vault", str(clone), "hooks", "install")
    mdmem("--vault", str(clone), "reindex")
    with open(clone / "notes/alpha.md", "a") as fh:
        fh.write("The ledger closed.\n")
    write(clone, "notes/delta.md", "# Delta\n\nA memo that came late.\n")
    commit(clone, "2024-03-03", "alpha edited, delta added", "notes")  # the post-commit hook runs
    git(clone, "mv", "notes/gamma.md", "archive/gamma.md")
    commit(clone, "2024-04-04", "move gamma")
    v = Vault.open(clone)
    rows = v.store.catalog.rows(["notes/alpha.md", "notes/delta.md", "archive/gamma.md"])
    assert {p: (r["created"][:10], r["updated"][:10], day_of(r["date"])) for p, r in rows.items()} == {
        "notes/alpha.md": ("2021-03-01", "2024-03-03", "2024-03-03"),
        "notes/delta.md": ("2024-03-03", "2024-03-03", "2024-03-03"),  # new: created = updated = its commit
        "archive/gamma.md": ("2022-01-10", "2024-04-04", "2024-04-04"),  # a move keeps its first commit
    }
    assert v.store.catalog.get_meta("last_commit") == git(clone, "rev-parse", "HEAD").strip()
    # a checkout back (HEAD no longer descends from the indexed commit) dates the notes as they were
    git(clone, "checkout", "-q", "HEAD~2")
    v = Vault.open(clone)
    alpha = v.store.catalog.rows(["notes/alpha.md"])["notes/alpha.md"]
    assert (alpha["updated"][:10], alpha["updated_from"]) == ("2022-01-10", "git")
    assert v.store.catalog.rows(["notes/delta.md"]) == {}


def test_a_restored_file_is_dated_by_git_again(clone: Path) -> None:
    """A tracked note deleted by hand and restored with git: no commit brings it back, HEAD has it."""
    from mdmem import Vault

    mdmem("--vault", str(clone), "hooks", "install")
    v = Vault.open(clone)
    v.reindex()
    (clone / "notes/alpha.md").unlink()
    assert v.reindex().deleted == ["notes/alpha.md"]
    git(clone, "checkout", "-q", "--", "notes/alpha.md")  # post-checkout (files): the hook compares all
    alpha = Vault.open(clone).store.catalog.rows(["notes/alpha.md"])["notes/alpha.md"]
    assert (alpha["created"][:10], alpha["updated"][:10], alpha["updated_from"]) == ("2021-03-01", "2022-01-10", "git")


def test_an_uncommitted_edit_is_dated_by_its_mtime_until_committed(clone: Path) -> None:
    from mdmem import Vault

    mdmem("--vault", str(clone), "hooks", "install")
    v = Vault.open(clone)
    v.reindex()
    path = clone / "notes/gamma.md"
    path.write_text(path.read_text() + "Edited, not committed.\n")
    os.utime(path, (ts("2025-01-01"), ts("2025-01-01")))
    v.reindex()
    doc = jrun(clone, "get", "notes/gamma")
    assert (doc["created"][:10], doc["created_from"]) == ("2022-01-10", "git")
    assert (doc["updated"][:10], doc["updated_from"]) == ("2025-01-01", "mtime")
    commit(clone, "2025-02-02", "gamma edited", "notes/gamma.md")
    doc = jrun(clone, "get", "notes/gamma")
    assert (doc["updated"][:10], doc["updated_from"]) == ("2025-02-02", "git")
    # git only rewrote the file (a checkout of the same text): the commit still dates it
    git(clone, "checkout", "-q", "HEAD~1", "--", "notes/gamma.md")
    git(clone, "checkout", "-q", "HEAD", "--", "notes/gamma.md")
    v.reindex()
    assert jrun(clone, "get", "notes/gamma")["updated"][:10] == "2025-02-02"


def test_an_index_of_a_folder_without_git_uses_mtimes(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "# A\n\nplain\n")
    os.utime(tmp_path / "a.md", (ts("2020-02-02"), ts("2020-02-02")))
    mdmem_in_process("--vault", str(tmp_path), "reindex")
    doc = jrun(tmp_path, "get", "a")
    assert (doc["created"][:10], doc["updated"][:10], doc["updated_from"]) == ("2020-02-02", "2020-02-02", "mtime")


# -- the pure parts ------------------------------------------------------------------------------


def test_walk_history_follows_renames_back_and_stops_at_an_add() -> None:
    commits = [  # newest first
        (50.0, [("M", "c.md", None)]),
        (40.0, [("R", "c.md", "b.md")]),
        (30.0, [("A", "b.md", None), ("D", "gone.md", None)]),
        (20.0, [("D", "b.md", None), ("M", "gone.md", None)]),  # an older file named b.md
        (10.0, [("A", "b.md", None), ("A", "gone.md", None), ("A", "a.md", None)]),
    ]
    assert walk_history(commits) == {
        "c.md": FileHistory(30.0, 50.0, None),
        "a.md": FileHistory(10.0, 10.0, None),
    }
    # a range of commits: files that were there before it keep their name before it as origin
    assert walk_history(commits[:2]) == {"c.md": FileHistory(40.0, 50.0, "b.md")}


@pytest.mark.parametrize(
    ("front", "git_dates", "modified", "want"),
    [
        ("", (100.0, 200.0), False, ("git", "git", 200.0)),
        ("", (100.0, 200.0), True, ("git", "mtime", 500.0)),  # an edit since the last commit
        ("", None, False, ("mtime", "mtime", 500.0)),  # git does not know the file
        ("created: 1970-01-02\n", (100.0, 200.0), False, ("frontmatter", "git", 86400.0)),  # its own date wins
        ("updated: 1970-01-02\n", None, False, (None, "frontmatter", 86400.0)),
    ],
)
def test_note_dates(
    front: str, git_dates: tuple[float, float] | None, modified: bool, want: tuple[str | None, str | None, float]
) -> None:
    note = parse_note(f"---\n{front}---\nbody\n" if front else "body\n", "n.md")
    d = note_dates(note, 500.0, git_dates, modified)
    assert (d.created_from, d.updated_from, d.date) == want
