"""The lines a person reads at a glance: a hit's connections on one short line (a URL once), and dates
in the reader's time zone while ``--json`` keeps UTC."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mdmem.render.lines import hints_line, local_time
from mdmem.results import LinkHint

from ..conftest import git, mdmem_in_process

URL = "https://developer.mozilla.org/en-US/docs/Web/HTTP/Reference/Headers/Content-Security-Policy"
HINTS = [
    LinkHint("cites", "out", f"ref:url:{URL}", URL, kind="external"),
    LinkHint("depends_on", "out", "notes/q3-budget", "Q3 budget approved"),
    LinkHint(
        "mentions",
        "in",
        "notes/a-note-with-a-very-long-title-indeed",
        "A note with a very long title, longer than anyone reads at a glance",
    ),
    LinkHint("cites", "out", "ref:url:https://example.com/x", "https://example.com/x", kind="external"),
]


def test_a_hits_links_are_one_short_line_each_url_once() -> None:
    short = hints_line(HINTS, short=True)
    assert short.count("developer.mozilla.org") == 1 and "ref:url" not in short and "\n" not in short
    assert len(short) <= 120 and short.endswith("more") and short.startswith("cites → https://developer")
    full = hints_line(HINTS)  # MCP: ids where they say more than the title, each URL once
    assert full.count(URL) == 1 and "depends_on → Q3 budget approved (notes/q3-budget)" in full


@pytest.fixture
def pacific(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize(
    ("iso", "day", "minutes"),
    [
        ("2026-08-10T03:00:00Z", "2026-08-09", "2026-08-09 20:00 PDT"),
        ("2026-08-09T20:00:00-07:00", "2026-08-09", "2026-08-09 20:00 PDT"),
        ("2026-01-10T07:30:00+00:00", "2026-01-09", "2026-01-09 23:30 PST"),
        ("2026-08-10", "2026-08-10", "2026-08-10"),  # a bare day names the day
        (None, "?", "?"),
        ("not a date at all", "not a date", "not a date at all"),
    ],
)
def test_local_time(pacific: None, iso: str | None, day: str, minutes: str) -> None:
    assert local_time(iso) == day
    assert local_time(iso, minutes=True) == minutes


def test_a_note_committed_in_the_evening_shows_its_own_day_and_json_keeps_utc(tmp_path: Path, pacific: None) -> None:
    vault = tmp_path / "v"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes" / "release.md").write_text("# Release train\n\nWe ship on Fridays.\n")
    git(vault, "init", "-q", "-b", "main")
    mdmem_in_process("init", str(vault))
    git(vault, "add", "-A")
    git(
        vault,
        "commit",
        "-qm",
        "release",
        env={"GIT_AUTHOR_DATE": "2026-08-09T20:00:00-07:00", "GIT_COMMITTER_DATE": "2026-08-09T20:00:00-07:00"},
    )
    mdmem_in_process("--vault", str(vault), "reindex")
    text = mdmem_in_process("--vault", str(vault), "timeline", "notes/release", "--all").stdout
    assert "2026-08-09  Release train" in text and "2026-08-10" not in text
    data = json.loads(mdmem_in_process("--vault", str(vault), "timeline", "notes/release", "--json").stdout)
    assert data["anchor"]["date"].startswith("2026-08-10T03:00")
    history = mdmem_in_process("--vault", str(vault), "history", "notes/release").stdout
    assert " 2026-08-09 release" in history
