"""Entities and people as nodes: ``link NOTE ENTITY`` and ``neighbors ENTITY``; a person's
identities written by ``identity`` (CLI and MCP); ``list_notes`` over MCP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..conftest import git, mdmem_in_process
from ..edges.test_mcp import run, stdio_session, text


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    vault = tmp_path / "v"
    mdmem_in_process("init", str(vault))  # the template: decisions, a handoff, a person note (Dana)
    return vault


def cli(vault: Path, *args: str, check: bool = True) -> Any:
    proc = mdmem_in_process("--vault", str(vault), *args, check=check)
    return json.loads(proc.stdout) if "--json" in args and proc.returncode == 0 else proc


def commits(vault: Path) -> list[str]:
    return git(vault, "log", "--format=%s").splitlines()


def test_a_note_links_to_an_entity_and_the_entity_lists_it(example: Path) -> None:
    before = len(commits(example))
    change = cli(example, "link", "m-example-survey", "Railway", "--json")
    assert change["changed"] and change["fields"]["to"]["kind"] == "entity"
    text_ = (example / "notes" / "team-skills-survey.md").read_text()
    assert "entities: [Rails, React, Hotwire, Railway]" in text_
    assert len(commits(example)) == before + 1 and commits(example)[0].endswith('-about-> "Railway"')
    assert not cli(example, "link", "m-example-survey", "railway", "--json")["changed"]  # there in any case

    cli(example, "link", "Q3 budget approved", "Railway", "--type", "depends_on", "--reason", "hosting")
    fact = (example / "notes" / "q3-budget-approved.md").read_text()
    assert "Railway" in fact and "{to: Railway, type: depends_on, reason: hosting}" in fact
    got = cli(example, "neighbors", "Railway", "--json")
    assert got["note"]["kind"] == "entity"
    assert {n["title"] for n in got["neighbors"]} == {"Team skills survey", "Q3 budget approved"}
    links = cli(example, "links", "Q3 budget approved", "--json")
    typed = [r for r in links["links"] if r["type"] == "depends_on"]
    assert typed and typed[0]["to"]["kind"] == "entity"  # the links entry resolves to the entity's node


def test_a_name_close_to_a_note_is_not_taken_for_an_entity_unless_asked(example: Path) -> None:
    bad = cli(example, "link", "Q3 budget approved", "Team skils survey", check=False)
    assert bad.returncode == 1 and "link it with --entity" in bad.stderr
    cli(example, "link", "Q3 budget approved", "Team skils survey", "--entity")
    assert "Team skils survey" in (example / "notes" / "q3-budget-approved.md").read_text()


def test_a_persons_handle_links_to_the_person_note(example: Path) -> None:
    change = cli(example, "link", "Prefer small pull requests", "@dana", "--json")
    assert change["fields"]["to"]["title"] == "Dana Okafor"
    got = cli(example, "neighbors", "dana@example.com", "--json")
    assert "Prefer small pull requests" in {n["title"] for n in got["neighbors"]}


def test_identity_writes_the_person_notes_identities_and_keeps_the_rest(example: Path) -> None:
    note = example / "notes" / "dana-okafor.md"
    old = note.read_text()
    before = len(commits(example))
    got = cli(example, "identity", "@dana", "--email", "dana.o@corp.example", "--handle", "dokafor", "--json")
    assert got["fields"]["added"] == ["dana.o@corp.example", "@dokafor"]
    new = note.read_text()
    changed = [(a, b) for a, b in zip(old.splitlines(), new.splitlines()) if a != b]
    assert len(changed) == 1 and changed[0][0].startswith("identities:")  # one line, its comment kept
    assert "# names, e-mail addresses" in changed[0][1] and len(old.splitlines()) == len(new.splitlines())
    assert len(commits(example)) == before + 1 and commits(example)[0].startswith('mdmem: identities of "Dana')
    assert cli(example, "person", "@dokafor", "--json")["person"]["path"] == "notes/dana-okafor.md"

    assert not cli(example, "identity", "Dana Okafor", "--handle", "@dokafor", "--json")["changed"]
    claimed = cli(example, "identity", "Lee Park", "--email", "dana@example.com", check=False)
    assert claimed.returncode == 1 and "already an identity of Dana Okafor" in claimed.stderr
    assert not (example / "notes" / "lee-park.md").exists()
    cli(example, "identity", "Dana", "--remove", "dana.o@corp.example")
    assert "dana.o@corp.example" not in note.read_text()
    bad = cli(example, "identity", "Dana", "--email", "not-an-address", check=False)
    assert bad.returncode == 1 and "is not an e-mail address" in bad.stderr

    made = cli(example, "identity", "Lee Park", "--email", "lee@example.com", "--json")
    assert (
        made["fields"]["created"] and "identities: [Lee Park, lee@example.com]" in (example / made["path"]).read_text()
    )
    assert cli(example, "person", "lee@example.com", "--json")["person"]["title"] == "Lee Park"


def test_mcp_lists_links_an_entity_and_writes_identities(example: Path, tmp_path: Path) -> None:
    async def main() -> None:
        async with stdio_session(example, tmp_path / "err.log") as s:
            await s.initialize()
            r = await s.call_tool("list_notes", {"type": ["decision"], "include": ["archived"]})
            assert not r.is_error, text(r)
            assert [x["title"] for x in r.structured_content["results"]] == [
                "Use Hotwire for new frontends",
                "Use React for frontends",
            ]
            assert "newest first" in text(r) and "dated 2026-03-02" in text(r)
            r = await s.call_tool("link", {"source": "Payment timeouts (ERR_PAY_504)", "target": "Railway"})
            assert not r.is_error and r.structured_content["changed"], text(r)
            r = await s.call_tool("neighbors", {"note": "Railway"})
            assert [n["title"] for n in r.structured_content["neighbors"]] == ["Payment timeouts (ERR_PAY_504)"]
            r = await s.call_tool("identity", {"person": "Dana Okafor", "handle": ["github:dokafor"]})
            assert not r.is_error, text(r)
            assert "github:dokafor" in (example / "notes" / "dana-okafor.md").read_text()

    run(main)
