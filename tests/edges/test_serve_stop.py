"""A warm server can always be stopped: ``serve --stop`` while it is busy on a request, while it answers
nothing at all, or after its vault's ``mdmem.toml`` became one mdmem refuses; SIGTERM mid-request ends
it at once. Each test runs a real ``mdmem serve`` process. The busy request is a real one: a read waits
(here up to 120 s) for a pending background catch-up, whose running lock the test holds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mdmem.edges.serve import call_server, gone, is_server_process, read_info
from mdmem.index.state import JOB_FILES, JOB_HOOK, IndexState
from tests.conftest import mdmem

ENV = {"MDMEM_EMBED_MODEL": "hash", "MDMEM_CATCHUP_WAIT": "120"}


@contextmanager
def server(root: Path, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A warm ``mdmem serve`` of ``root`` (its serve.json written); killed at the end if still there."""
    log = open(tmp_path / "serve.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mdmem", "--vault", str(root), "serve", "--idle-timeout", "300"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, **ENV},
    )
    try:
        deadline = time.monotonic() + 120
        while (info := read_info(root)) is None or info["pid"] != proc.pid:
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
            time.sleep(0.05)
        yield proc
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
        proc.wait()
        log.close()


@contextmanager
def busy(root: Path) -> Iterator[dict[str, Any]]:
    """A query sent to the server, which waits for a background catch-up that never finishes while
    this holds the job's running lock; yields what the query got (filled once it returns)."""
    state = IndexState(root, 5.0)
    mark = state.dir / JOB_FILES[JOB_HOOK][0]
    got: dict[str, Any] = {}
    with state.job_slot():
        mark.write_text(json.dumps({"why": "a checkout", "since": time.time(), "token": "t"}) + "\n")
        asking = threading.Thread(
            target=lambda: got.update(answer=call_server(root, "ask", {"mode": "query", "text": "release train"})),
            daemon=True,
        )
        asking.start()
        time.sleep(1.5)  # the request is in: the server's work thread waits for the job
        assert asking.is_alive()
        try:
            yield got
        finally:
            mark.unlink(missing_ok=True)


def test_serve_stop_stops_a_server_busy_on_a_request(git_vault: Path, tmp_path: Path) -> None:
    with server(git_vault, tmp_path) as proc, busy(git_vault):
        out = mdmem("--vault", str(git_vault), "serve", "--stop", env=ENV)
        assert out.stdout.startswith(f"Stopped the server (pid {proc.pid})")
        assert gone(proc.pid)  # when --stop returns, the process has ended
        assert read_info(git_vault) is None and not (git_vault / ".mdmem" / "serve.json").exists()
    assert "Traceback" not in (tmp_path / "serve.log").read_text()


def test_serve_stop_needs_no_answer_from_the_server(git_vault: Path, tmp_path: Path) -> None:
    """A server that answers nothing (stopped here with SIGSTOP; a long pass holding the interpreter
    did the same) is recognised by its process and killed once SIGTERM is not enough."""
    with server(git_vault, tmp_path) as proc:
        assert is_server_process(read_info(git_vault) or {})
        os.kill(proc.pid, signal.SIGSTOP)
        assert call_server(git_vault, "whoami", {}, timeout=1.0) is None
        out = mdmem("--vault", str(git_vault), "serve", "--stop", env=ENV)
        assert "it was killed" in out.stdout and gone(proc.pid)
        assert not (git_vault / ".mdmem" / "serve.json").exists()  # a killed server's file goes too


def test_sigterm_ends_a_server_mid_request(git_vault: Path, tmp_path: Path) -> None:
    with server(git_vault, tmp_path) as proc, busy(git_vault):
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)  # the request would hold it for 120 s more
        assert not (git_vault / ".mdmem" / "serve.json").exists()
    assert "Traceback" not in (tmp_path / "serve.log").read_text()


@pytest.mark.parametrize("setting", ['notes_dir = "../.."', "this is not toml ["])
def test_serve_stop_works_when_the_vaults_settings_are_refused(git_vault: Path, tmp_path: Path, setting: str) -> None:
    toml = git_vault / "mdmem.toml"
    with server(git_vault, tmp_path) as proc:
        toml.write_text(f"[vault]\n{setting}\n")  # pushed while the server runs
        refused = mdmem("--vault", str(git_vault), "status", check=False, env=ENV)
        assert refused.returncode == 1 and "Traceback" not in refused.stderr
        out = mdmem("--vault", str(git_vault), "serve", "--stop", env=ENV)
        assert out.stdout.startswith(f"Stopped the server (pid {proc.pid})") and gone(proc.pid)
        assert mdmem("--vault", str(git_vault), "serve", "--stop", env=ENV).stdout.startswith("No server")
