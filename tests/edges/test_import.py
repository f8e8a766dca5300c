"""`mdmem import`: MEMORY.md, memory/ day files, JSONL and Obsidian vaults; re-running adds nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mdmem import Vault
from mdmem.edges.importer import entry_id, parse_jsonl_line, parse_memory_markdown

from ..conftest import git, mdmem_in_process, snapshot

AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"

MEMORY_MD = f"""# Memory

## Preferences
- Prefer small pull requests (under 300 lines).
- 2026-02-03: Use British spelling in user-facing text.

## Decisions
- [2026-03-14] Use Postgres 16 for the billing service; MySQL stays for legacy reports.
  The migration runs in May.
- We chose Hotwire over React for new frontends.

## Lessons
Never run the backfill job during business hours: it locks the orders table.

## Environment
- Staging deploy key: {AWS_ID} (rotate monthly)

```
code blocks stay with their entry
```
"""


def import_(vault: Path, src: Path, *args: str, check: bool = True):  # type: ignore[no-untyped-def]
    return mdmem_in_process("--vault", str(vault), "import", str(src), *args, "--json", check=check)


def notes_under(vault: Path, folder: str) -> list[Path]:
    return sorted((vault / "notes" / "imported" / folder).glob("*.md"))


def test_parse_memory_markdown_entries_types_dates() -> None:
    entries = parse_memory_markdown(MEMORY_MD, "MEMORY.md")
    by_title = {e.title: e for e in entries}
    assert len(entries) == 7
    pr = by_title["Prefer small pull requests (under 300 lines)"]
    assert pr.type == "preference" and pr.tags == ["preferences"] and pr.created is None
    spelling = by_title["Use British spelling in user-facing text"]
    assert spelling.created == "2026-02-03" and not spelling.body.startswith("2026")
    pg = next(e for e in entries if e.title.startswith("Use Postgres 16"))
    assert pg.type == "decision" and pg.created == "2026-03-14" and "The migration runs in May." in pg.body
    lesson = next(e for e in entries if e.body.startswith("Never run the backfill"))
    assert lesson.type == "antipattern"
    assert any("code blocks stay" in e.body for e in entries)


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("{not json", "not JSON"),
        ('["a list"]', "not a JSON object"),
        ('{"type": "fact"}', 'no "content"'),
        ('{"content": "x", "salience": 7}', "salience must be a number from 0 to 1"),
        ('{"content": "x", "created": "next tuesday"}', "created must be a date"),
        ('{"content": "x", "scope": "team acme"}', "scope must be"),
    ],
)
def test_bad_jsonl_lines_say_why(line: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse_jsonl_line(line, 1, "m.jsonl")


def test_jsonl_fields_and_aliases() -> None:
    e = parse_jsonl_line(
        json.dumps(
            {
                "memory": "Budget approved at 500K",
                "category": "style",
                "importance": 0.9,
                "tags": "budget, finance",
                "created_at": 1767225600,
            }
        ),
        3,
        "m.jsonl",
    )
    assert (e.type, e.salience, e.tags, e.created) == ("preference", 0.9, ["budget", "finance"], "2026-01-01T00:00:00Z")
    e = parse_jsonl_line('{"content": "x y z", "type": "vibes"}', 4, "m.jsonl")
    assert e.type == "note" and e.extra == {"original_type": "vibes"}
    assert entry_id("entry:a") == entry_id("entry:a") != entry_id("entry:b")


def test_memory_md_import_is_idempotent_committed_and_redacted(git_vault: Path, tmp_path: Path) -> None:
    src = tmp_path / "workspace"
    src.mkdir()
    (src / "MEMORY.md").write_text(MEMORY_MD)
    before = (src / "MEMORY.md").read_bytes()
    r = json.loads(import_(git_vault, src / "MEMORY.md").stdout)
    assert len(r["written"]) == 7 and r["skipped"] == 0 and r["redacted"] == 1 and r["commit"]
    assert (src / "MEMORY.md").read_bytes() == before  # the source is never changed
    notes = notes_under(git_vault, "memory")
    assert len(notes) == 7
    pg = next(p for p in notes if "postgres" in p.name).read_text()
    assert "type: decision" in pg and "created: 2026-03-14" in pg and "source: import:MEMORY.md" in pg
    assert AWS_ID not in "".join(p.read_text() for p in notes)
    assert git(git_vault, "status", "--porcelain") == ""
    assert "import 7 new" in git(git_vault, "log", "-1", "--format=%s")

    again = json.loads(import_(git_vault, src / "MEMORY.md").stdout)
    assert again["written"] == [] and again["skipped"] == 7 and again["commit"] is None
    assert len(notes_under(git_vault, "memory")) == 7

    hits = json.loads(
        mdmem_in_process("--vault", str(git_vault), "search", "Postgres billing", "--type", "decision", "--json").stdout
    )["results"]
    assert hits and hits[0]["date"].startswith("2026-03-14")


def test_workspace_folder_imports_memory_md_and_day_files(git_vault: Path, tmp_path: Path) -> None:
    ws = tmp_path / "workspace"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("## Facts\n- The office wifi is called acme-guest.\n")
    (ws / "memory" / "2026-03-01.md").write_text("# Sprint kickoff\n\nWe planned the payments rewrite.\n")
    (ws / "memory" / "2026-03-02.md").write_text("Paired on the webhook retries.\n")
    (ws / "memory" / "notes.md").write_text("Undated scratch.\n")
    os.utime(ws / "memory" / "notes.md", (1767225600, 1767225600))  # 2026-01-01
    r = json.loads(import_(git_vault, ws).stdout)
    assert len(r["written"]) == 4, r
    days = {
        p.read_text().split("title: ")[1].split("\n")[0]: p.read_text() for p in notes_under(git_vault, "workspace")
    }
    assert "created: 2026-03-01" in days["Sprint kickoff (2026-03-01)"]
    assert "created: 2026-03-02" in days["Memory 2026-03-02"] and "type: context" in days["Memory 2026-03-02"]
    assert "created: 2026-01-01" in days["Memory 2026-01-01"]

    (ws / "memory" / "2026-03-02.md").write_text("Paired on the webhook retries.\nThen fixed the flaky test.\n")
    again = json.loads(import_(git_vault, ws).stdout)
    assert again["written"] == [] and len(again["updated"]) == 1 and again["skipped"] == 3
    note = next(p for p in notes_under(git_vault, "workspace") if "Then fixed the flaky test." in p.read_text())
    assert "created: 2026-03-02" in note.read_text()
    assert len(notes_under(git_vault, "workspace")) == 4


def test_jsonl_import_reports_bad_lines_and_keeps_the_rest(git_vault: Path, tmp_path: Path) -> None:
    src = tmp_path / "memories.jsonl"
    src.write_text(
        "\n".join(
            [
                json.dumps(
                    {
                        "content": "Budget approved at 500K by the team lead",
                        "type": "decision",
                        "salience": 0.9,
                        "tags": ["budget"],
                        "created": "2026-03-14",
                    }
                ),
                "{broken",
                json.dumps({"id": "mem-42", "content": "Dana owns the billing service", "type": "fact"}),
                json.dumps({"content": "salience out of range", "salience": 3}),
                "",
                json.dumps(
                    {"content": "Budget approved at 500K by the team lead", "type": "decision"}
                ),  # same memory again
            ]
        )
        + "\n"
    )
    proc = import_(git_vault, src, check=False)
    assert proc.returncode == 1
    r = json.loads(proc.stdout)
    assert len(r["written"]) == 2 and r["skipped"] == 1
    assert r["errors"] == [
        "memories.jsonl line 2: not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
        "memories.jsonl line 4: salience must be a number from 0 to 1, got 3",
    ]
    assert "error: memories.jsonl line 2" in proc.stderr
    budget = next(p for p in notes_under(git_vault, "memories") if "budget" in p.name).read_text()
    assert "salience: 0.9" in budget and "created: 2026-03-14" in budget and "tags: [budget]" in budget

    src.write_text(
        src.read_text().replace(
            '"content": "Dana owns the billing service"', '"content": "Dana owns the billing and ledger services"'
        )
    )
    again = json.loads(import_(git_vault, src, check=False).stdout)
    assert again["written"] == []  # the JSONL id, not the text, names a memory


def test_dry_run_writes_nothing(git_vault: Path, tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("- One memory worth keeping.\n")
    before = snapshot(git_vault)
    r = json.loads(import_(git_vault, tmp_path / "MEMORY.md", "--dry-run").stdout)
    assert r["written"] == ["(new) One memory worth keeping"] and snapshot(git_vault) == before


def test_obsidian_vault_is_adopted_in_place(tmp_path: Path) -> None:
    obs = tmp_path / "Obsidian Vault"
    (obs / ".obsidian").mkdir(parents=True)
    (obs / ".obsidian" / "app.json").write_text("{}")
    (obs / "Daily").mkdir()
    (obs / "Daily" / "2026-03-14.md").write_text("Met [[Dana]] about the #billing rewrite.\n")
    (obs / "Dana.md").write_text("---\ntags: [person]\n---\nDana owns billing.\n")
    before = snapshot(obs)
    out = mdmem_in_process("import", str(obs)).stdout
    assert "Adopted" in out
    after = snapshot(obs)
    assert {k: v for k, v in after.items() if k in before} == before  # no note rewritten
    assert set(after) - set(before) == {"mdmem.toml", ".gitignore"}
    assert not (obs / ".git").exists()  # not a repository before, so none is made unasked
    hits = Vault.open(obs).search("billing rewrite")
    assert hits and hits[0].path == "Daily/2026-03-14.md"
    again = mdmem_in_process("import", str(obs)).stdout
    assert "Adopted" in again and snapshot(obs) == after  # again: nothing changes


def test_bad_sources_say_what_to_do(git_vault: Path, tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text("a,b\n")
    proc = mdmem_in_process("--vault", str(git_vault), "import", str(tmp_path / "data.csv"), check=False)
    assert proc.returncode == 1 and "MEMORY.md-style markdown" in proc.stderr
    (tmp_path / "empty").mkdir()
    proc = mdmem_in_process("--vault", str(git_vault), "import", str(tmp_path / "empty"), check=False)
    assert proc.returncode == 1 and "nothing to import" in proc.stderr
    proc = mdmem_in_process("--vault", str(git_vault), "import", str(git_vault / "notes"), check=False)
    assert proc.returncode == 1 and "inside the vault" in proc.stderr
    proc = mdmem_in_process("--vault", str(git_vault), "import", str(tmp_path / "nope.md"), check=False)
    assert proc.returncode == 2
