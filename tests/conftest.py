"""Shared fixtures: a copy of the fixture corpus, optionally as a real git repository."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from mdmem.adapters.embed import load_onnxruntime_first
from mdmem.index import served

# mdmem loads onnxruntime before usearch in every process (importing it after usearch segfaults); the
# test process opens vector indexes outside a Semantic too, so it does the same once, up front.
load_onnxruntime_first()

FIXTURE = Path(__file__).parent / "fixtures" / "vault"
# An index someone built by running mdmem on the fixture itself is not part of it.
FIXTURE_IGNORE = shutil.ignore_patterns(".mdmem")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
}


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile mdmem's bytecode once: the suite starts hundreds of ``python -m mdmem`` processes (the
    CLI, git hooks, background jobs), and with PYTHONDONTWRITEBYTECODE set (or a read-only clone) each
    compiled every module it imported again (a clean clone's suite: 3 m 50 s, compiled 2 m 37 s)."""
    import compileall

    import mdmem

    compileall.compile_dir(Path(mdmem.__file__).parent, quiet=1)


@pytest.fixture(autouse=True, scope="session")
def _isolated_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The settings of ``_isolated_env`` for the vaults a module or the session builds once (their
    fixtures run before any test's own): without them such a vault's commits started background jobs
    that still wrote into it while tests copied it."""
    mp = pytest.MonkeyPatch()
    _isolate(mp, tmp_path_factory.mktemp("home"))
    yield
    mp.undo()


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _isolate(monkeypatch, tmp_path / "home")


def _isolate(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """No vault, config or git repository from the machine running the tests; ``home`` as HOME."""
    for key in (
        "MDMEM_VAULT",
        "MDMEM_CONFIG",
        "XDG_CONFIG_HOME",
        "GIT_DIR",
        "GIT_INDEX_FILE",
        "GIT_WORK_TREE",
        "MDMEM_SKIP_HOOK",
    ):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    # Writes do not embed by themselves here: most tests run the real model's settings, and loading it
    # in a job after every commit would cost seconds each. Tests of that turn it on (test_keepup.py).
    monkeypatch.setenv("MDMEM_AUTO_EMBED", "0")
    # Session-start hooks start no warm server by themselves (one process per test vault); the test of
    # that turns it on.
    monkeypatch.setenv("MDMEM_AUTOSERVE", "0")
    monkeypatch.setenv("MDMEM_RECOUNT", "0")  # no background review after each stop hook (tests that want it say so)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    """A plain folder holding a copy of the fixture notes (not a git repository)."""
    dest = tmp_path / "vault"
    shutil.copytree(FIXTURE, dest, ignore=FIXTURE_IGNORE)
    return dest


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env={**os.environ, **env} if env else None
    ).stdout


def clone(origin: Path, dest: Path, vault: str = "") -> Path:
    """A clone of ``origin`` at ``dest`` with ``mdmem init`` run in it (or in its ``vault`` folder): the
    notes adopted, the hooks installed, this clone's index built."""
    git(dest.parent, "clone", "-q", str(origin), str(dest))
    mdmem_in_process("init", str(dest / vault if vault else dest))
    return dest


def mdmem(
    *args: str, cwd: Path | None = None, input: str | None = None, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a subprocess (as a user or a git hook would).

    For tests of the process itself: its exit status and stderr, a fast path in ``mdmem/__main__.py``,
    several processes at once, a kill. Anything else uses ``mdmem_in_process``."""
    proc = subprocess.run(
        [sys.executable, "-m", "mdmem", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"mdmem {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def mdmem_in_process(
    *args: str,
    cwd: Path | None = None,
    input: str | None = None,
    check: bool = True,
    env: Mapping[str, str | None] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the CLI in this process (click's CliRunner on ``mdmem.cli.cli``), answering as ``mdmem`` would.

    Same arguments and result as ``mdmem``: ``env`` is set (None unsets) and ``cwd`` entered for the call
    only, and ``input`` is stdin (empty when None). Output written to file descriptors 1 and 2 (git's,
    a C library's) is captured too where click can (8.5+). An exception the CLI does not handle gives
    exit status 1 and its traceback on stderr, as the real process prints it, so "no Traceback" checks
    keep their meaning. ``timeout`` raises ``subprocess.TimeoutExpired`` as ``subprocess.run`` does.
    """
    from click.testing import CliRunner

    from mdmem.cli import cli as mdmem_cli

    try:
        runner = CliRunner(capture="fd")
    except TypeError:  # click before 8.5: Python-level streams only
        runner = CliRunner()
    with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext(), _deadline(args, timeout):
        result = runner.invoke(mdmem_cli, list(args), input=input, env=env, prog_name="mdmem")
    code, stderr = result.exit_code, result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        assert result.exc_info is not None
        code, stderr = 1, stderr + "".join(traceback.format_exception(*result.exc_info))
    proc = subprocess.CompletedProcess(["mdmem", *args], code, result.stdout, stderr)
    if check and proc.returncode != 0:
        raise AssertionError(f"mdmem {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


class _TimedOut(BaseException):
    """Raised by SIGALRM inside a command; a BaseException so no ``except Exception`` in mdmem swallows it."""


@contextlib.contextmanager
def _deadline(args: tuple[str, ...], timeout: float | None) -> Iterator[None]:
    """A hang is a failure, not a stuck suite (interrupts Python code; not a call stuck in C)."""
    if timeout is None:
        yield
        return

    def alarm(signum: int, frame: object) -> None:
        raise _TimedOut

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    except _TimedOut:
        raise subprocess.TimeoutExpired(["mdmem", *args], timeout) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="session")
def _git_vault_templates(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[tuple[str, str], ...], Path]:
    """``git_vault`` built once per worker and setting (``init``'s reindex, doctor and the post-commit
    reindex cost ~2 s a test): each a folder holding the ``vault`` and the ``index.key`` its index is
    sealed with. See ``git_vault``."""
    return {}


def _settings() -> tuple[tuple[str, str], ...]:
    """The environment a built vault may depend on: every MDMEM_* variable but the key's home."""
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("MDMEM_") and k != "MDMEM_HOME"))


