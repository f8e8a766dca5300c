"""The docs stay true to the code: the command reference is what the CLI says and names every command
and option, the README's test command is the one CI runs, and the links between pages resolve."""

from __future__ import annotations

import re
from pathlib import Path

import click

from mdmem.cli import cli
from mdmem.cli.reference import PAGE, commands, main, options, render

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_committed_reference_is_what_the_cli_generates() -> None:
    assert main(["--check"]) == 0, "docs/reference.md is stale: run python -m mdmem.cli.reference"


def test_every_command_and_option_has_help_and_an_entry() -> None:
    page = PAGE.read_text(encoding="utf-8")
    sections = dict(re.findall(r"^#{2,3} (mdmem[^\n]*)\n(.*?)(?=^#{2,3} mdmem|\Z)", page, re.S | re.M))
    root = click.Context(cli, info_name="mdmem")
    found = commands(cli, root)
    assert len(found) > 55  # every command and subcommand, groups too
    for path, command, ctx in found:
        name = "mdmem " + " ".join(path)
        assert (command.help or "").strip(), f"{name} has no help"
        assert name in sections, f"{name} has no entry in docs/reference.md"
        for names, text in options(command, ctx):
            assert text.strip(), f"{name} {names} has no help"
            assert f"`{names}`" in sections[name], f"{name} {names} is not in its entry"
    assert render() == page


def test_the_readme_test_command_is_the_one_ci_runs() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    test_command = next(lines[i + 1] for i, line in enumerate(lines) if line.startswith("# 2."))
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 160  # a front page, not the manual


def test_the_first_screen_leads_to_the_obsidian_agent_and_sync_pages() -> None:
    first_screen = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:40])
    for page in ("docs/obsidian.md", "docs/agents.md", "docs/sync.md", "docs/getting-started.md"):
        assert f"]({page})" in first_screen


def test_links_between_pages_resolve() -> None:
    for doc in DOCS:
        text = re.sub(r"```.*?```|`[^`\n]*`", "", doc.read_text(encoding="utf-8"), flags=re.S)  # code is not a link
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            assert (doc.parent / target).exists(), f"{doc.relative_to(ROOT)} links to {target}, which is not there"


def test_the_agents_page_names_every_mcp_tool(vault_dir: Path) -> None:
    import anyio

    from mdmem.api.vault import Vault
    from mdmem.edges.mcp_server import create_server

    page = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    table = page.split("| tool | for |")[1].split("\n\n")[0]
    named = {
        n for row in table.splitlines() for n in re.findall(r"`([a-z_]+)`", row.split("|")[1] if "|" in row else "")
    }
    with Vault.open(vault_dir) as vault:
        tools = anyio.run(create_server(vault).list_tools)
    assert named == {t.name for t in tools}
