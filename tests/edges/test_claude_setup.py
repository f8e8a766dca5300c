"""`mdmem setup claude-code`: merged into Claude Code's settings files, never clobbering them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..conftest import mdmem_in_process

OTHER_HOOK = {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/check-bash.sh"}]}
OTHER_PROMPT_HOOK = {"hooks": [{"type": "command", "command": "echo today is $(date +%F)"}]}


def home() -> Path:
    return Path(os.environ["HOME"])


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def ours(settings: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [h for g in settings["hooks"].get(event, []) for h in g["hooks"] if "mdmem" in h["command"]]


def test_user_setup_merges_hooks_and_server_without_clobbering(git_vault: Path) -> None:
    settings_path = home() / ".claude" / "settings.json"
    settings_path.parent.mkdir(parents=True)
    settings_path.write_text(
        json.dumps(
            {
                "model": "opus",
                "permissions": {"allow": ["Bash(ls:*)"]},
                "hooks": {"PreToolUse": [OTHER_HOOK], "UserPromptSubmit": [OTHER_PROMPT_HOOK]},
            }
        )
    )
    claude_json = home() / ".claude.json"
    claude_json.write_text(
        json.dumps(
            {
                "numStartups": 12,
                "mcpServers": {"github": {"command": "gh-mcp"}},
                "projects": {"/x": {"allowedTools": []}},
            }
        )
    )

    out = mdmem_in_process("--vault", str(git_vault), "setup", "claude-code").stdout
    assert "added SessionStart, UserPromptSubmit, Stop, PreCompact" in out and "added mcpServers.mdmem" in out
    s = load(settings_path)
    assert s["model"] == "opus" and s["permissions"] == {"allow": ["Bash(ls:*)"]}
    assert s["hooks"]["PreToolUse"] == [OTHER_HOOK] and OTHER_PROMPT_HOOK in s["hooks"]["UserPromptSubmit"]
    for event, name in (
        ("SessionStart", "session-start"),
        ("UserPromptSubmit", "prompt"),
        ("Stop", "stop"),
        ("PreCompact", "pre-compact"),
    ):
        (entry,) = ours(s, event)
        assert entry["type"] == "command" and entry["command"].endswith(f"hook {name}")
        assert str(git_vault) in entry["command"] and sys.executable in entry["command"]
    c = load(claude_json)
    assert c["numStartups"] == 12 and c["projects"] == {"/x": {"allowedTools": []}}
    assert c["mcpServers"]["github"] == {"command": "gh-mcp"}
    assert c["mcpServers"]["mdmem"] == {
        "type": "stdio",
        "command": sys.executable,
        "args": ["-m", "mdmem", "--vault", str(git_vault), "mcp"],
        "env": {},
    }
    assert load(settings_path.with_name("settings.json.mdmem-backup"))["model"] == "opus"

    before = (settings_path.read_text(), claude_json.read_text())
    again = json.loads(mdmem_in_process("--vault", str(git_vault), "setup", "claude-code", "--json").stdout)
    assert all(not f["added"] and not f["updated"] and not f["written"] for f in again["files"])
    assert (settings_path.read_text(), claude_json.read_text()) == before  # idempotent, no duplicates

    s = load(settings_path)  # set up before PreCompact existed: setup adds it and leaves the rest
    del s["hooks"]["PreCompact"]
    settings_path.write_text(json.dumps(s))
    again = json.loads(mdmem_in_process("--vault", str(git_vault), "setup", "claude-code", "--json").stdout)
    assert again["files"][0]["added"] == ["PreCompact"] and not again["files"][0]["updated"]
    s = load(settings_path)
    assert [len(ours(s, e)) for e in ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact")] == [1, 1, 1, 1]
    assert s["model"] == "opus" and s["hooks"]["PreToolUse"] == [OTHER_HOOK]


def test_the_installed_hook_command_runs(git_vault: Path) -> None:
    mdmem_in_process("--vault", str(git_vault), "setup", "claude-code")
    (entry,) = ours(load(home() / ".claude" / "settings.json"), "UserPromptSubmit")
    payload = {
        "session_id": "s",
        "cwd": "/",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "when do we ship the release train?",
    }
    proc = subprocess.run(
        entry["command"], shell=True, input=json.dumps(payload), capture_output=True, text=True, cwd="/"
    )
    assert proc.returncode == 0, proc.stderr
    assert "Release train schedule" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def test_a_moved_vault_updates_the_entries_in_place(git_vault: Path, tmp_path: Path) -> None:
    mdmem_in_process("--vault", str(git_vault), "setup", "claude-code")
    other = tmp_path / "other"
    mdmem_in_process("init", str(other), "--no-git")
    out = mdmem_in_process("--vault", str(other), "setup", "claude-code").stdout
    assert "updated" in out
    s = load(home() / ".claude" / "settings.json")
    for event in ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact"):
        (entry,) = ours(s, event)
        assert str(other) in entry["command"]
    assert str(other) in load(home() / ".claude.json")["mcpServers"]["mdmem"]["args"]


def test_project_setup_writes_claude_settings_and_mcp_json(git_vault: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "db-mcp", "args": []}}}))
    mdmem_in_process("--vault", str(git_vault), "setup", "claude-code", "--project", "--dir", str(project))
    assert len(ours(load(project / ".claude" / "settings.json"), "UserPromptSubmit")) == 1
    servers = load(project / ".mcp.json")["mcpServers"]
    assert set(servers) == {"db", "mdmem"}
    assert not (home() / ".claude" / "settings.json").exists() and not (home() / ".claude.json").exists()

    mdmem_in_process("--vault", str(git_vault), "setup", "claude-code", "--project", "--dir", str(project), "--remove")
    assert "hooks" not in load(project / ".claude" / "settings.json")
    assert load(project / ".mcp.json") == {"mcpServers": {"db": {"command": "db-mcp", "args": []}}}


def test_broken_settings_are_reported_and_left_alone(git_vault: Path) -> None:
    settings_path = home() / ".claude" / "settings.json"
    settings_path.parent.mkdir(parents=True)
    settings_path.write_text('{"hooks": {,}')
    proc = mdmem_in_process("--vault", str(git_vault), "setup", "claude-code", check=False)
    assert proc.returncode == 1 and "not valid JSON" in proc.stderr and "Nothing was changed" in proc.stderr
    assert settings_path.read_text() == '{"hooks": {,}'
    assert not (home() / ".claude.json").exists()  # all files are read before any is written


def test_someone_elses_server_named_mdmem_is_kept(git_vault: Path) -> None:
    (home()).mkdir(parents=True, exist_ok=True)
    (home() / ".claude.json").write_text(json.dumps({"mcpServers": {"mdmem": {"command": "/opt/other/server"}}}))
    out = mdmem_in_process("--vault", str(git_vault), "setup", "claude-code").stdout
    assert "skipped" in out
    assert load(home() / ".claude.json")["mcpServers"]["mdmem"] == {"command": "/opt/other/server"}


def test_dry_run_writes_nothing(git_vault: Path) -> None:
    out = mdmem_in_process("--vault", str(git_vault), "setup", "claude-code", "--dry-run").stdout
    assert "not written" in out
    assert not (home() / ".claude").exists() and not (home() / ".claude.json").exists()
