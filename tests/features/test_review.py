"""The review queue, dismissals and supersede, and what add and import do with contradictions and
duplicates: on real git vaults with the real model's vectors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from mdmem.api.vault import Vault

from ..conftest import git, mdmem_in_process, snapshot, write_files

SEEDS = {
    # a contradiction: two decisions about sessions, the newer not superseding the older
    "notes/sessions.md": "---\nid: d-redis\ntitle: Session storage\ntype: decision\nentities: [sessions]\n"
    "created: 2026-01-05\n---\nStore user sessions in Redis with a one-day expiry.\n",
    "notes/sessions-2.md": "---\nid: d-memcached\ntitle: Where sessions live\ntype: decision\n"
    "entities: [sessions]\ncreated: 2026-02-10\n---\nStore user sessions in Memcached, not Redis.\n",
    # a paraphrased duplicate
    "notes/backups.md": "---\nid: f-backups\ntitle: Backups\ntype: fact\ncreated: 2026-01-20\n---\n"
    "Nightly backups of the Postgres cluster are copied to Backblaze B2 at 02:00 UTC.\n",
    "notes/snapshots.md": "---\nid: f-snapshots\ntitle: Database snapshots\ntype: fact\ncreated: 2026-02-01\n---\n"
    "Every night at 02:00 UTC the Postgres cluster is backed up and shipped to Backblaze B2.\n",
    # a related pair, not linked
    "notes/onboarding.md": "---\nid: c-onboarding\ntitle: Onboarding checklist\ntype: context\ncreated: 2026-01-11\n"
    "---\nNew engineers get a laptop, repository access and an onboarding buddy in their first week.\n",
    "notes/buddy.md": "---\nid: c-buddy\ntitle: Buddy program\ntype: context\ncreated: 2026-01-12\n---\n"
    "Every new engineer is paired with an onboarding buddy who reviews their first pull requests.\n",
    # the rest of a small vault
    "notes/lunch.md": "---\ntitle: Team lunch\ntype: note\ncreated: 2026-01-02\n---\nThe team eats together on Thursdays.\n",
    "notes/css.md": "---\ntitle: CSS naming\ntype: preference\ncreated: 2026-01-03\n---\n"
    "Block-element-modifier class names for every component.\n",
    "notes/pager.md": "---\ntitle: Pager rotation\ntype: fact\ncreated: 2026-01-04\n---\n"
    "The on-call pager rotates weekly on Mondays between four people.\n",
}


def seeded(root: Path, files: dict[str, str] = SEEDS) -> Vault:
    """A git vault holding ``files`` (adopted by init, so without its example notes), committed, indexed
    and embedded with the real model."""
    write_files(root, files)
    mdmem_in_process("init", str(root))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "seed")
    v = Vault.open(root)
    v.reindex()
    v.embed()
    return v


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seeded vault, built once; tests that write work on a copy (``fresh``)."""
    root = tmp_path_factory.mktemp("review") / "vault"
    seeded(root).close()
    return root


