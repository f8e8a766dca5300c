"""Agent commands: hook (Claude Code hooks), mcp (the MCP server), setup claude-code, import.
The MCP SDK and the index load inside the commands, so ``mdmem --help`` stays fast."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .options import State, handle_errors, output, pass_state, progress_bar, show, vaults_options

# -- hook ------------------------------------------------------------------------------------------


@click.group()
def hook() -> None:
    """Claude Code hooks: read the event's JSON on stdin, answer with JSON on stdout.

    \b
    A hook never fails the agent: on any problem it prints nothing on stdout, one line on
    stderr and exits 0. "mdmem setup claude-code" installs them.
    """


@hook.command("prompt")
@click.option(
    "--budget",
    default=600,
    show_default=True,
    type=click.IntRange(50, 20_000),
    help="Most tokens of memory to add to the prompt.",
)
@click.option(
    "--time-budget",
    "time_budget",
    default=2000,
    show_default=True,
    type=click.IntRange(1, 60_000),
    metavar="MS",
    help="Answer within this many milliseconds or add nothing.",
)
@pass_state
def hook_prompt(state: State, budget: int, time_budget: int) -> None:
    """UserPromptSubmit: the memories that matter for the prompt (pinned first, then relevant).

    \b
    Uses a running "mdmem serve" (warm model, hybrid); without one, hybrid when the model loads fast
    here (once prepared), else BM25 only. Skips trivial
    prompts (acknowledgements, slash commands).
    """
    from ..edges.agent_hooks import run_hook

    run_hook("prompt", state.vault_path, sys.stdin.read(), budget=budget, time_budget_ms=time_budget)


@hook.command("session-start")
@click.option(
    "--budget",
    default=900,
    show_default=True,
    type=click.IntRange(50, 20_000),
    help="Most tokens of memory to add at session start.",
)
@pass_state
def hook_session_start(state: State, budget: int) -> None:
    """SessionStart: pinned notes and the latest handoff of this project (after a compaction: this session's)."""
    from ..edges.agent_hooks import run_hook

    run_hook("session-start", state.vault_path, sys.stdin.read(), budget=budget)


def _capture(event: str, state: State, commit: bool | None, dry_run: bool) -> None:
    """stop and pre-compact: the session's handoff note, or (``dry_run``) its text on stdout."""
    from ..edges.agent_hooks import capture_handoff, find_vault, read_payload, run_hook

    if not dry_run:
        run_hook(event, state.vault_path, sys.stdin.read(), commit=commit)
        return
    payload = read_payload(sys.stdin.read())
    root = find_vault(state.vault_path, payload) or Path.cwd()
    info = capture_handoff(root, payload, dry_run=True, event=event)
    if info is None:
        click.echo("Nothing to hand off: the transcript has no prompt.", err=True)
    else:
        click.echo(f"# {info['title']}\n\n{info['body']}", nl=False)


_commit_handoff = click.option(
    "--commit/--no-commit", default=None, help="Commit the handoff note [default: mdmem.toml [git] commit, else yes]."
)
_dry_run_handoff = click.option("--dry-run", is_flag=True, help="Print the handoff note instead of writing it.")


@hook.command("stop")
@_commit_handoff
@_dry_run_handoff
@pass_state
def hook_stop(state: State, commit: bool | None, dry_run: bool) -> None:
    """Stop: write this session's handoff note from its transcript (asked, decided, learned, open, files).

    \b
    One note per session, rewritten as the session goes on; secrets are redacted before
    anything is written. No LLM is involved.
    """
    _capture("stop", state, commit, dry_run)


@hook.command("pre-compact")
@_commit_handoff
@_dry_run_handoff
@pass_state
def hook_pre_compact(state: State, commit: bool | None, dry_run: bool) -> None:
    """PreCompact: save what the session decided, learned and left open before Claude Code compacts it.

    \b
    Writes the same handoff note as stop (one per session; firing twice changes nothing), so a
    later stop updates it. After the compaction, "hook session-start" (source "compact") puts
    it back in the model's context. Redacted, rule-based, no LLM.
    """
    _capture("pre-compact", state, commit, dry_run)


# -- mcp -------------------------------------------------------------------------------------------


@click.command()
@click.option(
    "--http", "use_http", is_flag=True, help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio."
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind with --http; anything but loopback needs --token.",
)
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535), help="Port for --http.")
@click.option(
    "--token",
    envvar="MDMEM_MCP_TOKEN",
    metavar="TOKEN",
    help="Bearer token HTTP clients must send [env MDMEM_MCP_TOKEN]; required off loopback.",
)
@click.option("--no-warm", is_flag=True, help="Do not reindex and load the model at start.")
@vaults_options
@pass_state
@handle_errors
def mcp(
    state: State,
    use_http: bool,
    host: str,
    port: int,
    token: str | None,
    no_warm: bool,
    vaults: str | None,
    all_vaults: bool,
) -> None:
    """Serve the vault to agents over MCP: recall, search, get, add, correct, pin, … as tools.

    \b
    stdio (default) is what Claude Code and most clients start themselves:
      claude mcp add mdmem -- mdmem --vault ~/notes mcp
    Nothing but protocol is written to stdout; diagnostics go to stderr.

    \b
    With --vaults a,b (or --all-vaults) it serves several: every tool takes an optional
    "vault"; recall, query, search, vsearch and context answer from all of them, merged
    (ids NAME:id); other tools use the --vault one if it is in the set, else the first.
    """
    import contextlib

    from ..core.errors import VaultNotFound

    with contextlib.redirect_stdout(sys.stderr):  # nothing may reach the stdio wire before the SDK owns it
        from ..edges.mcp_server import Served, check_bind, run_http, run_stdio

        if use_http:
            check_bind(host, token)
        group = state.vault_set(vaults, all_vaults)
        if group is None:
            served = Served(state.vault)
        else:
            from ..render import skipped_line

            for s in group.skipped:
                click.echo(skipped_line(s), err=True)
            try:
                current = state.vault if state.vault_path else None
            except VaultNotFound:
                current = None
            group.share_models()  # one model for the set, before the warm-up loads it
            served = Served(group.primary(current).vault, group)
    if use_http:
        run_http(served, host=host, port=port, token=token, warm=not no_warm)
    else:
        run_stdio(served, warm=not no_warm)


