"""The warm ``mdmem serve`` under concurrent requests: reads run in parallel on reading lanes, and writes
made meanwhile (other processes' adds) are all kept and found.

A real server (``Server`` in a thread of this process, so that a read can be held at a hook point) asked
over loopback as the CLI asks it (``call_server``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mdmem.api.vault import Vault
from mdmem.edges.serve import Server, call_server, read_info

from ..conftest import git, hold_search

HELD = "held at the hook point"


@pytest.fixture(autouse=True)
def _hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    monkeypatch.delenv("MDMEM_NO_SERVE", raising=False)


@pytest.fixture
def served(git_vault: Path) -> Iterator[Server]:
    """The vault's warm server with its two reading lanes open."""
    server = Server(git_vault, idle_timeout=300, fill_vectors=False, warm=False)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while read_info(git_vault) is None or server.lanes.count < 2:
        assert thread.is_alive() and time.monotonic() < deadline
        time.sleep(0.02)
    yield server
    server.stop()
    thread.join(timeout=10)
    assert not thread.is_alive()


def ask(root: Path, text: str, mode: str = "search") -> dict[str, Any] | None:
    return call_server(root, "ask", {"mode": mode, "text": text, "limit": 5}, timeout=60)


def test_a_read_held_at_a_hook_point_does_not_hold_another_read(
    git_vault: Path, served: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, release = hold_search(monkeypatch, HELD)
    done: dict[str, Any] = {}
    held = threading.Thread(target=lambda: done.update(held=ask(git_vault, HELD)), daemon=True)
    held.start()
    try:
        assert entered.wait(30)
        t = time.monotonic()
        answers = [ask(git_vault, "coffee machine"), ask(git_vault, "coffee machine", "query")]
        assert time.monotonic() - t < 20  # one request at a time: these would wait for the held one
        assert all(a is not None and a["results"] for a in answers), answers
        assert "held" not in done  # both answered while the first read was still held
    finally:
        release.set()
    held.join(30)
    assert done["held"] is not None


def test_adds_made_while_the_server_reads_are_all_kept_and_found(git_vault: Path, served: Server) -> None:
    """Four writers (a ``Vault`` each, as separate processes would be) add at once while requests keep
    the server's lanes busy; then the server finds every note."""
    words = [f"zqserved{i}word" for i in range(4)]
    paths: dict[str, str] = {}
    stop = threading.Event()
    failures: list[Any] = []

    def add(word: str) -> None:
        with Vault.open(git_vault) as v:
            added = v.save(f"Kept note {word}", f"{word} must be found.", type="fact", force=True).added
            assert added is not None
            paths[word] = added.path

    def read() -> None:
        while not stop.is_set():
            if ask(git_vault, "coffee machine") is None:
                failures.append("no answer")

    readers = [threading.Thread(target=read) for _ in range(3)]
    writers = [threading.Thread(target=add, args=(w,)) for w in words]
    for t in [*readers, *writers]:
        t.start()
    for t in writers:
        t.join(120)
    stop.set()
    for t in readers:
        t.join(60)
    assert not failures and sorted(paths) == sorted(words)
    for w in words:
        answer = ask(git_vault, w)
        assert answer is not None and [h["path"] for h in answer["results"]] == [paths[w]]
    committed = set(git(git_vault, "-c", "core.quotepath=off", "ls-files").splitlines())
    assert set(paths.values()) <= committed
