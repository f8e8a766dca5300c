"""The command table: each row is a CLI command and an MCP tool with the same parameters (names, types,
defaults), the same call and the same answer; every CLI command is a row or says why it is not."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
import click
import pytest
from mcp.server.mcpserver.exceptions import ToolError

from mdmem.api.vault import Vault
from mdmem.cli import COMMANDS as HAND_WRITTEN
from mdmem.cli import cli
from mdmem.core.schema import FILTER_ARGS
from mdmem.edges.commands import BY_NAME, COMMANDS, NOT_ROWS
from mdmem.edges.mcp_server import create_server
from mdmem.edges.mcp_tools import Served, Tools
from mdmem.edges.table import Command, Param

from ..conftest import mdmem_in_process
from .test_mcp import stdio_session

SHARED = [c for c in COMMANDS if c.has_tool]


@pytest.fixture(scope="module")
def listed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The tools as the real SDK client lists them from ``mdmem mcp`` over stdio, by name."""
    import shutil

    from ..conftest import FIXTURE, FIXTURE_IGNORE

    root = tmp_path_factory.mktemp("surface")
    shutil.copytree(FIXTURE, root / "vault", ignore=FIXTURE_IGNORE)
    tools: dict[str, Any] = {}

    async def main() -> None:
        async with stdio_session(root / "vault", root / "err.log") as s:
            await s.initialize()
            tools.update({t.name: t for t in (await s.list_tools()).tools})

    with pytest.MonkeyPatch.context() as env:  # the autouse fixtures' environment is a test's, not a module's
        env.setenv("HOME", str(root / "home"))
        env.setenv("MDMEM_HOME", str(root / "mdmem-home"))
        env.setenv("MDMEM_CONFIG", str(root / "vaults.toml"))
        env.setenv("MDMEM_EMBED_MODEL", "hash")
        env.setenv("MDMEM_AUTO_EMBED", "0")
        anyio.run(main)
    return tools


def click_command(spec: Command) -> click.Command:
    command = cli.get_command(click.Context(cli), spec.name)
    assert command is not None
    return command


def schema_types(prop: dict[str, Any]) -> set[str]:
    """The JSON types a tool argument takes (``anyOf`` spelled out)."""
    options = prop.get("anyOf", [prop])
    return {o["type"] for o in options if "type" in o} | {
        f"array of {o['items']['type']}" for o in options if o.get("type") == "array"
    }


def expected_types(p: Param) -> set[str]:
    """What a parameter's JSON types are, from the row: a list takes one string or several."""
    base = {str: "string", int: "integer", float: "number", bool: "boolean"}[p.type]
    types = {"string", "array", "array of string", "null"} if p.many else {base}
    if not p.required and p.mcp_default is None:
        types.add("null")
    return types


def test_every_cli_command_is_a_row_or_says_why_not() -> None:
    """The CLI offers the rows and the hand-written commands; each hand-written one has its reason."""
    names = set(cli.list_commands(click.Context(cli)))
    assert names == set(BY_NAME) | set(HAND_WRITTEN)
    assert set(HAND_WRITTEN) == set(NOT_ROWS) and not set(BY_NAME) & set(NOT_ROWS)
    assert all(len(why) > 20 for why in NOT_ROWS.values())
    assert all(c.why_not for c in COMMANDS if not c.has_tool)


@pytest.mark.parametrize("spec", COMMANDS, ids=lambda c: c.name)
def test_a_row_is_a_cli_command_with_its_parameters(spec: Command) -> None:
    """The click command has the row's command-line parameters (the filters spelled out), its help, its
    defaults and whether each is a list."""
    command = click_command(spec)
    assert command.help == spec.help
    params = {p.name: p for p in command.params}
    assert set(params) == {p.name for p in spec.expanded() if p.cli} | {"as_json"}
    for p in spec.expanded():
        if not p.cli:
            continue
        param = params[p.name]
        assert param.multiple == p.many if isinstance(param, click.Option) else True
        if isinstance(param, click.Option):
            assert param.help == p.help
            assert param.default == (None if p.required else p.default)
            assert param.is_flag == (p.type is bool)
        else:
            assert param.required == p.required