@pytest.fixture
def fresh(built: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "vault"
    shutil.copytree(built, dest, symlinks=True)
    return dest


def test_review_lists_the_contradiction_the_duplicate_and_the_unlinked_pair_first(fresh: Path) -> None:
    before = snapshot(fresh)
    queue = Vault.open(fresh).review(10)
    top = [(it.kind, sorted(n.id for n in it.notes)) for it in queue.items[:3]]
    assert top == [
        ("contradiction", ["d-memcached", "d-redis"]),
        ("duplicate", ["f-backups", "f-snapshots"]),
        ("unlinked", ["c-buddy", "c-onboarding"]),
    ]
    contra = queue.items[0]
    assert contra.notes[0].id == "d-memcached"  # the newer first
    assert any("sessions" in e for e in contra.evidence) and any('"not"' in e for e in contra.evidence)
    assert contra.commands[0] == "mdmem supersede d-memcached d-redis"
    assert queue.items[1].commands[0] == "mdmem supersede f-snapshots f-backups"
    assert snapshot(fresh) == before  # asking changes no note (nor anything else in the vault)

    out = mdmem_in_process("--vault", str(fresh), "review", "-n", "3", "--json").stdout
    assert [it["key"] for it in json.loads(out)["items"]] == [it.key for it in queue.items[:3]]
    text = mdmem_in_process("--vault", str(fresh), "review", "-n", "1").stdout
    assert text.startswith("1. contradiction:") and "settle: mdmem supersede d-memcached d-redis" in text


def test_dismissed_items_stay_away_after_a_rebuild_and_travel_in_git(fresh: Path) -> None:
    v = Vault.open(fresh)
    key = v.review(1).items[0].key
    assert key == "contradiction:d-memcached+d-redis"
    done = mdmem_in_process("--vault", str(fresh), "dismiss", key, "--json")
    assert json.loads(done.stdout)["keys"] == [key]
    assert git(fresh, "log", "-1", "--format=%s", "--", ".mdmem-review.yaml").startswith("mdmem: dismiss 1")
    shutil.rmtree(fresh / ".mdmem")  # the index is a cache: the dismissal is not in it
    again = Vault.open(fresh).review(10)
    assert key not in [it.key for it in again.items] and again.dismissed == 1
    assert again.items[0].kind == "duplicate"
    assert Vault.open(fresh).dismiss([key]).already == [key]  # idempotent: nothing written twice
    with pytest.raises(Exception, match="not a review item key"):
        v.dismiss(["nonsense"])


def test_supersede_settles_the_contradiction(fresh: Path) -> None:
    v = Vault.open(fresh)
    done = v.supersede("d-memcached", ["d-redis"])
    old = (fresh / "notes/sessions.md").read_text()
    assert "status: archived" in old and "superseded_by: d-memcached" in old
    assert "Store user sessions in Redis" in old  # the text stays
    assert "supersedes: d-redis" in (fresh / "notes/sessions-2.md").read_text()
    assert git(fresh, "show", "--stat", "--format=%s", "HEAD").count(".md") == 2 and done.commit
    assert "contradiction" not in [it.kind for it in v.review(10).items]


def test_add_of_a_contradicting_decision_says_so_and_offers_supersede(fresh: Path) -> None:
    v = Vault.open(fresh)
    report = v.save(
        "Session cache", "Keep user sessions in Memcached rather than Redis.", type="decision", entities=["sessions"]
    )
    assert report.added is not None  # written: the agent settles it
    against = {m.id: m for m in report.check.contradicts}
    assert "d-redis" in against and any("sessions" in e for e in against["d-redis"].evidence)
    assert "contradicts" in report.to_dict()
    text = mdmem_in_process(
        "--vault", str(fresh), "add", "-t", "Sessions", "-b", "Never store sessions in Redis.", "--type", "decision"
    ).stdout
    assert "may contradict notes/sessions.md" in text and "mdmem supersede" in text

    # --supersedes: the new note replaces the old one in one commit
    head = git(fresh, "rev-parse", "HEAD").strip()
    r = v.save("Sessions in Postgres", "Sessions now live in Postgres.", type="decision", supersedes="d-redis")
    assert r.added is not None and r.added.commit
    assert git(fresh, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    assert f"superseded_by: {r.added.id}" in (fresh / "notes/sessions.md").read_text()


def test_an_update_merges_the_text_into_the_near_duplicate(fresh: Path) -> None:
    v = Vault.open(fresh)
    notes = set(v.notes())
    head = git(fresh, "rev-parse", "HEAD").strip()
    body = "The on-call pager rotates weekly on Mondays between four people, handing over at 10:00."
    report = v.save("Pager rotation", body, type="fact", tags=["oncall"])
    assert report.check.decision == "UPDATE" and report.updated is not None and report.updated.changed
    assert set(v.notes()) == notes  # no new note
    text = (fresh / "notes/pager.md").read_text()
    assert text.rstrip().endswith("handing over at 10:00.") and "oncall" in text
    assert git(fresh, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    assert "on Mondays between four people." in git(fresh, "show", f"{head}:notes/pager.md")  # history in git
    again = v.save("Pager rotation", body, type="fact")  # the same text again: nothing to write
    assert again.check.decision == "NOOP" and git(fresh, "rev-list", "--count", f"{head}..HEAD").strip() == "1"


def test_links_to_superseded_and_expired_notes_are_listed(tmp_path: Path) -> None:
    files = {
        "notes/host-v1.md": "---\nid: h1\ntitle: Database host v1\ntype: fact\nstatus: archived\n"
        "superseded_by: h2\ncreated: 2025-01-01\n---\nThe database host is db1.internal.\n",
        "notes/host-v2.md": "---\nid: h2\ntitle: Database host v2\ntype: fact\nsupersedes: h1\n"
        "created: 2025-06-01\n---\nThe database host is db2.internal.\n",
        "notes/budget.md": "---\nid: b1\ntitle: Budget approved\ntype: fact\nvalid_until: 2025-03-31\n---\n"
        "The Q1 budget covers two new servers.\n",
        "notes/plan.md": "---\nid: p1\ntitle: Migration plan\ntype: project\nlinks:\n  - {to: h1, type: depends_on}\n"
        "  - {to: b1, type: depends_on}\n---\nMove the app to the new servers.\n",
    }
    v = seeded(tmp_path / "v", files)
    kinds = {it.kind: it for it in v.review(10).items}
    assert [n.id for n in kinds["superseded_linked"].notes] == ["p1", "h1", "h2"]
    assert kinds["superseded_linked"].commands[0] == ("mdmem unlink p1 h1 && mdmem link p1 h2 --type depends_on")
    assert [n.id for n in kinds["expired_linked"].notes] == ["p1", "b1"]


def test_import_does_not_write_a_second_note_of_the_same_memory(tmp_path: Path) -> None:
    v = seeded(tmp_path / "v", {"notes/a.md": "---\ntitle: Unrelated\n---\nSomething else entirely.\n"})
    v.save("Use Hotwire", "Use Hotwire for new frontends instead of React.", type="decision")
    memory = tmp_path / "MEMORY.md"
    memory.write_text("# Decisions\n\n- Use Hotwire for new frontends instead of React.\n- Deploy on Tuesdays.\n")
    first = mdmem_in_process("--vault", str(v.root), "import", str(memory), "--json")
    report = json.loads(first.stdout)
    assert len(report["written"]) == 1 and report["skipped"] == 1, report  # the new memory only
    assert [p for p in Vault.open(v.root).notes() if "hotwire" in p] == ["notes/use-hotwire.md"]
    linked = mdmem_in_process("--vault", str(v.root), "link", "Use Hotwire", "Unrelated")
    assert "link" in linked.stdout  # one note has the title, so it names one note
    again = json.loads(mdmem_in_process("--vault", str(v.root), "import", str(memory), "--json").stdout)
    assert again["written"] == [] and again["updated"] == [] and again["skipped"] == 2


def test_the_stop_hook_counts_the_queue_and_session_start_says_so(fresh: Path, tmp_path: Path) -> None:
    import os
    import time

    from mdmem.edges.agent_hooks import review_items, session_context

    from ..edges.test_agent_hooks import hook, transcript_lines, write_transcript

    project = tmp_path / "shop-api"
    project.mkdir()
    transcript = write_transcript(tmp_path / "s.jsonl", transcript_lines(project))
    env = {**os.environ, "MDMEM_RECOUNT": "1"}  # the stop hook's background recount, as it runs for real
    stop = hook(fresh, "stop", {"session_id": "abc", "transcript_path": str(transcript), "cwd": str(project)}, env=env)
    assert stop.returncode == 0, stop.stderr
    count = fresh / ".mdmem" / "review-count.json"
    waited = time.monotonic()
    while not count.exists() and time.monotonic() - waited < 120:
        time.sleep(0.2)
    with Vault.open(fresh) as v:
        assert v.review_count() == (json.loads(count.read_text())["count"], True)
        total = v.review(1, scan=10).total  # not a whole review: leaves the cached count alone
        assert v.review_count() == (v.review(1).total, True) and v.review_count()[0] >= 3
        total = v.review_count()[0]
        assert review_items(v) == total  # what the next handoff records
    payload = {"session_id": "new", "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}
    # what the session-start hook answers (in process: its time budget is not what is tested here)
    ctx = session_context(fresh, payload, 900) or ""
    assert f"\n{total} memories to review: mdmem review" in ctx and "Last handoff" in ctx
    # the index changed since the count: the nudge says so rather than state an old number as true
    mdmem_in_process("--vault", str(fresh), "add", "--title", "Pager escalation", "--body", "Escalate after 5 min.")
    with Vault.open(fresh) as v:
        assert v.review_count() == (total, False) and review_items(v) is None
    ctx = session_context(fresh, payload, 900) or ""
    assert f"about {total} memories to review: mdmem review" in ctx


def test_review_and_dismiss_are_mcp_tools(fresh: Path) -> None:
    import anyio

    from mdmem.edges.mcp_server import create_server
    from mdmem.edges.mcp_tools import Served

    with Vault.open(fresh) as vault:
        server = create_server(Served(vault))
        got: Any = anyio.run(server.call_tool, "review", {"limit": 2})
        assert not got.is_error, got.content[0].text
        text, data = got.content[0].text, got.structured_content
        assert text.startswith(f"{data['total']} item(s) to review, the first 2:")
        assert "1. contradiction:" in text and "supersede d-memcached d-redis" in text
        key = data["items"][0]["key"]
        done: Any = anyio.run(server.call_tool, "dismiss", {"keys": [key]})
        assert not done.is_error and done.structured_content["keys"] == [key]
        again: Any = anyio.run(server.call_tool, "review", {"limit": 2})
        assert again.structured_content["items"][0]["kind"] == "duplicate"
