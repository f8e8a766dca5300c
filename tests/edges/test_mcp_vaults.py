"""`mdmem mcp --vaults a,b` through the MCP SDK's own client: every tool takes `vault`, recall
and the other reads span the set, NAME:id notes go to their vault."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from ..api.test_vault_set import ANSWER, OTHER, QUESTION, WEAK, write_vault
from ..conftest import mdmem_in_process
from .test_mcp import run, text


@pytest.fixture(autouse=True)
def _hash_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    monkeypatch.setenv("MDMEM_CONFIG", str(tmp_path / "config" / "vaults.toml"))


@asynccontextmanager
async def session(args: list[str], errlog: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mdmem", "mcp", "--no-warm", *args], env=dict(os.environ)
    )
    with open(errlog, "w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                yield s


def test_mcp_over_two_vaults(tmp_path: Path) -> None:
    a = write_vault(tmp_path / "a", WEAK)
    b = write_vault(tmp_path / "b", {**ANSWER, **OTHER})
    mdmem_in_process("vaults", "add", "work", str(a))
    mdmem_in_process("vaults", "add", "team", str(b))
    mdmem_in_process("vaults", "add", "gone", str(tmp_path / "gone"))

    async def main() -> None:
        async with session(["--vaults", "work,team,gone"], tmp_path / "err.log") as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert all("vault" in t.input_schema["properties"] for t in tools.values() if t.name != "vaults")
            listed = await s.call_tool("vaults", {})
            assert [v["name"] for v in listed.structured_content["vaults"]] == ["work", "team"]
            assert listed.structured_content["vaults"][0]["default"] is True
            each = await s.call_tool("status", {})  # a server of several: each vault's status
            assert not each.is_error and set(each.structured_content["vaults"]) == {"work", "team"}
            assert "work:" in text(each) and "team:" in text(each) and each.structured_content["skipped"]
            r = await s.call_tool("recall", {"query": QUESTION, "limit": 5})
            assert not r.is_error, text(r)
            top = r.structured_content["results"][0]
            assert top["id"] == "team:notes/kafka-consumer-lag" and top["vault"] == "team"
            assert {h["vault"] for h in r.structured_content["results"]} == {"team", "work"}
            assert r.structured_content["skipped"][0]["vault"] == "gone" and "left out" in text(r)

            r = await s.call_tool("get", {"note": top["id"]})  # the qualified id opens the right vault
            assert not r.is_error and "consumer lag alerts now page" in text(r)
            r = await s.call_tool("multi_get", {"notes": [top["id"], "work:team-note-1", "team-note-2", "team:nope"]})
            found, missing = r.structured_content["notes"], r.structured_content["missing"]
            assert [n["path"] for n in found] == [
                "notes/kafka-consumer-lag.md",
                "notes/team-note-1.md",
                "notes/team-note-2.md",
            ]
            assert [m["ref"] for m in missing] == ["team:nope"] and "nope" in missing[0]["error"]

            r = await s.call_tool("search", {"query": "kafka", "vault": "work"})  # one vault: A has no kafka
            assert not r.is_error and r.structured_content["count"] == 0
            r = await s.call_tool("search", {"query": "coffee machine", "vault": "team"})
            assert r.structured_content["results"][0]["id"] == "team:notes/coffee-machine"
            r = await s.call_tool("search", {"query": "x", "vault": "nosuch"})
            assert r.is_error and "No vault named 'nosuch'" in text(r)

            # Writes go to the vault named, else the primary (here: the set's first, work).
            r = await s.call_tool("add", {"title": "Schema registry owner", "body": "Priya owns it.", "vault": "team"})
            assert not r.is_error, text(r)
            assert (b / "notes" / "schema-registry-owner.md").is_file()
            r = await s.call_tool("add", {"title": "Standup moved", "body": "Standup is at ten now."})
            assert not r.is_error and (a / "notes" / "standup-moved.md").is_file()
            r = await s.call_tool("pin", {"note": "team:holiday-rota"})
            assert not r.is_error and "pinned: true" in (b / "notes" / "holiday-rota.md").read_text()
            r = await s.call_tool("link", {"source": "team:holiday-rota", "target": "work:team-note-1"})
            assert r.is_error and "different vaults" in text(r)

            r = await s.call_tool("context", {"prompt": QUESTION, "budget": 300})
            assert "(id: team:notes/holiday-rota)" in text(r) and "team:notes/kafka-consumer-lag" in text(r)
            r = await s.call_tool("status", {"vault": "team"})
            assert not r.is_error and r.structured_content["notes"] == 4

    run(main)
