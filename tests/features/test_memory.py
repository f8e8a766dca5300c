"""Memory semantics: lifecycle commands, visibility, priors, versions, duplicates, recall, context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mdmem import Vault
from mdmem.core.memory import Visibility, classify, hidden_reason, prior, recency
from mdmem.core.note import iso_to_timestamp

from ..conftest import git, snapshot

NOW = iso_to_timestamp("2026-11-29")
assert NOW is not None


def paths(hits) -> list[str]:  # type: ignore[no-untyped-def]
    return [h.path for h in hits]


@pytest.fixture
def mem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small vault with every lifecycle state, judged as of 2026-11-29."""
    monkeypatch.setenv("MDMEM_NOW", "2026-11-29")
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    root = tmp_path / "mem"
    (root / "notes").mkdir(parents=True)
    notes = {
        "active": "---\ntitle: Deploy window\ntype: fact\n---\nDeploys happen on Tuesday mornings.\n",
        "forgotten": "---\ntitle: Old deploy window\nstatus: forgotten\n---\nDeploys happen on Friday nights.\n",
        "archived": "---\ntitle: Archived deploy rule\nstatus: archived\n---\nDeploys happen daily.\n",
        "snoozed": "---\ntitle: Snoozed deploy idea\nsnoozed_until: 2027-01-01\n---\nDeploys via canary.\n",
        "expired": "---\ntitle: Freeze\nvalid_until: 2026-11-01\n---\nNo deploys during the freeze.\n",
        "future": "---\ntitle: Future freeze\nvalid_from: 2027-06-01\n---\nNo deploys during summer.\n",
        "v1": "---\nid: db-v1\ntitle: Database host v1\ntype: fact\n---\nThe database host is db1.internal.\n",
        "v2": "---\nid: db-v2\ntitle: Database host v2\ntype: fact\nsupersedes: db-v1\n---\nThe database host is db2.internal.\n",
    }
    for name, text in notes.items():
        (root / "notes" / f"{name}.md").write_text(text)
    return root


# -- pure -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ({"status": "forgotten"}, "forgotten"),
        ({"status": "archived"}, "archived"),
        ({"snoozed_until": "2026-12-01"}, "snoozed until 2026-12-01"),
        ({"snoozed_until": "2026-11-01"}, None),
        ({"valid_until": "2026-11-28"}, "expired 2026-11-28"),
        ({"valid_until": "2026-11-29"}, None),  # a date-only end holds through that day
        ({"valid_from": "2027-01-01"}, "valid from 2027-01-01"),
        ({}, None),
    ],
)
def test_hidden_reason(row: dict, reason: str | None) -> None:  # type: ignore[type-arg]
    assert hidden_reason(row, Visibility(now=NOW + 3600)) == reason


def test_recency_decays_by_type_and_priors_are_bounded() -> None:
    old = {"type": "handoff", "date": NOW - 14 * 86400}
    assert recency(old, NOW) == pytest.approx(0.5)
    assert recency({"type": "decision", "date": NOW - 3650 * 86400}, NOW) == 1.0
    p = prior({"salience": 1.0, "pinned": True, "confidence": 1.0, "type": "decision", "date": NOW}, NOW)
    assert p["prior"] == pytest.approx(1.0)
    assert 0 <= prior({"salience": 0.0, "type": "handoff", "date": 0.0, "confidence": 0.0}, NOW)["prior"] < 0.05


@pytest.mark.parametrize(
    ("q", "intent"),
    [
        ("why did we move off MySQL", "why"),
        ("what is the latest db host", "recent"),
        ("when did we ship v2", "when"),
        ("who owns billing", "who"),
        ("postgres pool size", "general"),
        ("what happened in March 2026", "when"),
        ("为什么迁移数据库", "why"),
        ("decisions made in 2025", "when"),
        ("INV-2026-000123", "general"),  # a year inside an identifier is not a date
    ],
)
def test_classify(q: str, intent: str) -> None:
    assert classify(q) == intent


# -- visibility in every path ---------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["search", "vsearch", "query", "recall"])
def test_hidden_notes_stay_out_of_every_path(mem: Path, mode: str) -> None:
    v = Vault.open(mem)
    v.embed()
    got = set(paths(getattr(v, mode)("deploys deploy freeze", limit=20)))
    assert "notes/active.md" in got
    assert not got & {
        "notes/forgotten.md",
        "notes/archived.md",
        "notes/snoozed.md",
        "notes/expired.md",
        "notes/future.md",
    }
    wide = set(
        paths(
            getattr(v, mode)("deploys deploy freeze", limit=20, include=["forgotten", "archived", "snoozed", "expired"])
        )
    )
    assert {"notes/forgotten.md", "notes/archived.md", "notes/snoozed.md", "notes/expired.md"} <= wide