# -- setup -----------------------------------------------------------------------------------------


@click.group()
def setup() -> None:
    """Connect an agent to this vault (hooks and MCP server in its settings)."""


@setup.command("claude-code")
@click.option(
    "--project",
    is_flag=True,
    help="Write the project's .claude/settings.json and .mcp.json instead of your user settings.",
)
@click.option(
    "--dir",
    "project_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="The project folder for --project.",
)
@click.option("--remove", is_flag=True, help="Take mdmem's hooks and MCP server out again.")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@output
@pass_state
def setup_claude_code(
    state: State, project: bool, project_dir: Path, remove: bool, dry_run: bool, as_json: bool
) -> None:
    """Merge mdmem's hooks (session-start, prompt, stop, pre-compact) and MCP server into Claude Code's settings.

    \b
    User scope (default): ~/.claude/settings.json (hooks) and ~/.claude.json (MCP server).
    --project:            PROJECT/.claude/settings.json and PROJECT/.mcp.json.
    Existing settings, hooks and servers are kept; mdmem's own entries are updated in place.
    The commands name this Python and the vault's absolute path.
    """
    from ..edges.claude_setup import setup_claude_code as run_setup

    report = run_setup(
        state.vault.root, project=project_dir.resolve() if project else None, remove=remove, dry_run=dry_run
    )
    show(report, as_json, remove=remove)


# -- import ----------------------------------------------------------------------------------------


@click.command("import")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--type",
    "default_type",
    default="note",
    show_default=True,
    help="Type of MEMORY.md entries whose heading does not say (Decisions → decision, …).",
)
@click.option("--dry-run", is_flag=True, help="Say what would be imported; write nothing.")
@click.option("--commit/--no-commit", default=None, help="Commit the new notes [default: mdmem.toml, else yes].")
@click.option(
    "--git/--no-git",
    "use_git",
    default=None,
    help="Obsidian vault: git init it and install the hooks [default: only if it is a repository].",
)
@output
@pass_state
def import_(
    state: State, path: Path, default_type: str, dry_run: bool, commit: bool | None, use_git: bool | None, as_json: bool
) -> None:
    """Import memories: MEMORY.md, a memory/ folder, a JSONL file, a PDF or EPUB book, a ClawMem store,
    a Qmemory export, or an Obsidian vault (adopted in place).

    \b
    MEMORY.md: one note per list item or paragraph; "## Decisions" → type decision; dates kept.
    memory/*.md: one note per (dated) file.      JSONL: {"content", "type", "salience", "tags", "created"}.
    ClawMem (its SQLite file, e.g. ~/.cache/clawmem/index.sqlite) and Qmemory (surreal export → .surql):
    one note per memory with its pins, snoozes, validity and status, relations as typed links.
    What no note can keep is named ("not kept").
    PDF, EPUB: one note per chapter (outline, table of contents), an index note, the file kept under
    attachments/books/; a new version of the file updates its notes. Scans need OCR first.
    Obsidian vault: PATH itself becomes a vault (no file rewritten; --vault is not used).
    Running an import again creates no duplicates. Secrets are redacted; source files are not changed.
    """
    from ..core.schema import TYPES
    from ..edges.importer import detect, import_path

    if default_type not in TYPES:
        raise click.BadParameter(f"use one of: {', '.join(sorted(TYPES))}", param_hint="--type")
    kind = detect(path.expanduser().resolve())
    vault = None if kind == "obsidian" else state.vault
    label = "Reading pages" if kind == "pdf" else "Reading chapters"
    progress = progress_bar(label) if kind in ("pdf", "epub") and not as_json and sys.stderr.isatty() else None
    report = import_path(
        vault, path, dry_run=dry_run, commit=commit, use_git=use_git, default_type=default_type, progress=progress
    )
    if as_json:
        for err in report.errors:  # the text output says them itself
            click.echo(f"error: {err}", err=True)
    show(report, as_json)
