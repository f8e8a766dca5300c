"""The HTTP MCP server under concurrent clients: reads run in parallel, writes one at a time and all kept.

A real server (the streamable-HTTP app under uvicorn, in a thread of this process so that a read can be
held at a hook point) and the SDK's own clients over loopback.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mdmem.api.vault import Vault
from mdmem.edges.mcp_server import http_app, open_lanes
from mdmem.edges.mcp_tools import Served, Tools

from ..conftest import git, hold_search

HELD = "held at the hook point"


@pytest.fixture(autouse=True)
def _hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")


@pytest.fixture
def served_http(git_vault: Path) -> Iterator[tuple[str, Tools]]:
    """The vault's MCP server over HTTP with two reading lanes; its URL and its tools."""
    import uvicorn

    vault = Vault.open(git_vault)
    vault.reindex()
    tools = Tools(Served(vault), threading.Lock())
    open_lanes(tools, 2, warm=False)
    assert tools.lane_count == 2
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(http_app(tools.served, host="127.0.0.1", token=None, tools=tools), port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(300):
        if server.started:
            break
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}/mcp", tools
    server.should_exit = True
    thread.join(timeout=10)
    vault.close()


async def session_call(url: str, tool: str, args: dict[str, Any]) -> Any:
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            return await s.call_tool(tool, args)


def test_a_read_held_at_a_hook_point_does_not_hold_another_read(
    served_http: tuple[str, Tools], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = served_http
    entered, release = hold_search(monkeypatch, HELD)
    done: dict[str, Any] = {}

    async def main() -> None:
        async def held() -> None:
            done["held"] = await session_call(url, "search", {"query": HELD})

        async with anyio.create_task_group() as tg:
            tg.start_soon(held)
            await anyio.to_thread.run_sync(entered.wait, 30)
            assert entered.is_set()
            try:
                with anyio.fail_after(20):  # one call at a time: this would wait for the held one
                    r = await session_call(url, "search", {"query": "coffee machine"})
                    assert not r.is_error and r.structured_content["count"] >= 1
                    g = await session_call(url, "get", {"note": "Coffee machine"})
                    assert not g.is_error
                assert "held" not in done  # both answered while the first read was still held
            finally:
                release.set()
        assert not done["held"].is_error

    anyio.run(main)


def test_concurrent_writes_run_one_at_a_time_and_all_are_kept(
    served_http: tuple[str, Tools], git_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = served_http
    active, most = [0], [0]
    count = threading.Lock()
    save = Vault.save

    def counted_save(self: Vault, *args: Any, **kwargs: Any) -> Any:
        with count:
            active[0] += 1
            most[0] = max(most[0], active[0])
        try:
            time.sleep(0.05)  # a window in which a second write would overlap
            return save(self, *args, **kwargs)
        finally:
            with count:
                active[0] -= 1

    monkeypatch.setattr(Vault, "save", counted_save)
    words = [f"zqparallel{i}word" for i in range(4)]
    paths: dict[str, str] = {}

    async def main() -> None:
        async def add(word: str) -> None:
            r = await session_call(
                url,
                "add",
                {"title": f"Kept note {word}", "body": f"{word} must be found.", "type": "fact", "force": True},
            )
            assert not r.is_error and r.structured_content["written"], r
            paths[word] = r.structured_content["path"]

        async def read() -> None:
            r = await session_call(url, "search", {"query": "coffee machine"})
            assert not r.is_error

        async with anyio.create_task_group() as tg:
            for w in words:
                tg.start_soon(add, w)
                tg.start_soon(read)
        for w in words:
            r = await session_call(url, "search", {"query": w})
            assert [h["path"] for h in r.structured_content["results"]] == [paths[w]]

    anyio.run(main)
    assert most[0] == 1
    committed = set(git(git_vault, "-c", "core.quotepath=off", "ls-files").splitlines())
    assert set(paths.values()) <= committed
    assert all((git_vault / p).is_file() for p in paths.values())
