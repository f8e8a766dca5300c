"""The MCP server end to end: the SDK's own client against `mdmem mcp` over stdio and streamable HTTP."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types.version import LATEST_HANDSHAKE_VERSION

from ..conftest import git, mdmem, mdmem_in_process

TOOLS = {
    "recall",
    "query",
    "search",
    "vsearch",
    "get",
    "multi_get",
    "add",
    "correct",
    "pin",
    "snooze",
    "forget",
    "restore",
    "status",
    "why",
    "timeline",
    "neighbors",
    "link",
}
SECRET = "ghp_" + "1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ"


@pytest.fixture(autouse=True)
def _hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


@asynccontextmanager
async def stdio_session(
    vault: Path, errlog: Path, *, prefix: tuple[str, ...] = ("-m", "mdmem"), cwd: Path | None = None
) -> AsyncIterator[ClientSession]:
    """The SDK's own client on ``mdmem --vault VAULT mcp`` over stdio (``prefix``: how Python runs mdmem)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=[*prefix, "--vault", str(vault), "mcp"],
        env=dict(os.environ),
        cwd=str(cwd) if cwd else None,
    )
    with open(errlog, "w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                yield session


def run(coro: Callable[[], Awaitable[None]]) -> None:
    anyio.run(coro)


def test_stdio_session_recall_add_get_correct_lands_in_vault_and_git(git_vault: Path, tmp_path: Path) -> None:
    async def main() -> None:
        async with stdio_session(git_vault, tmp_path / "err.log") as s:
            init = await s.initialize()
            assert init.server_info.name == "mdmem" and "recall" in (init.instructions or "")
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert TOOLS <= set(tools)
            assert all(len(t.description or "") > 40 for t in tools.values())
            assert "FIRST" in (tools["recall"].description or "")
            assert tools["recall"].annotations.read_only_hint is True
            assert tools["add"].annotations.read_only_hint is False

            r = await s.call_tool("recall", {"query": "when do we ship the release train?", "limit": 3})
            assert not r.is_error, text(r)
            top = r.structured_content["results"][0]
            assert top["title"] == "Release train schedule" and top["type"] == "fact"
            assert {"id", "title", "type", "key", "score"} <= set(top)
            assert "Release train schedule" in text(r) and "get(id)" in text(r)

            body = "Payment retries back off exponentially (1 s, 2 s, 4 s) so the provider can recover."
            r = await s.call_tool(
                "add",
                {
                    "title": "Exponential backoff for payment retries",
                    "body": body,
                    "type": "decision",
                    "tags": ["payments"],
                    "salience": 0.8,
                },
            )
            assert not r.is_error, text(r)
            added = r.structured_content
            assert added["decision"] == "ADD" and added["written"] and added["commit"]
            path = git_vault / added["path"]
            assert "type: decision" in path.read_text() and body in path.read_text()
            assert git(git_vault, "log", "-1", "--format=%s").startswith("mdmem: add decision")
            assert git(git_vault, "status", "--porcelain", "--", added["path"]) == ""

            r = await s.call_tool("add", {"title": "Exponential backoff for payment retries", "body": body})
            assert r.structured_content["decision"] == "NOOP" and not r.structured_content["written"]

            r = await s.call_tool("get", {"note": added["id"]})
            assert not r.is_error and body in text(r) and r.structured_content["id"] == added["id"]

            r = await s.call_tool("search", {"query": "exponential backoff", "limit": 3})
            assert r.structured_content["results"][0]["id"] == added["id"]

            r = await s.call_tool(
                "correct", {"note": added["id"], "body": "Retries use jittered exponential backoff, capped at 30 s."}
            )
            assert not r.is_error, text(r)
            new = r.structured_content["new"]
            old_text = path.read_text()
            assert "status: archived" in old_text and f"superseded_by: {new['id']}" in old_text
            assert f"supersedes: {added['id']}" in (git_vault / new["path"]).read_text()
            assert git(git_vault, "log", "-1", "--format=%s").startswith("mdmem: correct")
            r = await s.call_tool("recall", {"query": "payment retries backoff"})
            assert r.structured_content["results"][0]["id"] == new["id"]

            r = await s.call_tool("pin", {"note": new["id"]})
            assert r.structured_content["changed"] and "pinned: true" in (git_vault / new["path"]).read_text()
            assert "nothing changed" in text(await s.call_tool("pin", {"note": new["id"]}))
            r = await s.call_tool("snooze", {"note": new["id"], "days": 30})
            assert r.structured_content["fields"]["snoozed_until"]
            r = await s.call_tool("search", {"query": "jittered backoff"})
            assert r.structured_content["count"] == 0
            await s.call_tool("restore", {"note": new["id"]})
            await s.call_tool("forget", {"note": "Release train schedule"})
            r = await s.call_tool("search", {"query": "release train"})
            assert all(h["title"] != "Release train schedule" for h in r.structured_content["results"])
            await s.call_tool("restore", {"note": "Release train schedule"})

            r = await s.call_tool("multi_get", {"notes": [new["id"], "no such note"]})
            assert (
                len(r.structured_content["notes"]) == 1 and r.structured_content["missing"][0]["ref"] == "no such note"
            )
            r = await s.call_tool("get", {"note": "no such note"})
            assert r.is_error and "No note matches" in text(r)
            r = await s.call_tool("snooze", {"note": new["id"]})
            assert r.is_error and "--until" in text(r)

            r = await s.call_tool("add", {"title": "CI token", "body": f"The CI pushes with {SECRET}.", "type": "fact"})
            assert r.structured_content["redacted"] == 1 and "redacted" in text(r)
            assert SECRET not in (git_vault / r.structured_content["path"]).read_text()

            r = await s.call_tool("status", {})
            assert not r.is_error and r.structured_content["notes"] >= 13

    run(main)
    assert "Traceback" not in (tmp_path / "err.log").read_text()


def test_stdio_stdout_carries_nothing_but_protocol(git_vault: Path) -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "mdmem", "--vault", str(git_vault), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as proc:
        lines, rest, answered = _talk(proc)
    assert answered == {1, 2, 3, 4, 5}, lines
    for line in rest.splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"


def _talk(proc: subprocess.Popen[str]) -> tuple[list[str], str, set[int]]:
    assert proc.stdin is not None and proc.stdout is not None
    msgs = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LATEST_HANDSHAKE_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "recall", "arguments": {"query": "zebra"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "get", "arguments": {"note": "Conflicted note"}},
        },
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "nope", "arguments": {}}},
    ]
    for m in msgs:
        proc.stdin.write(json.dumps(m) + "\n")
    proc.stdin.flush()
    answered: set[int] = set()
    lines = []
    deadline = time.monotonic() + 60
    while answered != {1, 2, 3, 4, 5} and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        msg = json.loads(line)  # every line on stdout is one JSON-RPC message
        assert msg["jsonrpc"] == "2.0"
        if "id" in msg:
            answered.add(msg["id"])
    proc.stdin.close()
    rest = proc.stdout.read()
    proc.wait(timeout=30)
    return lines, rest, answered


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_server(git_vault: Path, request: pytest.FixtureRequest) -> Any:
    procs: list[subprocess.Popen[bytes]] = []

    def start(*args: str, host: str = "127.0.0.1") -> str:
        port = free_port()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mdmem",
                "--vault",
                str(git_vault),
                "mcp",
                "--http",
                "--host",
                host,
                "--port",
                str(port),
                *args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        procs.append(proc)
        for _ in range(300):
            with socket.socket() as s:
                if s.connect_ex((host, port)) == 0:
                    return f"http://{host}:{port}/mcp"
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.1)
        raise AssertionError("the MCP HTTP server did not start")

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=30)
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()