@pytest.mark.parametrize("spec", SHARED, ids=lambda c: c.name)
def test_the_cli_and_the_tool_take_the_same_parameters(spec: Command, listed: dict[str, Any]) -> None:
    """For every shared command the tool the SDK client lists has the row's parameters — the click
    command's, less the display and command-line-only ones, plus the tool-only ones and ``vault`` —
    with the same types, defaults and required ones; every argument says what it is."""
    tool = listed[spec.tool_name]
    schema = tool.input_schema
    props = schema["properties"]
    on_cli = {p.name for p in click_command(spec).params} - {"as_json"}
    cli_only = {p.name for p in spec.expanded() if not p.mcp}
    tool_only = {p.name for p in spec.expanded() if not p.cli}
    assert set(props) == (on_cli - cli_only) | tool_only | {"vault"}
    assert all(props[name].get("description") for name in props)
    assert set(schema.get("required", [])) == {p.name for p in spec.expanded() if p.mcp and p.required}
    for p in spec.expanded():
        if not p.mcp:
            continue
        prop = props[p.name]
        assert schema_types(prop) >= expected_types(p) - {"array"}, p.name
        if not p.required:
            assert prop.get("default") == (None if p.many else p.mcp_default), p.name
        bounds = [b for b in (prop, *prop.get("anyOf", [])) if "minimum" in b or "maximum" in b]
        if p.low is not None or p.mcp_high is not None:
            assert bounds and bounds[0].get("minimum") == p.low and bounds[0].get("maximum") == p.mcp_high, p.name
    if spec.takes_filters:
        assert set(FILTER_ARGS) <= set(props)


def test_the_retrieval_tools_take_every_filter_and_explain(listed: dict[str, Any]) -> None:
    """search, vsearch, query and recall take the nine filters and explain, as the commands do."""
    for name in ("search", "vsearch", "query", "recall"):
        props = listed[name].input_schema["properties"]
        assert {*FILTER_ARGS, "explain", "query", "limit", "vault"} <= set(props)
    assert {"sweep", "doctor", "vaults", "status"} <= set(listed)


def run_cli(vault: Path, *args: str) -> Any:
    return json.loads(mdmem_in_process("--vault", str(vault), *args, "--json").stdout)


def test_the_cli_and_the_tool_give_the_same_answer(vault_dir: Path) -> None:
    via_cli = run_cli(vault_dir, "backlinks", "Release train schedule")
    with Vault.open(vault_dir) as v:
        result = anyio.run(create_server(Served(v)).call_tool, "backlinks", {"note": "Release train schedule"})
    assert not result.is_error and result.structured_content == via_cli
    assert via_cli["note"]["title"] == "Release train schedule"


def test_a_filter_reaches_the_index_from_both_doors(vault_dir: Path) -> None:
    """A path filter (new to the tools) keeps the same notes from the command line and over MCP."""
    via_cli = run_cli(vault_dir, "search", "release", "--path", "notes/nothing-here")
    assert via_cli["results"] == []
    with Vault.open(vault_dir) as v:
        tools = Tools(Served(v), threading.Lock())
        search = tools.table_tool(BY_NAME["search"])
        everywhere = search(query="release")
        nowhere = search(query="release", path="notes/nothing-here", explain=True)
        assert everywhere.structured_content["results"] and nowhere.structured_content["results"] == []


def test_words_lists_and_errors(vault_dir: Path) -> None:
    """A row's words are joined on the command line, its lists reach the call, and a library error is
    the tool's error with the library's message."""
    who = mdmem_in_process("--vault", str(vault_dir), "person", "Nobody", "At", "All", check=False)
    assert who.returncode == 1 and "No person is known as 'Nobody At All'" in who.stderr
    with Vault.open(vault_dir) as v:
        tools = Tools(Served(v), threading.Lock())
        path = tools.table_tool(BY_NAME["path"])
        found = path(source="Release train schedule", target="Release train schedule", types=["mentions"])
        assert found.structured_content["found"] is True
        with pytest.raises(ToolError, match="no such note xyz"):
            path(source="Release train schedule", target="no such note xyz")


def test_a_vault_name_on_a_server_of_one_vault_is_a_clear_error(vault_dir: Path) -> None:
    with Vault.open(vault_dir) as v, pytest.raises(ToolError, match="serves one vault"):
        anyio.run(create_server(Served(v)).call_tool, "links", {"note": "Release train schedule", "vault": "elsewhere"})
