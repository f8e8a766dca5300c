"""A real-world-shaped Obsidian vault (tests/obsidian_vault.py): every link resolves to the file
Obsidian opens, attachments are nodes, doctor reports exactly the real problems, links and
backlinks give one row per note, and a committed attachment is seen by the hook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mdmem.api.vault import Vault

from .conftest import git, mdmem_in_process
from .obsidian_vault import ATTACHMENTS, COUNTS, LINKS, NOTES, build


@pytest.fixture(scope="module")
def ov(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = build(tmp_path_factory.mktemp("obsidian") / "vault")
    mdmem_in_process("init", str(root))
    return root


def jrun(root: Path, *args: str) -> dict:
    return json.loads(mdmem_in_process("--vault", str(root), *args, "--json", check=False).stdout)


def test_adopting_touches_no_note(ov: Path) -> None:
    for rel, text in NOTES.items():
        assert (ov / rel).read_text(encoding="utf-8") == text
    for rel, data in ATTACHMENTS.items():
        assert (ov / rel).read_bytes() == data


def test_every_link_resolves_to_the_file_obsidian_opens(ov: Path) -> None:
    got: dict[tuple[str, str], str | None] = {}
    counts: dict[tuple[str, str], int] = {}
    for src in NOTES:
        for row in jrun(ov, "links", src)["links"]:
            if row["type"] == "about":
                continue
            key = (src, row["written"])
            assert key not in got, f"two rows for one target: {key}"
            got[key] = row["to"]["path"] if row["to"] else None
            counts[key] = row["count"]
            assert row["dangling"] is (row["to"] is None)
            assert row.get("how") or row["to"] is None  # --json says how the target was found
    assert got == LINKS
    assert {k: c for k, c in counts.items() if c > 1} == COUNTS


def test_attachments_are_nodes_and_missing_ones_are_named(ov: Path) -> None:
    rows = {r["written"]: r for r in jrun(ov, "links", "en/Start.md")["links"]}
    for name in ("diagram.png", "manual.pdf", "intro.ogg", "Plan.canvas"):
        assert rows[name]["to"]["kind"] == "attachment", name
    out = mdmem_in_process("--vault", str(ov), "links", "en/Start.md", "--explain").stdout
    assert "'missing.png'  MISSING ATTACHMENT" in out
    assert (
        "found by: name, nearest folder (written 'Canvas'); candidates: de/Plugins/Canvas.md, "
        "en/Plugins/Canvas.md" in out
    )


def test_doctor_reports_only_the_real_problems_and_status_agrees(ov: Path) -> None:
    doc = jrun(ov, "doctor")
    problems = sorted((p["path"], p["message"].split(":")[0]) for p in doc["problems"])
    assert problems == [("en/Start.md", "missing attachment")]  # ![[missing.png]]
    # Links to names no note has are notes not written yet, no problem: [[Whiteboard]] is an alias,
    # [[Old name]] was renamed.
    assert [(u["path"], u["target"]) for u in doc["unwritten"]] == [
        ("en/Plugins/Graph view.md", "Whiteboard"),
        ("en/Start.md", "Old name"),
    ]
    assert {k["kind"]: k["count"] for k in doc["kinds"]} == {"missing attachment": 1}
    status = jrun(ov, "status")
    assert status["problems"] == doc["count"] == 1 and status["unwritten_links"] == 2
    text = mdmem_in_process("--vault", str(ov), "doctor", check=False)
    assert text.returncode == 1 and "missing attachment: 1 in 1 file(s)" in text.stdout
    assert "add the file 'missing.png' to the vault" in text.stdout


def test_backlinks_stay_in_their_language_folder_one_row_per_note(ov: Path) -> None:
    rows = jrun(ov, "backlinks", "en/Plugins/Canvas.md")["backlinks"]
    sources = [r["from"]["path"] for r in rows]
    assert sorted(sources) == [
        "en/Guides/deep/Tips.md",
        "en/Plugins/Graph view.md",
        "en/Start.md",
        "en/Sync/Security and privacy.md",
    ]
    start = next(r for r in rows if r["from"]["path"] == "en/Start.md")
    assert start["count"] == 4 and start["context"].startswith("Welcome. See [[Canvas]]")
    assert [r["from"]["path"] for r in jrun(ov, "backlinks", "de/Plugins/Canvas.md")["backlinks"]] == [
        "Home.md",
        "de/Start.md",
        "de/Sync/Security and privacy.md",
        "en/Guides/deep/Tips.md",
    ]


def test_a_committed_attachment_resolves_and_a_removed_one_goes_missing(tmp_path: Path) -> None:
    root = build(tmp_path / "v")
    mdmem_in_process("init", str(root))  # commits its own mdmem.toml and .gitignore
    (root / "en" / "missing.png").write_bytes(b"\x89PNG")
    (root / "en" / "Attachments" / "manual.pdf").unlink()
    git(root, "add", "-A")
    git(root, "commit", "-qm", "add the picture, drop the manual")  # the post-commit hook catches up
    v = Vault.open(root)
    try:
        rows = {r.written: r for r in v.links("en/Start.md").links}
        assert rows["missing.png"].to is not None and rows["missing.png"].to.path == "en/missing.png"
        assert rows["manual.pdf"].to is None
        report = v.doctor()
        assert {k.kind: k.count for k in report.kinds()} == {"missing attachment": 1}
        assert report.links_unwritten == 2
    finally:
        v.close()


def test_aliases_still_name_notes_for_people(ov: Path) -> None:
    """A reference typed at the CLI may use an alias; only links inside notes may not."""
    assert jrun(ov, "get", "Whiteboard")["path"] == "en/Plugins/Canvas.md"


def test_undated_notes_take_their_dates_from_git_following_the_rename(ov: Path) -> None:
    canvas = jrun(ov, "get", "en/Plugins/Canvas.md")
    assert (canvas["created"][:10], canvas["created_from"]) == ("2023-03-01", "git")
    assert jrun(ov, "get", "de/Start.md")["created"][:10] == "2024-06-15"
    renamed = jrun(ov, "get", "en/New name.md")
    assert renamed["created"][:10] == "2023-03-01" and renamed["created_from"] == "git"  # older than its name
