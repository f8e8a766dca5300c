"""Nothing under ``.mdmem/`` that came with a clone is trusted: a committed link is never written
through, a FIFO or ``/dev/zero`` in place of a state file stalls nothing, a committed ``serve.json``
names no server (``status`` shows none, ``serve --stop`` signals nobody), and ``doctor`` reports a
tracked ``.mdmem/`` with the way to untrack it. Real git repositories, real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mdmem.index.state import IndexState

from ..conftest import clone, git, mdmem_in_process


def cli(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return mdmem_in_process("--vault", str(vault), *args, check=False, timeout=120)


@pytest.fixture
def pulled(tmp_path: Path) -> tuple[Path, Path]:
    """A teammate's repository that force-added files into .mdmem/, and the victim's clone of it
    (an mdmem vault with its own index): (teammate, victim)."""
    mate = tmp_path / "mate"
    mdmem_in_process("init", str(mate))
    git(mate, "config", "user.name", "Mate")
    git(mate, "config", "user.email", "mate@example.com")
    return mate, tmp_path / "victim"


def commit_state(mate: Path, files: dict[str, str]) -> None:
    """Force-add links (value "-> TARGET") or files into the teammate's .mdmem/ and commit them."""
    for name, value in files.items():
        p = mate / ".mdmem" / name
        p.unlink(missing_ok=True)
        if value.startswith("-> "):
            p.symlink_to(value[3:])
        else:
            p.write_text(value)
    git(mate, "add", "-f", *[f".mdmem/{n}" for n in files])
    git(mate, "commit", "-q", "-m", "state", env={"MDMEM_SKIP_HOOK": "1"})


def test_a_committed_link_as_a_job_log_is_never_appended_through(pulled: tuple[Path, Path], tmp_path: Path) -> None:
    mate, victim = pulled
    outside = tmp_path / "outside.txt"
    outside.write_text("the user's own file\n")
    clone(mate, victim)
    commit_state(mate, {"catchup.log": f"-> {outside}", "embed.log": f"-> {outside}"})
    git(victim, "pull", "-q", env={"MDMEM_SKIP_HOOK": "1"})  # a hook would ask for the job too
    assert (victim / ".mdmem" / "catchup.log").is_symlink()
    state = IndexState(victim, 30.0)
    for kind in ("catch-up", "embed"):
        state.request_job("test", kind)  # starts a job, or one (from init) is at work already
        for _ in range(600):
            if not state.job_active(kind):
                break
            time.sleep(0.1)
    assert outside.read_text() == "the user's own file\n"
    assert not (victim / ".mdmem" / "catchup.log").is_symlink()


@pytest.mark.parametrize("name", ["manifest.json", "dirty", "catchup", "folders.json", "serve.json"])
@pytest.mark.parametrize("what", ["/dev/zero", "fifo"])
def test_a_state_file_that_never_ends_or_never_starts_stalls_nothing(
    git_vault: Path, tmp_path: Path, name: str, what: str
) -> None:
    target = git_vault / ".mdmem" / name
    target.unlink(missing_ok=True)
    if what == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(what)
    proc = cli(git_vault, "search", "coffee", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["count"] >= 1
    assert cli(git_vault, "status", "--json").returncode == 0


def sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])


def test_a_committed_serve_json_names_no_server_and_stops_nobody(pulled: tuple[Path, Path]) -> None:
    mate, victim = pulled
    victim_proc = sleeper()  # some process of the victim's that the file names
    try:
        commit_state(
            mate,
            {
                "serve.json": json.dumps(
                    {"pid": victim_proc.pid, "port": 1, "token": "t", "vault": str(victim.resolve())}
                )
            },
        )
        clone(mate, victim)
        os.chmod(victim / ".mdmem" / "serve.json", 0o600)  # as the server writes it; git gives 0644
        assert json.loads(cli(victim, "status", "--json").stdout)["serve"] is None
        proc = cli(victim, "serve", "--stop")
        assert proc.returncode == 0 and "No server is running" in proc.stdout
        time.sleep(0.2)
        assert victim_proc.poll() is None  # not signalled
    finally:
        victim_proc.send_signal(signal.SIGKILL)
        victim_proc.wait()


def test_a_stale_serve_json_is_proven_before_any_signal(git_vault: Path) -> None:
    """A server killed with SIGKILL leaves its (sealed) serve.json; its pid may be another process's
    by now. ``serve --stop`` asks the server who it is first: no answer, no signal."""
    from mdmem.index.state import server_seal

    other = sleeper()
    try:
        info: dict[str, object] = {"pid": other.pid, "port": 9, "token": "t", "vault": str(git_vault.resolve())}
        info["seal"] = server_seal(info)
        path = git_vault / ".mdmem" / "serve.json"
        path.write_text(json.dumps(info))
        path.chmod(0o600)
        proc = cli(git_vault, "serve", "--stop")
        assert proc.returncode == 1 and "nothing was stopped" in proc.stderr and "Traceback" not in proc.stderr
        time.sleep(0.2)
        assert other.poll() is None
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait()


def test_doctor_reports_a_tracked_state_folder(pulled: tuple[Path, Path]) -> None:
    mate, victim = pulled
    commit_state(mate, {"notes-cache.txt": "whatever"})
    clone(mate, victim)
    out = cli(victim, "doctor").stdout
    assert "tracked by git (.mdmem/notes-cache.txt)" in out and "git rm -r -q --cached .mdmem" in out
