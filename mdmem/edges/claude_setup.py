"""``mdmem setup claude-code``: merge mdmem's hooks and MCP server into Claude Code's settings files.

Where Claude Code reads them (code.claude.com/docs, "Hooks" and "MCP" → scopes):
- hooks: ``~/.claude/settings.json`` (user) or ``PROJECT/.claude/settings.json`` (project), under
  ``hooks`` → event → ``[{matcher?, hooks: [{type: "command", command, timeout}]}]``;
- MCP servers: ``~/.claude.json`` → ``mcpServers`` (user scope, what ``claude mcp add -s user`` writes) or
  ``PROJECT/.mcp.json`` → ``mcpServers`` (project scope, shared through the repository).

Merging never clobbers: other keys, other hooks and other servers stay as they are; an mdmem entry
that is already there is updated in place (a new vault path or interpreter), not duplicated. A file
that is not valid JSON is left untouched and reported. The commands name ``sys.executable`` and the
vault's absolute path, as the git hooks do, so they run the same mdmem from any working directory
(the hooks name its ``__main__.py``, run without ``site``: ``hook_command``).
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core.errors import MdmemError
from ..results.reports import FileChange, SetupReport

HOOKS = (  # (Claude Code event, mdmem hook, timeout in seconds: Claude Code's hard cap, above our own budget)
    ("SessionStart", "session-start", 15),
    ("UserPromptSubmit", "prompt", 10),
    ("Stop", "stop", 30),
    ("PreCompact", "pre-compact", 30),  # manual and auto compactions alike (no matcher)
)
SERVER_NAME = "mdmem"


def hook_command(python: str, vault: Path, hook: str) -> str:
    """The command Claude Code runs for ``hook``: this mdmem's ``__main__.py`` as a file, without ``site``
    (``-S``), so that a prompt the warm server answers loads almost nothing (``edges/hook_client``);
    every other path loads ``site`` itself (``mdmem/__main__.py``)."""
    main = Path(__file__).resolve().parent.parent / "__main__.py"
    return f"{shlex.quote(python)} -S {shlex.quote(str(main))} --vault {shlex.quote(str(vault))} hook {hook}"


def _is_ours(command: Any, hook: str) -> bool:
    return isinstance(command, str) and "mdmem" in command and f" hook {hook}" in command


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise MdmemError(
            f"{path} is not valid JSON ({exc}); fix or move it, then run setup again. Nothing was changed."
        ) from None
    if not isinstance(data, dict):
        raise MdmemError(f"{path} does not hold a JSON object; nothing was changed.")
    return data


def _save(path: Path, data: dict[str, Any]) -> None:
    """Atomically, keeping the previous version beside it as ``NAME.mdmem-backup``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        backup = path.with_name(path.name + ".mdmem-backup")
        backup.write_bytes(path.read_bytes())
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def merge_hooks(
    settings: dict[str, Any], python: str, vault: Path, change: FileChange, *, remove: bool = False
) -> None:
    """Add, update or (``remove``) mdmem's hook entries in a settings dict, in place."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise MdmemError(f'{change.path}: "hooks" is not an object; nothing was changed.')
    for event, hook, timeout in HOOKS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise MdmemError(f"{change.path}: hooks.{event} is not a list; nothing was changed.")
        wanted = {"type": "command", "command": hook_command(python, vault, hook), "timeout": timeout}
        found = False
        for group in list(groups):
            entries = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(entries, list):
                continue
            mine = [e for e in entries if isinstance(e, dict) and _is_ours(e.get("command"), hook)]
            for entry in mine:
                if remove:
                    entries.remove(entry)
                    change.removed.append(event)
                elif found:  # a second copy of ours: drop it rather than run the hook twice
                    entries.remove(entry)
                    change.updated.append(event)
                else:
                    found = True
                    if entry != wanted:
                        entries[entries.index(entry)] = wanted
                        change.updated.append(event)
            if mine and not entries:
                groups.remove(group)
        if not remove and not found:
            groups.append({"hooks": [wanted]})
            change.added.append(event)
        if not groups:
            del hooks[event]
    if not hooks:
        del settings["hooks"]


def merge_server(config: dict[str, Any], python: str, vault: Path, change: FileChange, *, remove: bool = False) -> None:
    """Add, update or (``remove``) the mdmem stdio MCP server in an ``mcpServers`` dict, in place."""
    servers = config.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise MdmemError(f'{change.path}: "mcpServers" is not an object; nothing was changed.')
    wanted = {"type": "stdio", "command": python, "args": ["-m", "mdmem", "--vault", str(vault), "mcp"], "env": {}}
    current = servers.get(SERVER_NAME)
    ours = isinstance(current, dict) and "mdmem" in json.dumps(current.get("args", [])) + str(current.get("command"))
    if current is not None and not ours:
        change.skipped.append(f"an MCP server named {SERVER_NAME!r} that is not mdmem's is already there")
    elif remove:
        if current is not None:
            del servers[SERVER_NAME]
            change.removed.append(f"mcpServers.{SERVER_NAME}")
    elif current is None:
        servers[SERVER_NAME] = wanted
        change.added.append(f"mcpServers.{SERVER_NAME}")
    elif current != wanted:
        servers[SERVER_NAME] = wanted
        change.updated.append(f"mcpServers.{SERVER_NAME}")
    if not servers:
        del config["mcpServers"]


def setup_claude_code(
    vault: Path,
    *,
    project: Path | None = None,
    home: Path | None = None,
    python: str | None = None,
    remove: bool = False,
    dry_run: bool = False,
) -> SetupReport:
    """Merge the hooks and the MCP server into the user's (or ``project``'s) Claude Code settings."""
    python = python or sys.executable
    home = home or Path.home()
    if project is not None:
        targets = [(project / ".claude" / "settings.json", merge_hooks), (project / ".mcp.json", merge_server)]
    else:
        targets = [(home / ".claude" / "settings.json", merge_hooks), (home / ".claude.json", merge_server)]
    loaded = [(path, _load(path), merge) for path, merge in targets]  # all files readable before any write
    changes = []
    for path, data, merge in loaded:
        change = FileChange(str(path))  # the merge fills its lists
        merge(data, python, vault, change, remove=remove)
        if change.changed and not dry_run and (data or path.exists()):
            _save(path, data)
            change = replace(change, written=True)
        changes.append(change)
    return SetupReport(str(vault), dry_run, changes)
