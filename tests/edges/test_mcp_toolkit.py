"""Through the real MCP client: set, history/diff/show, find_similar, profile and the rest of the CLI
as tools (one stdio session), and the CLI ↔ MCP decision every new command must make."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from mdmem.cli import COMMANDS
from mdmem.edges.commands import BY_NAME as TABLE
from mdmem.edges.commands import NOT_ROWS
from mdmem.edges.mcp_tools import Served, Tools, tools_of

from ..conftest import git, mdmem_in_process
from .test_mcp import run, stdio_session, text

# The hand-written CLI commands an agent has as a hand-written tool (the others say why not in
# ``commands.NOT_ROWS``; a row of the command table is both, by construction).
HAND_TOOLS = {
    "add": "add",
    "correct": "correct",
    "reindex": "reindex",
    "import": "import_memories",
}


@pytest.fixture(autouse=True)
def _hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")


def test_every_cli_command_has_an_mcp_decision() -> None:
    """A command is a row (a tool by construction, or says why not), or a hand-written command whose
    reason ``NOT_ROWS`` gives, naming its hand-written tool when it has one."""
    assert set(COMMANDS) == set(NOT_ROWS), "decide for each new CLI command: a row, or why not"
    tools = {fn.__name__ for fn, _ in tools_of(Tools(Served(None), threading.Lock()))}  # type: ignore[arg-type]
    assert set(HAND_TOOLS.values()) <= tools
    assert all(f"tool {HAND_TOOLS[c].split('_')[0]}" in NOT_ROWS[c] for c in HAND_TOOLS)
    assert {c.tool_name for c in TABLE.values() if c.has_tool} <= tools and not set(TABLE) & set(COMMANDS)


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
