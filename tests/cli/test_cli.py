"""The command line as a user and an agent see it: help, errors, text and JSON output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mdmem.cli import cli

from ..conftest import cli_commands

COMMANDS = cli_commands()  # from the CLI itself: a new command cannot miss its help test


def run(*args: str, input: str | None = None, vault: Path | None = None):  # type: ignore[no-untyped-def]
    argv = (["--vault", str(vault)] if vault else []) + list(args)
    return CliRunner().invoke(cli, argv, input=input, catch_exceptions=False)


@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_every_command_has_help(cmd: list[str]) -> None:
    r = run(*cmd, "--help")
    assert r.exit_code == 0 and "Usage:" in r.output
    doc = r.output.split("\n\n")[1].strip()
    assert len(doc) > 20  # a real sentence, not an empty docstring


def test_help_is_cheap_no_index_libraries_imported() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from mdmem.cli import cli\n"
        "try: cli(['--help'])\nexcept SystemExit: pass\n"
        "heavy = [m for m in ('whoosh', 'git', 'torch', 'transformers', 'usearch', 'markdown_it', 'sqlite3')"
        " if m in sys.modules]\nprint('HEAVY', heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("HEAVY []")


def test_a_command_loads_only_its_own_family(tmp_path: Path) -> None:
    """`mdmem search` (a row of the command table) imports no command family: not the graph, agent or
    eval commands (cold-start cost)."""
    import subprocess
    import sys

    code = (
        "import sys; from mdmem.cli import cli\n"
        f"try: cli(['--vault', {str(tmp_path / 'nope')!r}, 'search', 'x'])\nexcept SystemExit: pass\n"
        "print('FAMILIES', sorted(m for m in sys.modules if m.startswith('mdmem.cli.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "FAMILIES ['mdmem.cli.options']"


def test_an_unknown_command_is_named() -> None:
    r = CliRunner().invoke(cli, ["serch", "x"])
    assert r.exit_code == 2 and "No such command 'serch'" in r.output


def test_missing_vault_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["search", "x"])
    assert r.exit_code == 1
    assert "No mdmem vault" in r.output and "mdmem init" in r.output
    r = CliRunner().invoke(cli, ["--vault", str(tmp_path / "nope"), "status"])
    assert r.exit_code == 1 and "mdmem init" in r.output


def test_vault_found_from_env_and_by_walking_up(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (vault_dir / "mdmem.toml").write_text("")
    monkeypatch.chdir(vault_dir / "notes" / "projects")
    assert json.loads(run("search", "descaling", "--json").output)["count"] == 1
    monkeypatch.chdir(vault_dir.parent)
    monkeypatch.setenv("MDMEM_VAULT", str(vault_dir))
    assert json.loads(run("search", "descaling", "--json").output)["count"] == 1


def test_search_json_shape(vault_dir: Path) -> None:
    r = run("search", "hotwire", "--json", vault=vault_dir)
    data = json.loads(r.output)
    assert data["query"] == "hotwire" and data["count"] == 1
    hit = data["results"][0]
    assert {"id", "path", "title", "score", "snippet", "type", "tags"} <= set(hit)
    assert (hit["id"], hit["path"], hit["title"]) == ("m-fixture01", "notes/with-id.md", "Hotwire decision")
    assert "**Hotwire**" in hit["snippet"]


def test_search_text_output_and_no_match(vault_dir: Path) -> None:
    r = run("search", "descaling", vault=vault_dir)
    assert r.exit_code == 0 and "notes/empty-frontmatter.md" in r.output and "Coffee machine" in r.output
    r = run("search", "xylophone", vault=vault_dir)
    assert r.exit_code == 0 and "No notes match" in r.output
    r = run("search", "xylophone", "--json", vault=vault_dir)
    assert json.loads(r.output) == {"query": "xylophone", "count": 0, "results": []}


def test_search_filters_and_bad_date(vault_dir: Path) -> None:
    r = run("search", "duplicate", "--type", "idea", "--path", "notes/projects", "--json", vault=vault_dir)
    assert [h["path"] for h in json.loads(r.output)["results"]] == ["notes/projects/dup-a.md"]
    r = CliRunner().invoke(cli, ["--vault", str(vault_dir), "search", "x", "--since", "last week"])
    assert r.exit_code == 1 and "--since must be a date" in r.output
    r = CliRunner().invoke(cli, ["--vault", str(vault_dir), "search", "x", "-n", "0"])
    assert r.exit_code == 2


def test_add_from_stdin_then_get(vault_dir: Path) -> None:
    r = run(
        "add",
        "--title",
        "Prefer tabs",
        "--type",
        "preference",
        "--tag",
        "style",
        "--no-commit",
        "--json",
        input="Use tabs in Go code.\n",
        vault=vault_dir,
    )
    added = json.loads(r.output)
    assert added["path"] == "notes/prefer-tabs.md" and added["commit"] is None
    text = (vault_dir / added["path"]).read_text()
    assert text.startswith(f"---\nid: {added['id']}\ntitle: Prefer tabs\ntype: preference\n")
    assert text.endswith("---\nUse tabs in Go code.\n")
    got = json.loads(run("get", added["id"], "--json", vault=vault_dir).output)
    assert (got["title"], got["type"], got["tags"]) == ("Prefer tabs", "preference", ["style"])
    assert run("get", "prefer-tabs", vault=vault_dir).output == text


def test_add_rejects_bad_values(vault_dir: Path) -> None:
    r = CliRunner().invoke(
        cli, ["--vault", str(vault_dir), "add", "--title", "x", "--type", "bogus", "--body", "b", "--no-commit"]
    )
    assert r.exit_code == 1 and "Unknown type" in r.output
    r = CliRunner().invoke(
        cli, ["--vault", str(vault_dir), "add", "--title", "x", "--salience", "3", "--body", "b", "--no-commit"]
    )
    assert r.exit_code == 1 and "between 0 and 1" in r.output


def test_get_ambiguous_lists_candidates(vault_dir: Path) -> None:
    r = CliRunner().invoke(cli, ["--vault", str(vault_dir), "get", "Duplicate title"])
    assert r.exit_code == 1
    assert "notes/people/dup-b.md" in r.output and "notes/projects/dup-a.md" in r.output


def test_doctor_names_each_broken_note(vault_dir: Path) -> None:
    r = CliRunner().invoke(cli, ["--vault", str(vault_dir), "doctor", "--json"])
    assert r.exit_code == 1
    problems = json.loads(r.output)["problems"]
    got = {(p["path"], p["field"]) for p in problems}
    assert {
        ("notes/broken-yaml.md", "frontmatter"),
        ("notes/list-where-string.md", "salience"),
        ("notes/list-where-string.md", "pinned"),
        ("notes/list-where-string.md", "links"),
        ("notes/list-where-string.md", "created"),
        ("notes/list-where-string.md", "title"),
        ("notes/merge-conflict.md", "body"),
    } <= got
    assert all(p["fix"] for p in problems)
    text = CliRunner().invoke(cli, ["--vault", str(vault_dir), "doctor"]).output
    assert "notes/broken-yaml.md: frontmatter: invalid YAML" in text and "fix:" in text


def test_reindex_and_status_json(vault_dir: Path) -> None:
    r = json.loads(run("reindex", "--json", vault=vault_dir).output)
    assert r["full"] and len(r["added"]) == 11 and r["problems"]
    (vault_dir / "notes" / "n.md").write_text("new\n")
    s = json.loads(run("status", "--json", vault=vault_dir).output)
    assert s["notes"] == 11 and s["pending"]["new"] == ["notes/n.md"] and not s["fresh"]
    out = run("reindex", vault=vault_dir).output
    assert "1 added" in out
    assert "STALE" not in run("status", vault=vault_dir).output


def test_lifecycle_from_the_command_line(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    r = json.loads(run("forget", "m-fixture01", "--no-commit", "--json", vault=vault_dir).output)
    assert r["fields"] == {"status": "forgotten"} and r["changed"]
    assert json.loads(run("search", "hotwire", "--json", vault=vault_dir).output)["count"] == 0
    assert (
        json.loads(run("search", "hotwire", "--include", "forgotten", "--json", vault=vault_dir).output)["count"] == 1
    )
    run("restore", "m-fixture01", "--no-commit", vault=vault_dir)
    out = run("snooze", "m-fixture01", "--for", "2w", "--no-commit", vault=vault_dir).output
    assert "snoozed_until=" in out
    bad = CliRunner().invoke(cli, ["--vault", str(vault_dir), "snooze", "m-fixture01", "--for", "soon"])
    assert bad.exit_code == 1 and "30d" in bad.output
    r = json.loads(
        run(
            "correct",
            "Release train schedule",
            "--no-commit",
            "--json",
            input="We ship every Wednesday now.\n",
            vault=vault_dir,
        ).output
    )
    assert r["old"]["fields"]["status"] == "archived"
    hist = json.loads(run("history", r["new"]["id"], "--json", vault=vault_dir).output)
    assert [v["current"] for v in hist["versions"]] == [False, True]
    dup = json.loads(
        run(
            "add",
            "--title",
            "Release train schedule",
            "--json",
            "--no-commit",
            input="We ship every Wednesday now.\n",
            vault=vault_dir,
        ).output
    )
    assert dup["decision"] == "NOOP" and dup["written"] is False


def test_recall_and_context_commands(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    out = run("recall", "why", "hotwire", "--explain", "--no-vectors", vault=vault_dir).output
    assert "intent: why" in out and "notes/with-id.md" in out
    data = json.loads(run("recall", "hotwire", "--json", "--no-vectors", vault=vault_dir).output)
    assert data["info"]["intent"] == "general" and data["results"][0]["id"] == "m-fixture01"
    ctx = json.loads(
        run(
            "context",
            "what did we decide about the frontend",
            "--budget",
            "100",
            "--json",
            "--no-vectors",
            vault=vault_dir,
        ).output
    )
    assert ctx["tokens"] <= 100 and ctx["items"][0]["id"] == "m-fixture01"
    assert run("context", "frontend hotwire", "--no-vectors", vault=vault_dir).output.startswith("Relevant memory")


def test_history_says_when_it_shows_only_the_newest_commits_and_can_show_all(tmp_path: Path) -> None:
    """Issue 13: history silently stopped at 5 commits (text) and 20 (--json)."""
    from mdmem import Vault

    from ..conftest import git

    root = tmp_path / "v"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for i in range(13):
        (root / "n.md").write_text(f"# N\n\nversion {i}\n")
        git(root, "add", "n.md")
        git(root, "commit", "-qm", f"edit {i}")
    text = run("history", "n", vault=root).output
    assert "edit 12" in text and "edit 3" in text and "edit 2" not in text
    assert "the newest 10 of 13 commits; --all shows every one" in text
    doc = json.loads(run("history", "n", "--json", "-n", "4", vault=root).output)
    [version] = doc["versions"]
    assert (len(version["git_log"]), version["commits"], version["truncated"], doc["limit"]) == (4, 13, True, 4)
    every = run("history", "n", "--all", vault=root).output
    assert "edit 0" in every and "--all" not in every
    doc = json.loads(run("history", "n", "--all", "--json", vault=root).output)
    assert (len(doc["versions"][0]["git_log"]), doc["versions"][0]["truncated"], doc["limit"]) == (13, False, None)
    with Vault.open(root) as v:
        assert v.history("n", limit=13)["versions"][0]["truncated"] is False
        assert [c.subject for c in v.history("n", limit=None).versions[0].git_log][-1] == "edit 0"


def test_status_reads_the_catalogue_doctor_leaves(git_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """doctor may repair the index (a rebuild closes the catalogue): status counts from the one after it."""
    import mdmem.features.health as health
    from mdmem.api.vault import Vault

    real = health.doctor

    def doctor_that_rebuilds(store, *, notice=True):  # type: ignore[no-untyped-def]
        store.reindex(full=True)  # what a repair does when it finds the index damaged
        return real(store, notice=notice)

    monkeypatch.setattr(health, "doctor", doctor_that_rebuilds)
    with Vault.open(git_vault) as v:
        s = v.status()
    assert s.notes == len([p for p in git_vault.rglob("*.md") if ".mdmem" not in p.parts]) and s.fresh
