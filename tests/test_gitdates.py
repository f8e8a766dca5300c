"""Dates from git (issue 13): a note without created/updated of its own is dated by the first and last
commit that touched its file, following renames; the frontmatter's dates win; mtime only for what git
does not know."""

from __future__ import annotations

import pytest

from mdmem.git import FileHistory, walk_history
from mdmem.note import note_dates, parse_note

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


@pytest.mark.parametrize(("front", "git_dates", "modified", "want"), [
    ("", (100.0, 200.0), False, ("git", "git", 200.0)),
    ("", (100.0, 200.0), True, ("git", "mtime", 500.0)),  # an edit since the last commit
    ("", None, False, ("mtime", "mtime", 500.0)),  # git does not know the file
    ("created: 1970-01-02\n", (100.0, 200.0), False, ("frontmatter", "git", 86400.0)),  # its own date wins
    ("updated: 1970-01-02\n", None, False, (None, "frontmatter", 86400.0)),
])
def test_note_dates(front: str, git_dates: tuple[float, float] | None, modified: bool,
                    want: tuple[str | None, str | None, float]) -> None:
    note = parse_note(f"---\n{front}---\nbody\n" if front else "body\n", "n.md")
    d = note_dates(note, 500.0, git_dates, modified)
    assert (d.created_from, d.updated_from, d.date) == want
