"""Issue 15 through the real MCP client: set, history/diff/show, find_similar, profile and the rest of
the CLI as tools (one stdio session), and the CLI ↔ MCP mapping that every new command must join."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from mdmem.cli import COMMANDS
from mdmem.edges.commands import BY_NAME as TABLE
from mdmem.edges.mcp_tools import Served, Tools, tools_of

from ..conftest import git, mdmem_in_process
from .test_mcp import run, stdio_session, text

# Every hand-written CLI command → its MCP tool, or None with the reason it has none. A command added to
# COMMANDS without a line here fails test_every_cli_command_has_an_mcp_decision (a row of the command
# table is both, by construction).
CLI_TO_MCP: dict[str, str | tuple[None, str]] = {
    "add": "add",
    "get": "get",
    "pin": "pin",
    "unpin": "pin",
    "snooze": "snooze",
    "forget": "forget",
    "restore": "restore",
    "correct": "correct",
    "set": "set",
    "history": "history",
    "diff": "diff",
    "show": "show",
    "search": "search",
    "vsearch": "vsearch",
    "query": "query",
    "recall": "recall",
    "context": "context",
    "neighbors": "neighbors",
    "why": "why",
    "similar": "find_similar",
    "timeline": "timeline",
    "link": "link",
    "unlink": "unlink",
    "reindex": "reindex",
    "init": (None, "makes a vault; a server runs inside one"),
    "serve": (None, "starts a server process"),
    "mcp": (None, "is the server itself"),
    "setup": (None, "writes the agent's own settings files; a person's decision"),
    "hook": (None, "the agent's hooks call it, not the model"),
    "hooks": (None, "installs git hooks; a person's decision"),
    "eval": (None, "a benchmark for developers, minutes long"),
    "embed": (None, "long-running; writes and reads keep vectors up by themselves"),
    "doctor": (None, "a report for people; status gives the model what it needs"),
    "sweep": (None, "archives notes in bulk; a person's decision"),
    "graph": (None, "exports files (json, dot, html) for people; neighbors/links/path answer the model"),
    "vaults": (None, "edits the user's own config file (named vaults); a person's decision"),
    "import": "import_memories",
    "sync": (
        None,
        "pushes this clone's commits to a shared remote and merges the team's; a person's decision, "
        "and network work that outlasts a tool call",
    ),
    "resolve": (
        None,
        "chooses whose text a shared note keeps; a person's decision (both versions stay searchable until then)",
    ),
}


@pytest.fixture(autouse=True)
def _hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")


def test_every_cli_command_has_an_mcp_decision() -> None:
    assert set(CLI_TO_MCP) == set(COMMANDS), "decide for each new CLI command: its MCP tool, or None and why"
    tools = {fn.__name__ for fn, _ in tools_of(Tools(Served(None), threading.Lock()))}  # type: ignore[arg-type]
    named = {t for t in CLI_TO_MCP.values() if isinstance(t, str)}
    assert named <= tools, f"mapped to tools the server lacks: {named - tools}"
    assert set(TABLE) <= tools and not set(TABLE) & set(COMMANDS)
    assert all(len(t[1]) > 10 for t in CLI_TO_MCP.values() if isinstance(t, tuple))


def test_toolkit_over_stdio(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    mdmem_in_process("init", str(vault))
    first = git(vault, "rev-parse", "HEAD").strip()
    small = "notes/prefer-small-pull-requests.md"

    async def main() -> None:
        async with stdio_session(vault, tmp_path / "err.log") as s:
            await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert {
                "set",
                "history",
                "diff",
                "show",
                "find_similar",
                "profile",
                "unlink",
                "links",
                "backlinks",
                "path",
                "entity",
                "context",
                "reindex",
            } <= set(tools)
            assert all(len(t.description or "") > 40 for t in tools.values())

            r = await s.call_tool(
                "set",
                {
                    "note": "Prefer small pull requests",
                    "salience": 0.9,
                    "tags": ["git", "review"],
                    "remove": ["valid_until"],
                },
            )
            assert not r.is_error, text(r)
            assert r.structured_content["fields"] == {"salience": 0.9, "tags": ["git", "review"], "valid_until": None}
            assert "salience: 0.9" in (vault / small).read_text()
            r = await s.call_tool("set", {"note": small, "type": "opinion"})
            assert r.is_error and "type takes one of" in text(r)

            r = await s.call_tool("diff", {"note": small})
            assert not r.is_error and r.structured_content["old"]["commit"] == first
            assert "+salience: 0.9" in r.structured_content["diff"] and "+salience: 0.9" in text(r)
            r = await s.call_tool("show", {"note": small, "rev": first})
            assert "salience: 0.6" in r.structured_content["text"]
            r = await s.call_tool("show", {"note": small, "rev": "nope"})
            assert r.is_error and "git knows no revision 'nope'" in text(r)
            r = await s.call_tool("history", {"note": small, "diff": True})
            log = r.structured_content["versions"][0]["git_log"]
            assert len(log) == 2 and "+salience: 0.9" in log[0]["diff"]

            r = await s.call_tool("find_similar", {"note": "Use Hotwire for new frontends"})
            found = {x["title"]: x for x in r.structured_content["results"]}
            assert "Use Hotwire for new frontends" not in found and found["Team skills survey"]["linked"] == "out"

            r = await s.call_tool("profile", {})
            d = r.structured_content
            assert d["items"][0] == {**d["items"][0], "title": "Use Hotwire for new frontends", "why": "standing"}
            assert "## Standing facts" in text(r) and "## Recent context" in text(r)
            assert d == (await s.call_tool("profile", {})).structured_content  # stable from call to call

            r = await s.call_tool("link", {"source": small, "target": "Team skills survey", "type": "caused_by"})
            r = await s.call_tool("backlinks", {"note": "Team skills survey"})
            assert not r.is_error and "Prefer small pull requests" in text(r)
            r = await s.call_tool("unlink", {"source": small, "target": "Team skills survey"})
            assert r.structured_content["changed"] and r.structured_content["fields"]["removed"] == 1
            for tool, args in (
                ("links", {"note": "m-example-hotwire"}),
                ("entity", {"name": "React"}),
                ("path", {"source": "m-example-hotwire", "target": "Team skills survey"}),
                ("context", {"prompt": "frontend framework"}),
                ("reindex", {}),
            ):
                r = await s.call_tool(tool, args)
                assert not r.is_error and text(r).strip() and r.structured_content, (tool, text(r))

            r = await s.call_tool("import_memories", {"path": str(memory)})
            assert not r.is_error and len(r.structured_content["written"]) == 2, text(r)
            assert "imported 2 new note(s)" in text(r)
            again = await s.call_tool("import_memories", {"path": str(memory)})
            assert again.structured_content["written"] == [] and again.structured_content["skipped"] == 2
            for bad, why in ((str(obsidian), "Obsidian vault"), ("MEMORY.md", "absolute path")):
                r = await s.call_tool("import_memories", {"path": bad})
                assert r.is_error and why in text(r)

    memory = tmp_path / "MEMORY.md"
    memory.write_text(
        "# Memory\n\n## Decisions\n- Ship on Tuesdays, never on Fridays.\n"
        "- Keep the staging token ghp_abcdefghijklmnopqrstuvwxyz0123456789 out of notes.\n"
    )
    obsidian = tmp_path / "ob"
    (obsidian / ".obsidian").mkdir(parents=True)
    run(main)
    assert "ghp_abcdefghij" not in git(vault, "log", "-p", "--all")
    subjects = git(vault, "log", "-2", "--format=%s").splitlines()
    assert subjects[0].startswith("mdmem: import 2 new") and subjects[1].startswith("mdmem: unlink")