def test_http_session_on_loopback(git_vault: Path, http_server: Any) -> None:
    url = http_server()

    async def main() -> None:
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                assert TOOLS <= {t.name for t in (await s.list_tools()).tools}
                r = await s.call_tool("recall", {"query": "coffee machine descaling"})
                assert r.structured_content["results"][0]["title"] == "Coffee machine"
                r = await s.call_tool(
                    "add",
                    {
                        "title": "Descale the coffee machine on the first Monday",
                        "body": "Facilities asked for a fixed day.",
                        "type": "fact",
                    },
                )
                assert r.structured_content["written"], text(r)
                assert (git_vault / r.structured_content["path"]).exists()

    run(main)
    assert git(git_vault, "log", "-1", "--format=%s").startswith("mdmem: add fact")


def test_http_off_loopback_requires_the_bearer_token(git_vault: Path, http_server: Any) -> None:
    # A real process: were the refusal broken, it would serve on 0.0.0.0 until killed.
    refused = mdmem(
        "--vault",
        str(git_vault),
        "mcp",
        "--http",
        "--host",
        "0.0.0.0",
        "--port",
        str(free_port()),
        check=False,
        env={"MDMEM_MCP_TOKEN": ""},
    )
    assert refused.returncode == 1 and "--token" in refused.stderr and refused.stdout == ""

    url = http_server("--token", "s3cret-token", host="127.0.0.2")  # not 127.0.0.1: counts as "any other address"
    host, port = url.split("//")[1].split("/")[0].split(":")
    init = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LATEST_HANDSHAKE_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "x", "version": "0"},
            },
        }
    )
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-token"}):
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request(
            "POST",
            "/mcp",
            body=init,
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
        )
        resp = conn.getresponse()
        assert resp.status == 401 and resp.getheader("WWW-Authenticate", "").startswith("Bearer")
        conn.close()

    async def main() -> None:
        async with create_mcp_http_client(headers={"Authorization": "Bearer s3cret-token"}) as client:
            async with streamable_http_client(url, http_client=client) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    r = await s.call_tool("search", {"query": "ERR_X_42"})
                    assert r.structured_content["count"] >= 1

    run(main)