def test_as_of_moves_the_clock(mem: Path) -> None:
    v = Vault.open(mem)
    assert "notes/snoozed.md" in paths(v.search("canary", as_of="2027-02-01"))
    assert "notes/expired.md" in paths(v.search("freeze", as_of="2026-10-15"))


@pytest.mark.parametrize("mode", ["search", "query"])
def test_superseded_note_ranks_below_its_successor(mem: Path, mode: str) -> None:
    v = Vault.open(mem)
    # "db1" only appears in v1, so BM25 alone would put it first.
    hits = getattr(v, mode)("database host db1.internal", limit=5)
    assert paths(hits)[:2] == ["notes/v2.md", "notes/v1.md"]


def test_priors_break_ties_but_do_not_beat_relevance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    root = tmp_path / "p"
    root.mkdir()
    (root / "a.md").write_text("---\ntitle: A\nsalience: 0.1\n---\nkafka retention is seven days\n")
    (root / "b.md").write_text("---\ntitle: B\nsalience: 1.0\npinned: true\n---\nkafka retention is seven days\n")
    (root / "c.md").write_text("---\ntitle: C\nsalience: 1.0\npinned: true\n---\nkafka\n" + "filler words " * 80)
    v = Vault.open(root)
    hits = v.query("kafka retention seven days", explain=True, vectors=False)
    assert paths(hits)[:2] == ["b.md", "a.md"]  # identical text: the pinned, salient one first
    assert hits[0].explain["prior_weight"] == 0.01 and "salience" in hits[0].explain
    assert paths(hits)[-1] == "c.md"  # a weak match stays below, pin or not


# -- lifecycle commands -----------------------------------------------------------------------------


def test_lifecycle_commands_edit_only_their_keys_and_commit(mem: Path) -> None:
    git(mem, "init", "-q")
    (mem / "notes" / "active.md").write_text(
        "---\ntitle: Deploy window   # keep me\ntype: fact\ncustom: {a: 1}\n---\nDeploys happen on Tuesday mornings.\n"
    )
    git(mem, "add", "-A")
    git(mem, "commit", "-qm", "init")
    v = Vault.open(mem)
    c = v.pin("Deploy window")
    text = (mem / "notes" / "active.md").read_text()
    # Only the key it sets: ``updated:`` is not written (git records when), the rest line for line.
    assert text == (
        "---\ntitle: Deploy window   # keep me\ntype: fact\ncustom: {a: 1}\npinned: true\n---\n"
        "Deploys happen on Tuesday mornings.\n"
    )
    assert c.commit and git(mem, "log", "-1", "--format=%s").strip() == 'mdmem: pin "Deploy window"'
    # The index dates it by the pin's commit, as a rebuild from the files does (not by the file's time).
    indexed = v.dates(v.get("Deploy window"))
    assert (indexed.updated_from, indexed.updated) == ("git", dates_after_rebuild(mem, "notes/active.md"))
    assert v.pin("Deploy window").changed is False  # idempotent: no new commit
    v.forget("notes/active.md")
    assert v.search("tuesday") == []
    v.restore("notes/active.md")
    assert paths(v.search("tuesday")) == ["notes/active.md"]
    v.snooze("notes/active.md", "2027-03-01")
    assert v.search("tuesday") == []
    v.restore("notes/active.md")
    assert "snoozed_until" not in (mem / "notes" / "active.md").read_text()
    assert "updated:" not in (mem / "notes" / "active.md").read_text()
    assert git(mem, "status", "--porcelain") == ""


