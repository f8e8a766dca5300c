"""Issue 15: relative dates and anchored windows in recall; questions about several topics."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from mdmem.core.topics import interleave, split
from mdmem.core.when import around_anchor, strip, window

NOW = dt.datetime(2026, 11, 29, 12, tzinfo=dt.UTC).timestamp()  # a Sunday


def span(text: str, now: float | None = NOW) -> tuple[str | None, str | None] | None:
    w = window(text, now)
    if w is None:
        return None
    d = w.describe()
    return d["from"], d["to"]


# -- pure: phrases → windows ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what happened yesterday", ("2026-11-28", "2026-11-28")),
        ("what did we decide 3 days ago", ("2026-11-25", "2026-11-27")),  # that day, give or take one
        ("notes from last week", ("2026-11-16", "2026-11-22")),  # the calendar week before this one
        ("this month", ("2026-11-01", "2026-11-30")),
        ("what happened last month", ("2026-10-01", "2026-10-31")),
        ("in the last three weeks", ("2026-11-08", "2026-11-29")),
        ("what problems did we hit in March", ("2026-03-01", "2026-03-31")),  # the last March that has begun
        ("changes since Monday", ("2026-11-23", "2026-11-29")),
        ("last Friday", ("2026-11-27", "2026-11-27")),
        ("incidents in January 2026", ("2026-01-01", "2026-01-31")),
        ("decisions made in autumn 2025", ("2025-09-01", "2025-11-30")),
        ("what happened between 12 and 18 October 2025", ("2025-10-12", "2025-10-18")),
        ("first week of September 2025", ("2025-09-01", "2025-09-07")),
        ("since 2025", ("2025-01-01", "2026-11-29")),
        (
            "before March 2026",
            (None, "2026-03-31"),
        ),  # the named month stays in: what happened before it is written then
        ("4 years ago", None),  # recounted since, not dated then
        ("on 2026-11-03", ("2026-11-03", "2026-11-03")),
        ("INV-2026-000123", None),  # a year inside an identifier is no date
        ("what may happen to the cache", None),  # "may" is a verb here
    ],
)
def test_time_phrases(query: str, expected: tuple[str | None, str | None] | None) -> None:
    assert span(query) == expected


def test_relative_phrases_need_a_now_and_say_where_they_came_from() -> None:
    assert window("what happened yesterday", None) is None
    w = window("what happened yesterday", NOW)
    assert w is not None and w.describe()["source"] == "relative to 2026-11-29" and w.phrase == "yesterday"
    assert strip("what was handed over last week", "last week") == "what was handed over"
    assert strip("incidents in January 2026", "January 2026") == "incidents"


def test_an_event_is_an_anchor_dated_by_the_caller() -> None:
    w = window("what did we use before the migration and after the freeze", NOW)
    assert w is not None and (w.anchor, w.side, w.start, w.end) == ("the migration", "before", None, None)
    moved = dt.datetime(2026, 2, 3, 15, tzinfo=dt.UTC).timestamp()
    d = around_anchor(w, moved, "g-007", NOW).describe()
    assert (d["from"], d["to"], d["source"]) == ("2025-08-04", "2026-02-02", "anchor g-007 (2026-02-03)")
    after = window("since we moved to Postgres", NOW)
    assert after is not None and after.side == "after"
    assert around_anchor(after, moved, "g-007", NOW).describe()["from"] == "2026-02-03"


# -- pure: topics ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        ("the database migration and the login bug", ["the database migration", "the login bug"]),
        (
            "what do we know about the Kafka consumer lag and the Safari payment failures",
            ["the Kafka consumer lag", "the Safari payment failures"],
        ),
        ("salt and pepper", []),
        ("terms and conditions", []),
        ("Priya and Tomás", []),
        ("the ledger and the queue", []),  # one word a side: one thing, or too little to stand alone
        ("the database migration", []),
        ("What types of pottery have Melanie and her kids made?", []),  # a part that leans on the other
        ("When did Caroline encounter people on a hike and have a negative experience?", []),  # one question
        ("Based on the conversation, did Calvin and Dave meet in Boston?", []),
        (
            "how feature flags are managed and where the Terraform state lives",
            ["how feature flags are managed", "where the Terraform state lives"],
        ),  # two questions
    ],
)
def test_split_only_proposes_parts_that_could_stand_alone(query: str, parts: list[str]) -> None:
    assert split(query) == parts


def test_interleave_takes_each_topic_in_turn() -> None:
    merged = interleave([["a1", "a2", "a3", "shared"], ["shared", "b2"]], 10)
    assert [m[0] for m in merged] == ["a1", "shared", "a2", "b2", "a3"]
    assert merged[1] == ("shared", 1, 1)  # a note both topics found is taken at its first turn
    assert len(interleave([["a1", "a2"], ["b1"]], 2)) == 2


# -- recall on a real index ------------------------------------------------------------------------


@pytest.fixture
def dated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MDMEM_NOW", "2026-11-29")
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    root = tmp_path / "dated"
    (root / "notes").mkdir(parents=True)
    notes = {
        # many close matches for one topic, one for the other
        **{
            f"login-{i}": (
                f"2026-0{i}-10",
                f"Login bug number {i}",
                "The login bug: the database dropped sessions at login, login retries. " * (4 - i % 3),
            )
            for i in range(1, 8)
        },
        "migration": ("2026-02-03", "Move to RDS", "We finished the migration to RDS."),
        "pool-old": ("2025-12-01", "Connection pool exhausted", "The database connection pool ran dry at noon."),
        "pool-new": ("2026-03-06", "Connection slots reserved", "The database connection pool hit the slot limit."),
        "handoff-nov": ("2026-11-20", "Handoff 2026-11-20", "Freeze started. Readiness check done."),
        "handoff-oct": ("2026-10-30", "Handoff 2026-10-30", "Credit notes as PDF. Open: VIES timeouts."),
        "week-checklist": ("2026-02-26", "First week checklist", "What a new engineer does in the first week."),
    }
    for name, (date, title, body) in notes.items():
        (root / "notes" / f"{name}.md").write_text(f"---\ntitle: {title}\ncreated: {date}\n---\n{body}\n")
    return root


def test_recall_puts_notes_of_a_relative_window_first_and_explains_it(dated: Path) -> None:
    from mdmem import Vault

    v = Vault.open(dated)
    hits = v.recall("what was handed over last week", 5, explain=True)
    assert hits[0].path == "notes/handoff-nov.md"  # "week" in the checklist's title no longer wins
    assert hits[0].explain is not None and hits[0].explain["in_window"] is True
    assert hits.info["window"] == {
        "from": "2026-11-16",
        "to": "2026-11-22",
        "phrase": "last week",
        "source": "relative to 2026-11-29",
    }
    hits = v.recall("the handoff from a month ago", 3, explain=True)
    assert hits[0].path == "notes/handoff-oct.md"


def test_before_an_event_is_dated_by_the_note_about_it(dated: Path) -> None:
    from mdmem import Vault

    v = Vault.open(dated)
    hits = v.recall("database pool problems before the migration to RDS", 5, explain=True, vectors=False)
    win = hits.info["window"]
    assert win["source"].startswith("anchor ") and "(2026-02-03)" in win["source"]
    order = [h.path for h in hits]
    assert order.index("notes/pool-old.md") < order.index("notes/pool-new.md")  # after the move: not in it
    hits = v.recall("problems before the quux rollout", 5, vectors=False)
    assert hits.info["window"]["source"] == "anchor not found: the quux rollout"


def test_two_topics_share_the_top_of_the_list(dated: Path) -> None:
    from mdmem import Vault

    v = Vault.open(dated)
    whole = v.search("the login bug and the database migration", 2)
    assert "notes/migration.md" not in [h.path for h in whole]  # the crowded-out topic, without a split
    hits = v.recall("the login bug and the database migration", 2, explain=True)
    assert "notes/migration.md" in [h.path for h in hits]
    assert hits.info["plan"] == "round-robin"
    assert [t["query"] for t in hits.info["topics"]] == ["the login bug", "the database migration"]
    assert {h.explain["topic"] for h in hits if h.explain} == {1, 2}
    assert (
        "topics" not in v.recall("login bug and login retries", 3).info
    )  # both parts' best answer is one note: one topic


def test_explain_text_names_the_window_and_the_plan(dated: Path) -> None:
    from mdmem import Vault, render

    v = Vault.open(dated)
    out = render.cli(v.recall("what was handed over last week", 3, explain=True), explain=True).out
    assert 'window: 2026-11-16 – 2026-11-22 ("last week", relative to 2026-11-29)' in out
    out = render.cli(v.recall("the login bug and the database migration", 3, explain=True), explain=True).out
    assert 'plan: round-robin over "the login bug" | "the database migration"' in out


def test_a_time_window_ranks_its_topic_first_and_pads_only_a_question_without_one(dated: Path) -> None:
    """ "What did I learn about SQLite last year": the SQLite note of that year first, no note of the
    year that only says "learned", "about" or "last"; those fill the list only when the question has
    no topic ("what did I learn last year"). Snippets mark the topic, not the time words."""
    from mdmem import Vault

    notes = {
        "sqlite-wal": ("2025-06-02", "SQLite WAL mode", "Enabling WAL mode in SQLite lets readers run."),
        "sqlite-old": ("2023-03-01", "SQLite VACUUM", "VACUUM on a full disk fails in SQLite."),
        **{
            f"misc-{i}": (f"2025-0{i}-15", f"Misc {i}", "I learned about the last bus home, last time.")
            for i in range(1, 5)
        },
    }
    for name, (date, title, body) in notes.items():
        (dated / "notes" / f"{name}.md").write_text(f"---\ntitle: {title}\ncreated: {date}\n---\n{body}\n")
    v = Vault.open(dated)
    hits = v.recall("what did I learn about SQLite last year", 10, explain=True, vectors=False)
    paths = [h.path for h in hits]
    assert paths[0] == "notes/sqlite-wal.md" and hits[0].explain is not None and hits[0].explain["in_window"]
    assert not [p for p in paths if p.startswith("notes/misc-")]  # no padding: the question has a topic
    assert "**last**" not in hits[0].snippet.lower() and "**SQLite**" in hits[0].snippet
    assert paths.index("notes/sqlite-old.md") > 0  # on topic, outside the window: after it
    padded = [h.path for h in v.recall("what did I learn last year", 10, vectors=False)]
    assert {f"notes/misc-{i}.md" for i in range(1, 5)} <= set(padded)
    (dated / "notes" / "invoice-fix.md").write_text(
        "---\ntitle: Invoice numbers fixed\ncreated: 2025-03-01\nscope: project:billing\n---\nNo gaps now.\n"
    )
    hits = Vault.open(dated).recall("what happened in billing last year", 5, explain=True, vectors=False)
    assert hits[0].path == "notes/invoice-fix.md"  # filed under the topic (its scope), in the window


def test_the_months_name_is_no_unknown_word_when_the_window_answers(dated: Path) -> None:
    """ "What happened in May 2026": no note says "May", the window does; no "no note mentions May" above
    May's notes. A name outside the time phrase that no note has is still said."""
    from mdmem import Vault, render

    (dated / "notes" / "may-launch.md").write_text(
        "---\ntitle: Billing launch\ncreated: 2026-05-12\n---\nThe billing service went live.\n"
    )
    v = Vault.open(dated)
    hits = v.recall("what happened in May 2026", 5, vectors=False)
    assert hits[0].path == "notes/may-launch.md"
    assert "unknown" not in hits.info and hits.info.get("relevant") is not False
    out = render.cli(hits).out
    assert "No note mentions" not in out and "Nothing in the vault" not in out and "Billing launch" in out
    hits = v.recall("what happened with Zorblax in May 2026", 5, vectors=False)
    assert hits.info.get("unknown") == ["Zorblax"]