def test_graph_tools_why_timeline_neighbors_link(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    mdmem_in_process("init", str(vault))  # the template's notes link a decision to its causes

    async def main() -> None:
        async with stdio_session(vault, tmp_path / "err.log") as s:
            await s.initialize()
            assert {"why", "timeline", "neighbors", "link"} <= {t.name for t in (await s.list_tools()).tools}
            r = await s.call_tool("why", {"query": "why did we choose hotwire for frontends"})
            assert not r.is_error, text(r)
            roles = {x["title"]: x["role"] for x in r.structured_content["results"]}
            assert roles["Use Hotwire for new frontends"] == "match" and roles["Team skills survey"] == "cause"
            assert "caused_by" in text(r)

            r = await s.call_tool("neighbors", {"note": "m-example-hotwire"})
            titles = {n["title"] for n in r.structured_content["neighbors"]}
            assert {"Team skills survey", "Q3 budget approved"} <= titles

            r = await s.call_tool("timeline", {"note": "Use Hotwire for new frontends"})
            assert not r.is_error and "▶" in text(r)

            r = await s.call_tool(
                "link",
                {
                    "source": "Prefer small pull requests",
                    "target": "Team skills survey",
                    "type": "caused_by",
                    "reason": "the survey asked for it",
                },
            )
            assert not r.is_error and r.structured_content["changed"], text(r)
            assert "the survey asked for it" in (vault / r.structured_content["path"]).read_text()
            assert "nothing changed" in text(
                await s.call_tool(
                    "link",
                    {"source": "Prefer small pull requests", "target": "Team skills survey", "type": "caused_by"},
                )
            )
            r = await s.call_tool(
                "add",
                {
                    "title": "Hotwire frontends need Turbo training",
                    "body": "New frontends use Hotwire, so the team needs Turbo frames training before the migration.",
                    "type": "idea",
                },
            )
            assert "Use Hotwire for new frontends" in [x["title"] for x in r.structured_content["suggested_links"]]
            assert "Similar notes" in text(r)
            r = await s.call_tool("recall", {"query": "prefer small pull requests"})
            top = r.structured_content["results"][0]
            assert top["title"] == "Prefer small pull requests"
            assert {"type": "caused_by", "direction": "out", "title": "Team skills survey"}.items() <= top["links"][
                0
            ].items()
            assert "links: caused_by → Team skills survey" in text(r)

    run(main)
    assert git(vault, "log", "-2", "--format=%s").splitlines()[1].startswith("mdmem: link")