def dates_after_rebuild(root: Path, path: str) -> str | None:
    """The note's ``updated`` as a full rebuild in another copy of the vault dates it."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "copy"
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".mdmem"))
        with Vault.open(copy) as other:
            other.reindex(full=True)
            return other.dates(other.get(path)).updated


def test_pin_keeps_a_notes_own_updated_date(mem: Path) -> None:
    git(mem, "init", "-q")
    (mem / "notes" / "dated.md").write_text("---\ntitle: Dated\nupdated: 2024-05-01\n---\nA dated note.\n")
    git(mem, "add", "-A")
    git(mem, "commit", "-qm", "init")
    v = Vault.open(mem)
    for act in (lambda: v.pin("Dated"), lambda: v.snooze("Dated", "2031-01-01"), lambda: v.forget("Dated")):
        act()
        assert "updated: 2024-05-01\n" in (mem / "notes" / "dated.md").read_text()
    v.restore("Dated")
    got = v.dates(v.get("Dated"))
    assert (got.updated, got.updated_from) == ("2024-05-01", "frontmatter")


def test_correct_makes_a_version_chain(mem: Path) -> None:
    git(mem, "init", "-q")
    git(mem, "add", "-A")
    git(mem, "commit", "-qm", "init")
    v = Vault.open(mem)
    before = (mem / "notes" / "v2.md").read_text()
    fix = v.correct("db-v2", "The database host is db3.internal since the move.")
    added = fix.new
    new = v.get(added.id)
    assert new.supersedes == "db-v2" and new.title == "Database host v2"
    old_text = (mem / "notes" / "v2.md").read_text()
    assert "status: archived" in old_text and f"superseded_by: {added.id}" in old_text
    assert old_text.split("---\n", 2)[2] == before.split("---\n", 2)[2]  # the old text is kept
    assert paths(v.search("database host"))[0] == added.path
    h = v.history(added.id)
    assert [x["id"] for x in h["versions"]] == ["db-v1", "db-v2", added.id]
    assert h["versions"][-1]["current"] and h["versions"][1]["git_log"][0]["subject"].startswith("mdmem: correct")
    assert v.resolve("Database host v2") == added.path  # the title now names the current version


def test_duplicates_add_update_noop(mem: Path) -> None:
    from mdmem.features.lifecycle import duplicates

    v = Vault.open(mem)
    assert duplicates(v.store, v.semantic, "Deploy window", "Deploys happen on Tuesday mornings.")["decision"] == "NOOP"
    near = duplicates(v.store, v.semantic, "Deploy window", "Deploys happen on Tuesday mornings, usually.")
    assert near["decision"] == "UPDATE" and near["matches"][0]["path"] == "notes/active.md"
    assert duplicates(v.store, v.semantic, "Lunch", "The cafeteria serves soup on Mondays.")["decision"] == "ADD"


def test_sweep_is_a_dry_run_unless_applied(mem: Path) -> None:
    from mdmem.features.lifecycle import SweepRule, sweep

    (mem / "notes" / "stale.md").write_text(
        "---\ntitle: Stale handoff\ntype: handoff\nsalience: 0.1\ncreated: 2025-01-01\n---\nold stuff\n"
    )
    (mem / "notes" / "keep.md").write_text(
        "---\ntitle: Old decision\ntype: decision\nsalience: 0.1\ncreated: 2025-01-01\n---\nold decision\n"
    )
    v = Vault.open(mem)
    before = snapshot(mem)
    dry = sweep(v.store, SweepRule(), now=NOW)
    assert [n["path"] for n in dry["notes"]] == ["notes/stale.md"] and snapshot(mem) == before
    sweep(v.store, SweepRule(), apply=True, commit=False, now=NOW)
    assert "status: archived" in (mem / "notes" / "stale.md").read_text()
    assert (mem / "notes" / "stale.md").exists() and (mem / "notes" / "keep.md").read_text() == before[
        "notes/keep.md"
    ].decode()


# -- recall and context -----------------------------------------------------------------------------


def test_recall_why_follows_causal_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    root = tmp_path / "g"
    root.mkdir()
    (root / "decision.md").write_text(
        "---\nid: d1\ntitle: Move off MySQL\ntype: decision\nlinks:\n"
        "  - {to: f1, type: caused_by, reason: replication lag}\n---\nWe move to Postgres.\n"
    )
    (root / "fact.md").write_text(
        "---\nid: f1\ntitle: Replication incidents\ntype: fact\n---\nThree outages from lag in Q2.\n"
    )
    v = Vault.open(root)
    hits = v.recall("why did we move off MySQL", explain=True, vectors=False)
    assert hits.info["intent"] == "why"
    assert paths(hits)[:2] == ["decision.md", "fact.md"]
    assert hits[1].explain["via"] == "caused_by d1"  # the edge, and the hit it came from
    # connection hints: the top hits name their typed neighbours, with the link's reason
    assert [h.to_dict() for h in hits[0].links] == [
        {
            "type": "caused_by",
            "direction": "out",
            "id": "f1",
            "title": "Replication incidents",
            "kind": "note",
            "reason": "replication lag",
        }
    ]
    assert hits[1].links is not None and hits[1].links[0]["direction"] == "in"
    assert v.query("Postgres", vectors=False)[0].to_dict()["links"][0]["id"] == "f1"
    assert "links" not in v.search("Postgres")[0].to_dict()  # plain search stays lean


def test_context_fits_the_budget_pinned_first_and_is_stable(mem: Path) -> None:
    (mem / "notes" / "pinned.md").write_text(
        "---\ntitle: Coding style\npinned: true\nsalience: 0.9\n---\nPrefer small pull requests.\n"
    )
    v = Vault.open(mem)
    ctx = v.context("when do we deploy", budget=120, vectors=False)
    assert ctx["items"][0]["why"] == "pinned" and ctx["items"][0]["title"] == "Coding style"
    assert any(i["path"] == "notes/active.md" for i in ctx["items"])
    assert ctx["tokens"] <= 120 and "(id: " in ctx["text"]
    assert v.context("when do we deploy", budget=120, vectors=False)["text"] == ctx["text"]
    assert v.context("when do we deploy", budget=60, vectors=False)["tokens"] <= 60


# -- property: any sequence of lifecycle operations keeps the vault sound ---------------------------

OPS = st.lists(
    st.tuples(
        st.sampled_from(["pin", "unpin", "snooze", "forget", "restore", "correct"]),
        st.sampled_from(["active", "v1", "v2", "snoozed"]),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_any_lifecycle_sequence_keeps_notes_and_index_consistent(mem: Path, ops: list) -> None:  # type: ignore[type-arg]
    import shutil

    work = mem.parent / "prop"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(mem, work, ignore=shutil.ignore_patterns(".mdmem"))
    v = Vault.open(work)
    files_before = set(snapshot(work))
    for op, name in ops:
        ref = f"notes/{name}.md"
        if op == "pin":
            v.pin(ref, commit=False)
        elif op == "unpin":
            v.pin(ref, False, commit=False)
        elif op == "snooze":
            v.snooze(ref, "2027-01-01", commit=False)
        elif op == "forget":
            v.forget(ref, commit=False)
        elif op == "restore":
            v.restore(ref, commit=False)
        else:
            v.correct(ref, f"corrected {name}", commit=False)
    files_after = snapshot(work)
    assert files_before <= set(files_after)  # nothing lost
    for rel in files_after:
        if rel.endswith(".md"):
            assert not [p for p in v.store.files.read_note(rel)[0].problems if p.field == "frontmatter"]
    queries = ["deploys", "database host", "corrected", "canary"]
    inc = [paths(v.search(q, include=["forgotten", "archived", "snoozed", "expired"])) for q in queries]
    status_inc = json.dumps(sorted(v.store.catalog.counts_by("status").items()))
    v.reindex(full=True)
    assert [paths(v.search(q, include=["forgotten", "archived", "snoozed", "expired"])) for q in queries] == inc
    assert json.dumps(sorted(v.store.catalog.counts_by("status").items())) == status_inc
    v.close()


# -- superseded_scores (pure) ----------------------------------------------------------------------

TIE = 1e-6  # how far below its successor a superseded note is put when halving is not enough


@pytest.mark.parametrize(
    ("scores", "successors", "expected"),
    [
        ({"a": 1.0}, {}, {"a": 1.0}),
        ({"a": 0.8}, {"a": "z"}, {"a": 0.4}),  # successor not among the scores: halved only
        ({"a": 1.0, "b": 0.9}, {"a": "b"}, {"a": 0.5, "b": 0.9}),  # half is below the successor already
        ({"a": 1.0, "b": 0.3}, {"a": "b"}, {"a": 0.3 - TIE, "b": 0.3}),  # half would still outrank it
        ({"a": 0.6, "b": 0.3}, {"a": "b"}, {"a": 0.3 - TIE, "b": 0.3}),  # a tie goes below
        ({"a": 1.0, "b": 0.2, "c": 0.9}, {"a": "b"}, {"a": 0.2 - TIE, "b": 0.2, "c": 0.9}),  # others untouched
        (
            {"a": 0.9, "b": 1.0, "x": 0.4, "y": 0.1},
            {"a": "b", "x": "y"},
            {"a": 0.45, "b": 1.0, "x": 0.1 - TIE, "y": 0.1},
        ),
    ],
)
def test_superseded_scores(scores: dict[str, float], successors: dict[str, str], expected: dict[str, float]) -> None:
    """A superseded note keeps half its score and, when its successor is listed, stays below it."""
    from mdmem.core.memory import superseded_scores

    got = superseded_scores(scores, successors)
    assert got == pytest.approx(expected, rel=0, abs=1e-9)
    assert all(got[old] < got[new] for old, new in successors.items() if new in got)


def test_superseded_scores_leave_their_input_alone() -> None:
    """The scores passed in are not changed (callers keep them for --explain)."""
    from mdmem.core.memory import superseded_scores

    scores = {"a": 1.0, "b": 0.3}
    superseded_scores(scores, {"a": "b"})
    assert scores == {"a": 1.0, "b": 0.3}


@pytest.mark.parametrize(
    "successors",
    [
        {"v2.md": "v3.md", "v1.md": "v2.md"},  # the newest link first
        {"v1.md": "v2.md", "v2.md": "v3.md"},  # the oldest link first, as Catalog.superseded_by gives them by path
    ],
    ids=["newest link first", "oldest link first"],
)
def test_superseded_scores_keep_a_version_chain_in_order(successors: dict[str, str]) -> None:
    """v1 → v2 → v3: each version ranks below the one that supersedes it, whatever the mapping's order."""
    from mdmem.core.memory import superseded_scores

    got = superseded_scores({"v1.md": 1.0, "v2.md": 0.9, "v3.md": 0.2}, successors)
    assert got["v3.md"] > got["v2.md"] > got["v1.md"]