def _listing(root: Path) -> set[tuple[str, int, int]]:
    """Each file's path, size and mtime (a copy keeps the mtimes): what tells a folder changed."""
    out = set()
    for p in root.rglob("*"):
        rel = p.relative_to(root)
        if rel.parts[0] != ".mdmem" and p.is_file():
            st = p.stat()
            out.add((rel.as_posix(), st.st_size, st.st_mtime_ns))
    return out


def _build_git_vault(vault: Path) -> None:
    git(vault, "init", "-q", "-b", "main")
    mdmem_in_process("init", str(vault))
    git(vault, "add", "-A")
    # This commit's post-commit hook runs in process: the same run_git_hook that the hook script reaches
    # through "python -m mdmem", one Python start-up less per test. Hooks as git runs them are tested
    # on the tests' own commits (test_git, test_concurrency, ...).
    git(vault, "commit", "-qm", "fixture notes", env={"MDMEM_SKIP_HOOK": "1"})
    mdmem_in_process("--vault", str(vault), "reindex", "--git-hook", "post-commit")


@pytest.fixture
def git_vault(
    vault_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
    _git_vault_templates: dict[tuple[tuple[str, str], ...], Path],
) -> Path:
    """The fixture notes in a real git repository, committed, with mdmem's hooks installed.

    Built once per worker under this test's MDMEM_* settings, then copied (mtimes kept) to
    ``vault_dir`` with its sealing key copied into this test's key home: the index is this test's own
    and fresh, as ``init`` left it. Nothing in a built vault names its folder (``.git`` and ``.mdmem``
    hold no absolute path; tests/test_fixtures.py checks), so the copy is that vault at another path."""
    if _listing(vault_dir) != _listing(FIXTURE):  # a fixture wrote to the folder first: build it in place
        _build_git_vault(vault_dir)
        return vault_dir
    settings = _settings()
    if settings not in _git_vault_templates:
        base = tmp_path_factory.mktemp("git-vault-template")
        shutil.copytree(FIXTURE, base / "vault", ignore=FIXTURE_IGNORE)
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("MDMEM_HOME", str(base / "home"))
            _build_git_vault(base / "vault")
            shutil.copy2(served.key_path(), base / "index.key")
        _git_vault_templates[settings] = base
    base = _git_vault_templates[settings]
    shutil.rmtree(vault_dir)
    shutil.copytree(base / "vault", vault_dir, symlinks=True)
    key = Path(served.key_path())
    key.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    shutil.copy2(base / "index.key", key)
    return vault_dir


def write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    """Write each vault-relative path's text (UTF-8) or bytes under ``root``, making folders."""
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data, encoding="utf-8")


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file outside .git and .mdmem, with its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not {".git", ".mdmem"} & set(p.relative_to(root).parts)
    }


def cli_commands(family: str | None = None) -> list[list[str]]:
    """Every command of the CLI as its words (``["graph", "export"]``), walked from ``mdmem.cli.cli``.

    ``family``: only commands defined in that module of the CLI (``"graph"``: ``mdmem.cli.graph``), so a
    family's help test follows the CLI instead of a list kept by hand."""
    import click

    from mdmem.cli import cli

    found: list[list[str]] = []
    ctx = click.Context(cli)

    def walk(group: click.Group, prefix: list[str]) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            assert command is not None, f"{' '.join([*prefix, name])} is listed but cannot be loaded"
            words = [*prefix, name]
            module = getattr(command.callback, "__module__", None) or ""
            if family is None or module == f"mdmem.cli.{family}":
                found.append(words)
            if isinstance(command, click.Group):
                walk(command, words)

    walk(cli, [])
    assert found, f"no command of the CLI is defined in a module named {family!r}"
    return found


def hold_search(monkeypatch: pytest.MonkeyPatch, held: str) -> tuple[threading.Event, threading.Event]:
    """Make ``Vault.search`` of the text ``held`` stop at a hook point: (entered, set when a search
    reached it; release, set it to let that search go on). Other searches pass."""
    from mdmem.api.vault import Vault

    entered, release = threading.Event(), threading.Event()
    search = Vault.search

    def held_search(self: Vault, text: str, *args: object, **kwargs: object) -> object:
        if text == held:
            entered.set()
            release.wait(60)
        return search(self, text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Vault, "search", held_search)
    return entered, release
