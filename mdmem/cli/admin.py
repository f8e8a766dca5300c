"""Commands that keep the vault and its index, written by hand: reindex, hooks, serve (status and doctor
are rows of the command table, ``edges.commands``)."""

from __future__ import annotations

import sys

import click

from ..core.errors import MdmemError
from .options import State, handle_errors, output, pass_state, progress_bar, show

SERVE_START_TIMEOUT = 180.0  # seconds `serve --detach` waits for the server to be warm


@click.command()
@click.option("--full", is_flag=True, help="Rebuild the index from scratch instead of only what changed.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing unless something is wrong.")
@click.option("--git-hook", metavar="NAME", hidden=True, help="Run from a git hook: never fail, never block.")
@output
@pass_state
def reindex(state: State, full: bool, quiet: bool, git_hook: str | None, as_json: bool) -> None:
    """Update the index from the files: new, changed, moved and deleted notes, committed or not.

    Changed chunks then get their vectors: at once when the model is cheap to run here, else from one
    background job (log: .mdmem/embed.log); unchanged ones come back from the embedding cache, also
    after --full. [embed] auto = false in mdmem.toml (or MDMEM_AUTO_EMBED=0) leaves them to "mdmem embed"."""
    if git_hook:
        from ..edges.githook import run_git_hook

        run_git_hook(state.vault_path, git_hook)
        return
    progress = progress_bar() if not quiet and not as_json and sys.stderr.isatty() else None
    show(state.vault.reindex(full=full, progress=progress), as_json, quiet=quiet)


@click.command()
@click.option(
    "--idle-timeout",
    default=900.0,
    show_default=True,
    type=click.FloatRange(1),
    help="Exit after this many seconds without a request.",
)
@click.option("--port", default=0, type=click.IntRange(0, 65535), help="Port on 127.0.0.1 (default: any free one).")
@click.option("--detach", is_flag=True, help="Run in the background and return once it is warm (model loaded).")
@click.option("--stop", is_flag=True, help="Stop the vault's running server.")
@pass_state
@handle_errors
def serve(state: State, idle_timeout: float, port: int, detach: bool, stop: bool) -> None:
    """Keep the index and model warm for this vault on 127.0.0.1; query/vsearch use it automatically."""
    import signal
    import subprocess
    import time

    from ..adapters.plain import open_plain
    from ..edges.serve import Server, read_info, stop_server
    from ..index.state import STATE_DIR

    if stop:  # from the root alone: a server whose vault's mdmem.toml is refused by now is still stopped
        root = state.vault_root
        info = read_info(root)
        click.echo(stop_server(root, info) if info is not None else "No server is running for this vault.")
        return
    vault = state.vault
    running = read_info(vault.root)
    if running is not None:
        click.echo(f"Already serving on 127.0.0.1:{running['port']} (pid {running['pid']}).")
        return
    if detach:
        log = vault.root / STATE_DIR / "serve.log"
        log.parent.mkdir(exist_ok=True)
        with open(open_plain(log, log=True), "ab") as out:  # never through a link someone committed
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "mdmem",
                    "--vault",
                    str(vault.root),
                    "serve",
                    "--idle-timeout",
                    str(idle_timeout),
                    "--port",
                    str(port),
                ],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,
            )
        # The server publishes its address only once warm (model loaded, index open), so this waits
        # for that: longer the first time on a machine (the model's ONNX export).
        started, said = time.monotonic(), False
        while time.monotonic() - started < SERVE_START_TIMEOUT:
            info = read_info(vault.root)
            if info is not None and info["pid"] == proc.pid:
                click.echo(
                    f"Serving {vault.root} on 127.0.0.1:{info['port']} (pid {proc.pid}), warm after "
                    f"{time.monotonic() - started:.1f} s; exits after {idle_timeout:.0f}s idle. Log: {log}"
                )
                return
            if proc.poll() is not None:
                raise MdmemError(f"The server exited at start (code {proc.returncode}); see {log}.")
            if not said and time.monotonic() - started > 2.0:
                click.echo(
                    "Loading the index and the embedding model (the first time on this machine it is "
                    "exported, up to a minute) …",
                    err=True,
                )
                said = True
            time.sleep(0.05)
        raise MdmemError(
            f"The server was not ready within {SERVE_START_TIMEOUT:.0f} s (pid {proc.pid} keeps "
            f"starting; queries work without it meanwhile); see {log}."
        )
    server = Server(vault.root, idle_timeout=idle_timeout, port=port)
    signal.signal(signal.SIGTERM, lambda *a: server.stop())
    click.echo(f"Serving {vault.root} on 127.0.0.1 (Ctrl-C to stop; exits after {idle_timeout:.0f}s idle).", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


# -- hooks ---------------------------------------------------------------------------------------


@click.group()
def hooks() -> None:
    """Install or remove the git hooks that keep the index fresh."""


@hooks.command("install")
@pass_state
@handle_errors
def hooks_install(state: State) -> None:
    """Add post-commit, post-merge, post-checkout and post-rewrite hooks (existing ones keep running).

    A commit is indexed before git returns; a checkout, merge, pull or rebase that changes more than 150
    notes is indexed by one background job (reads say so until it is done; log: .mdmem/catchup.log)."""
    from ..adapters.git import install_hooks

    for line in install_hooks(state.vault.root):
        click.echo(line)


@hooks.command("uninstall")
@pass_state
@handle_errors
def hooks_uninstall(state: State) -> None:
    """Remove mdmem's hooks and restore the hooks they replaced."""
    from ..adapters.git import uninstall_hooks

    for line in uninstall_hooks(state.vault.root):
        click.echo(line)
