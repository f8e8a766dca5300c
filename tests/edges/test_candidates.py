"""Candidate memories from a session's transcript: found by the stop hook (run as Claude Code runs it),
written into the handoff, listed by review (CLI and MCP) with their sentence and the command that saves
them, dismissed for good; never written as notes by themselves."""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path
from typing import Any

from mdmem.api.vault import Vault
from mdmem.core.candidates import TAIL_BYTES, find_candidates, parse_section, section

from ..conftest import mdmem_in_process, snapshot
from .test_agent_hooks import hook, write_transcript


def entry(role: str, text: str, cwd: Path, i: int = 0) -> dict[str, Any]:
    content: Any = text if role == "user" else [{"type": "text", "text": text}]
    return {
        "type": role,
        "sessionId": "c4nd1d4te-5e55-10n",
        "cwd": str(cwd),
        "uuid": f"u{i}",
        "timestamp": f"2026-11-30T10:{i % 60:02d}:00.000Z",
        "message": {"role": role, "content": content},
    }


SESSION = [
    ("user", "We need a queue for the billing jobs. I prefer boring technology. Never deploy on Fridays."),
    (
        "assistant",
        "The staging database is db2.internal on port 5433. We decided to use Postgres LISTEN/NOTIFY "
        "instead of Redis. Maybe we could try Kafka later?",
    ),
    ("user", "Let's use pg-boss for the job runner. Should we add retries?"),
    ("assistant", "Done. The config lives in config/jobs.toml and defaults to 3 retries."),
]


def test_cue_phrases_find_decisions_preferences_and_facts_not_questions_or_hedges() -> None:
    found = find_candidates((text, role == "user") for role, text in SESSION)
    assert [(c.kind, c.text) for c in found] == [
        ("preference", "I prefer boring technology."),
        ("preference", "Never deploy on Fridays."),
        ("fact", "The staging database is db2.internal on port 5433."),
        ("decision", "We decided to use Postgres LISTEN/NOTIFY instead of Redis."),
        ("decision", "Let's use pg-boss for the job runner."),
        ("fact", "The config lives in config/jobs.toml and defaults to 3 retries."),
    ]
    assert parse_section("## Asked\n- x\n\n" + section(found) + "\n## Later\n- decision: not mine\n") == found
    # the assistant's "I prefer" is not the person's preference
    assert find_candidates([("I prefer tabs.", False)]) == []


def test_hostile_transcript_text_costs_linear_time() -> None:
    nasty = ("`" + "a" * 5000 + " is " + "a/" * 5000 + "." * 3000 + "x_" * 4000 + "\n") * 40  # ~1 MB
    t = time.perf_counter()
    find_candidates([(nasty, True), (nasty, False)])
    assert time.perf_counter() - t < 5.0


