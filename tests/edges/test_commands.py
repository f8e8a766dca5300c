"""The command table: each row is a CLI command and an MCP tool, with the same parameters, the same
call and the same answer."""

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
from mdmem.cli import cli
from mdmem.edges.commands import COMMANDS, Command
from mdmem.edges.mcp_server import create_server
from mdmem.edges.mcp_tools import Served, Tools

from ..conftest import mdmem_in_process


@pytest.mark.parametrize("spec", COMMANDS, ids=lambda c: c.name)
def test_a_row_is_a_cli_command_with_its_parameters(spec: Command) -> None:
    command = cli.get_command(click.Context(cli), spec.name)
    assert command is not None and command.help == spec.help
    names = {p.name for p in command.params}
    assert names == {p.name for p in spec.params if p.cli} | {"as_json"}
    for p in spec.params:
        if p.cli and not p.required:
            option = next(o for o in command.params if o.name == p.name)
            assert isinstance(option, click.Option) and option.help == p.help and option.multiple == p.many


@pytest.mark.parametrize("spec", COMMANDS, ids=lambda c: c.name)
def test_a_row_is_a_tool_whose_arguments_the_model_can_read(spec: Command, vault_dir: Path) -> None:
    with Vault.open(vault_dir) as v:
        tools = {t.name: t for t in anyio.run(create_server(Served(v)).list_tools)}
    schema = tools[spec.tool or spec.name].input_schema
    props = schema["properties"]
    assert set(props) == {p.name for p in spec.params if p.mcp} | {"vault"}
    assert all(props[name].get("description") for name in props)  # every argument says what it is
    assert set(schema.get("required", [])) == {p.name for p in spec.params if p.mcp and p.required}


def run_cli(vault: Path, *args: str) -> Any:
    return json.loads(mdmem_in_process("--vault", str(vault), *args, "--json").stdout)


def test_the_cli_and_the_tool_give_the_same_answer(vault_dir: Path) -> None:
    via_cli = run_cli(vault_dir, "backlinks", "Release train schedule")
    with Vault.open(vault_dir) as v:
        result = anyio.run(create_server(Served(v)).call_tool, "backlinks", {"note": "Release train schedule"})
    assert not result.is_error and result.structured_content == via_cli
    assert via_cli["note"]["title"] == "Release train schedule"


def test_words_lists_and_errors(vault_dir: Path) -> None:
    """A row's words are joined on the command line, its lists reach the call, and a library error is
    the tool's error with the library's message."""
    who = mdmem_in_process("--vault", str(vault_dir), "person", "Nobody", "At", "All", check=False)
    assert who.returncode == 1 and "No person is known as 'Nobody At All'" in who.stderr
    with Vault.open(vault_dir) as v:
        tools = Tools(Served(v), threading.Lock())
        path = tools.table_tool(next(c for c in COMMANDS if c.name == "path"))
        found = path(source="Release train schedule", target="Release train schedule", types=["mentions"])
        assert found.structured_content["found"] is True
        with pytest.raises(ToolError, match="no such note xyz"):
            path(source="Release train schedule", target="no such note xyz")


def test_a_vault_name_on_a_server_of_one_vault_is_a_clear_error(vault_dir: Path) -> None:
    with Vault.open(vault_dir) as v, pytest.raises(ToolError, match="serves one vault"):
        anyio.run(create_server(Served(v)).call_tool, "links", {"note": "Release train schedule", "vault": "elsewhere"})