def test_the_stop_hook_puts_candidates_in_the_handoff_and_review_lists_them(git_vault: Path, tmp_path: Path) -> None:
    project = tmp_path / "billing"
    project.mkdir()
    # An early decision beyond the last TAIL_BYTES of the transcript is not read for candidates.
    filler = [entry("assistant", "Reading files. " + "lorem ipsum " * 400, project, 50 + i) for i in range(80)]
    lines = [
        entry("user", "Set up the billing worker. We decided to drop Celery.", project, 0),
        *filler,
        *(entry(role, text, project, i + 1) for i, (role, text) in enumerate(SESSION)),
    ]
    transcript = write_transcript(tmp_path / "s.jsonl", lines)
    assert transcript.stat().st_size > TAIL_BYTES
    notes_before = set(Vault.open(git_vault).notes())
    payload = {"session_id": "cand-1", "transcript_path": str(transcript), "cwd": str(project)}
    stop = hook(git_vault, "stop", payload)
    assert stop.returncode == 0 and stop.stdout == "", stop.stderr
    (handoff,) = (git_vault / "notes" / "handoffs").glob("*.md")
    text = handoff.read_text()
    assert "## Candidates\n" in text and "- decision: Let's use pg-boss for the job runner.\n" in text
    assert "- preference: Never deploy on Fridays.\n" in text and "drop Celery" not in text.split("## Candidates")[1]
    # no note was written from them: the handoff is the one new note
    assert set(Vault.open(git_vault).notes()) - notes_before == {handoff.relative_to(git_vault).as_posix()}

    queue = Vault.open(git_vault).review(50)
    cands = [it for it in queue.items if it.kind == "candidate"]
    assert len(cands) == 6, [it.summary for it in queue.items]
    pg = next(it for it in cands if "pg-boss" in it.evidence[0])
    assert pg.evidence == ["said: Let's use pg-boss for the job runner."]
    assert pg.notes[0].type == "handoff"
    assert pg.commands[0].startswith("mdmem add --type decision --title ")
    assert "&&" not in pg.commands[0] and pg.commands[1] == f"mdmem dismiss {pg.key}"

    # the same stop again (the session goes on): the same keys, nothing new
    assert hook(git_vault, "stop", payload).returncode == 0
    again = {it.key for it in Vault.open(git_vault).review(50).items if it.kind == "candidate"}
    assert again == {it.key for it in cands}

    # dismissed: it does not come back, and the choice is in the committed dismissals file
    before = snapshot(git_vault)
    out = mdmem_in_process("--vault", str(git_vault), "dismiss", pg.key)
    assert "dismissed 1 item(s) in .mdmem-review.yaml" in out.stdout
    changed = {k for k in snapshot(git_vault) if snapshot(git_vault)[k] != before.get(k)}
    assert changed == {".mdmem-review.yaml"}
    later = Vault.open(git_vault).review(50)
    assert pg.key not in {it.key for it in later.items} and later.dismissed == 1

    # saving one with its command makes it a note (the agent's choice, not the hook's), and the saved
    # candidate leaves the queue by itself: no dismissal is written
    fact = next(it for it in cands if "db2.internal" in it.evidence[0])
    mdmem_in_process("--vault", str(git_vault), *shlex.split(fact.commands[0])[1:])
    saved = Vault.open(git_vault).get("The staging database is db2.internal on port 5433.")
    assert saved.type == "fact" and saved.body.strip() == "The staging database is db2.internal on port 5433."
    after = Vault.open(git_vault).review(50)
    assert fact.key not in {it.key for it in after.items} and after.dismissed == 1
    assert {it.key for it in after.items if it.kind == "candidate"} == {it.key for it in cands} - {pg.key, fact.key}
    # so does one an editor saved in other words around it, its sentence differently wrapped and cased
    fridays = next(it for it in cands if "Never deploy" in it.evidence[0])
    (git_vault / "notes" / "fridays.md").write_text(
        "---\ntype: preference\n---\n# Deploys\n\nThe team agreed:\nnever   deploy\non FRIDAYS. Since March.\n"
    )
    left = {it.key for it in Vault.open(git_vault).review(50).items if it.kind == "candidate"}
    assert fridays.key not in left and len(left) == 3


def test_mcp_review_shows_the_candidates(git_vault: Path, tmp_path: Path) -> None:
    import anyio

    from mdmem.edges.mcp_server import create_server
    from mdmem.edges.mcp_tools import Served

    transcript = write_transcript(tmp_path / "s.jsonl", [entry(r, t, tmp_path, i) for i, (r, t) in enumerate(SESSION)])
    stop = hook(git_vault, "stop", {"session_id": "cand-2", "transcript_path": str(transcript), "cwd": str(tmp_path)})
    assert stop.returncode == 0, stop.stderr
    with Vault.open(git_vault) as vault:
        server = create_server(Served(vault))
        got: Any = anyio.run(server.call_tool, "review", {"limit": 50})
        assert not got.is_error, got.content[0].text
        items = [it for it in got.structured_content["items"] if it["kind"] == "candidate"]
        assert len(items) == 6
        assert "said: We decided to use Postgres LISTEN/NOTIFY instead of Redis." in got.content[0].text
        assert all(it["commands"][-1] == f"mdmem dismiss {it['key']}" for it in items)
    json.dumps(got.structured_content)  # plain data


def test_a_hostile_sentence_stays_one_quoted_argument(git_vault: Path, tmp_path: Path) -> None:
    said = "We decided to use $(touch /tmp/owned) and `rm -rf ~`; echo 'x' \"y\" | tee z."
    transcript = write_transcript(tmp_path / "s.jsonl", [entry("user", said, tmp_path)])
    stop = hook(git_vault, "stop", {"session_id": "cand-3", "transcript_path": str(transcript), "cwd": str(tmp_path)})
    assert stop.returncode == 0, stop.stderr
    (item,) = [it for it in Vault.open(git_vault).review(50).items if it.kind == "candidate"]
    argv = shlex.split(item.commands[0])
    assert argv[argv.index("--body") + 1] == said and argv[-2:] == ["--body", said]
