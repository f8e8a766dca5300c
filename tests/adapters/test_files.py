"""Files: safe paths, the scan, reading a note, atomic writes and what a killed writer leaves behind."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mdmem.adapters.files import MAX_INDEXED_BYTES, Files, atomic_write, content_hash, is_hidden
from mdmem.core.errors import MdmemError

NOTE = "---\ntitle: A note\n---\nBody text.\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty vault folder, resolved as ``Vault.open`` resolves it."""
    path = (tmp_path / "vault").resolve()
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the vault holding one note (what a link out of the vault points at)."""
    path = (tmp_path / "outside").resolve()
    path.mkdir()
    (path / "secret.md").write_text("---\ntitle: Secret\n---\nnot for the vault\n")
    return path


def put(root: Path, rel: str, text: str = NOTE) -> Path:
    """Write a file at a vault-relative path, making its folders."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def temps(folder: Path) -> list[str]:
    """Names of temp files (``.NAME.<hex>.tmp``) directly in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# -- pure helpers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "hidden"),
    [
        ("a.md", False),
        ("notes/a.md", False),
        ("v1.2/a.md", False),
        ("./notes/a.md", False),
        ("../a.md", False),
        (".git", True),
        (".mdmem/manifest.json", True),
        ("notes/.drafts/a.md", True),
        ("notes/.a.md.0123abcd.tmp", True),
        ("notes/..a.md", True),
    ],
)
def test_is_hidden(rel: str, hidden: bool) -> None:
    """A path is hidden when any of its parts (not . or ..) starts with a dot."""
    assert is_hidden(rel) is hidden


@pytest.mark.parametrize(
    ("raw", "digest"),
    [
        (b"", "cae66941d9efbd404e4d88758ea67670"),
        (b"hello\n", "ea41b4de6c03f13a95758b28dd75693e"),
    ],
)
def test_content_hash_is_stable(raw: bytes, digest: str) -> None:
    """The catalogue keeps these hashes: changing the function would make every note look changed."""
    assert content_hash(raw) == digest


def test_content_hash_sees_a_line_ending_change() -> None:
    """CRLF → LF is a change of the file, so a different hash."""
    assert content_hash(b"a\r\nb\r\n") != content_hash(b"a\nb\n")


def test_atomic_write_replaces_the_file_and_leaves_no_temp(root: Path) -> None:
    """The new text is in place and the folder holds nothing else."""
    target = root / "state.json"
    target.write_text("old")
    atomic_write(target, "new ✓\n")
    assert target.read_text(encoding="utf-8") == "new ✓\n"
    assert sorted(p.name for p in root.iterdir()) == ["state.json"]


def test_atomic_write_that_fails_keeps_the_target_and_removes_its_temp(root: Path) -> None:
    """A rename the OS refuses (the target is a folder) raises and leaves no temp file."""
    target = root / "state.json"
    target.mkdir()
    (target / "inside").write_text("kept")
    with pytest.raises(OSError):
        atomic_write(target, "new")
    assert (target / "inside").read_text() == "kept"
    assert temps(root) == []


# -- safe_path -------------------------------------------------------------------------------------


@pytest.mark.parametrize("rel", ["../x.md", "notes/../../x.md", "/etc/passwd", "notes/../../outside/secret.md"])
def test_safe_path_refuses_paths_that_leave_the_vault(root: Path, outside: Path, rel: str) -> None:
    """``..`` and absolute paths are refused with a message that says what to do."""
    with pytest.raises(MdmemError, match="outside the vault"):
        Files(root).safe_path(rel)


def test_safe_path_refuses_a_symlinked_folder_that_points_out(root: Path, outside: Path) -> None:
    """A path through a link to a folder outside the vault resolves outside, so it is refused."""
    (root / "linked").symlink_to(outside, target_is_directory=True)
    with pytest.raises(MdmemError, match="outside the vault"):
        Files(root).safe_path("linked/secret.md")


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("notes/a.md", "notes/a.md"),
        ("notes/../a.md", "a.md"),
        ("./notes/./a.md", "notes/a.md"),
        ("", "."),
    ],
)
def test_safe_path_resolves_paths_inside_the_vault(root: Path, rel: str, expected: str) -> None:
    """Paths that stay inside come back absolute and normalised."""
    assert Files(root).safe_path(rel) == (root / expected).resolve()


# -- scan ------------------------------------------------------------------------------------------


def test_scan_finds_markdown_files_with_their_stat(root: Path) -> None:
    """Every .md file (any case of the suffix, any depth) and nothing else; the stat is the file's."""
    for rel in ("a.md", "notes/b.MD", "notes/deep/er/c.md", "notes/d.txt", "notes/e.md.bak"):
        put(root, rel)
    found = Files(root).scan()
    assert sorted(found) == ["a.md", "notes/b.MD", "notes/deep/er/c.md"]
    assert found["notes/b.MD"].st_size == (root / "notes/b.MD").stat().st_size


def test_scan_skips_hidden_files_and_folders(root: Path) -> None:
    """.git, .mdmem, .obsidian, hidden subfolders, hidden notes and temp files are not notes."""
    for rel in (
        ".git/x.md",
        ".mdmem/x.md",
        ".obsidian/x.md",
        "notes/.drafts/x.md",
        "notes/.hidden.md",
        "notes/.a.md.0123abcd.tmp",
    ):
        put(root, rel)
    put(root, "notes/a.md")
    assert sorted(Files(root).scan()) == ["notes/a.md"]


@pytest.mark.parametrize(
    ("exclude", "kept"),
    [
        ((), ["AGENTS.md", "README.md", "drafts/a.md", "drafts/deep/b.md", "notes/README.md"]),
        (("README.md", "AGENTS.md"), ["drafts/a.md", "drafts/deep/b.md", "notes/README.md"]),
        (("drafts/*",), ["AGENTS.md", "README.md", "notes/README.md"]),
        (("*README.md",), ["AGENTS.md", "drafts/a.md", "drafts/deep/b.md"]),
    ],
)
def test_scan_leaves_out_excluded_globs(root: Path, exclude: tuple[str, ...], kept: list[str]) -> None:
    """``[vault] exclude`` globs match the vault-relative path (``*`` also crosses folders)."""
    for rel in ("README.md", "AGENTS.md", "notes/README.md", "drafts/a.md", "drafts/deep/b.md"):
        put(root, rel)
    assert sorted(Files(root, exclude).scan()) == kept


def test_scan_follows_a_file_link_that_stays_inside_the_vault(root: Path) -> None:
    """A link to a note inside the vault is a note under the link's name too."""
    put(root, "notes/a.md")
    (root / "notes" / "alias.md").symlink_to(root / "notes" / "a.md")
    assert sorted(Files(root).scan()) == ["notes/a.md", "notes/alias.md"]


LINKS: dict[str, Callable[[Path, Path], Path]] = {
    "file out of the vault": lambda root, outside: outside / "secret.md",
    "folder out of the vault": lambda root, outside: outside,
    "note in .git": lambda root, outside: put(root, ".git/config.md"),
    "note in a hidden folder": lambda root, outside: put(root, "notes/.private/p.md"),
    "folder inside (could loop)": lambda root, outside: root,
    "nothing (dangling)": lambda root, outside: root / "gone.md",
}


@pytest.mark.parametrize("kind", list(LINKS))
def test_scan_never_follows_a_link_out_of_the_vault_or_into_a_hidden_folder(
    root: Path, outside: Path, kind: str
) -> None:
    """Links out, into hidden folders, to folders and to nothing are skipped without an error."""
    put(root, "notes/a.md")
    target = LINKS[kind](root, outside)
    name = "link.md" if not target.is_dir() else "link"
    (root / "notes" / name).symlink_to(target)
    assert sorted(Files(root).scan()) == ["notes/a.md"]


# -- read_note -------------------------------------------------------------------------------------


def test_read_note_returns_the_note_its_hash_and_bytes(root: Path) -> None:
    """A good note parses without problems; hash and bytes are those of the file."""
    put(root, "notes/a.md")
    note, digest, raw = Files(root).read_note("notes/a.md")
    assert (note.title, note.path, note.problems) == ("A note", "notes/a.md", [])
    assert raw == NOTE.encode() and digest == content_hash(raw)


@pytest.mark.parametrize(
    ("raw", "field", "words"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "file", "binary"),
        (b"---\ntitle: Caf\xe9\n---\nbody\n", "encoding", "not valid UTF-8 (byte 14)"),
        (b"x" * (MAX_INDEXED_BYTES + 10), "file", "only the first 4 MB are indexed"),
        ("日".encode() * (MAX_INDEXED_BYTES // 3 + 1000), "file", "only the first 4 MB are indexed"),
    ],
    ids=["binary", "latin-1", "over-size ascii", "over-size multi-byte"],
)
def test_read_note_flags_unreadable_content_as_a_problem(root: Path, raw: bytes, field: str, words: str) -> None:
    """Binary, non-UTF-8 and over-size files become a note with a problem, never an exception."""
    (root / "bad.md").write_bytes(raw)
    note, digest, got = Files(root).read_note("bad.md")
    assert [(p.field, words in p.message) for p in note.problems if p.field == field] == [(field, True)]
    assert got == raw and digest == content_hash(raw)
    assert len(note.body.encode()) <= MAX_INDEXED_BYTES


def test_read_note_keeps_what_it_can_of_a_non_utf8_file(root: Path) -> None:
    """Bytes that do not decode are replaced; the rest of the note still reads."""
    (root / "latin.md").write_bytes(b"---\ntitle: Caf\xe9 menu\n---\nSoup of the day.\n")
    note, _, _ = Files(root).read_note("latin.md")
    assert note.title == "Caf\ufffd menu" and "Soup of the day." in note.body


def test_read_note_of_a_binary_file_has_no_text(root: Path) -> None:
    """A binary file is not parsed as markdown (its bytes would be noise in the index)."""
    (root / "img.md").write_bytes(b"title: x\x00\x01\x02 words here")
    note, _, _ = Files(root).read_note("img.md")
    assert note.body == "" and "words" not in note.text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.one_of(st.binary(max_size=400), st.text(max_size=300).map(lambda t: f"---\n{t}\n---\n{t}".encode())))
def test_read_note_never_raises_on_content(root: Path, raw: bytes) -> None:
    """Whatever bytes a file holds, reading it gives a note."""
    (root / "any.md").write_bytes(raw)
    note, digest, got = Files(root).read_note("any.md")
    assert note.path == "any.md" and got == raw and digest == content_hash(raw)


def test_read_note_refuses_a_link_into_a_hidden_folder(root: Path) -> None:
    """A note that is a link into .git/ is not read (tokens, remote URLs live there)."""
    put(root, ".git/config.md", "[remote]\nurl = https://token@example.com\n")
    (root / "notes").mkdir()
    (root / "notes" / "cfg.md").symlink_to(root / ".git" / "config.md")
    with pytest.raises(MdmemError, match="hidden folder"):
        Files(root).read_note("notes/cfg.md")


def test_try_read_of_a_vanished_file_is_none(root: Path) -> None:
    """A file that went away since the scan is (None, "") instead of an error."""
    assert Files(root).try_read("notes/gone.md") == (None, "")


def test_body_skips_the_frontmatter(root: Path) -> None:
    """``body`` is the text after the frontmatter, read without parsing it."""
    put(root, "a.md", "---\ntitle: [broken\n---\nThe body.\n")
    assert Files(root).body("a.md") == "The body.\n"


# -- write -----------------------------------------------------------------------------------------


def test_write_makes_folders_keeps_the_text_exactly_and_leaves_no_temp(root: Path) -> None:
    """The text lands byte for byte (CRLF kept) in a new folder, with no temp file beside it."""
    text = "---\r\ntitle: Crlf\r\n---\r\nbody ✓\r\n"
    path = Files(root).write("new/deep/a.md", text)
    assert path == root / "new" / "deep" / "a.md"
    assert path.read_bytes() == text.encode("utf-8")
    assert temps(path.parent) == []


def test_write_replaces_an_existing_note(root: Path) -> None:
    """Without ``exclusive`` a write replaces the note."""
    put(root, "a.md", "old")
    Files(root).write("a.md", "new")
    assert (root / "a.md").read_text() == "new"


def test_exclusive_write_refuses_to_overwrite_and_leaves_no_temp(root: Path) -> None:
    """``exclusive=True`` never clobbers a note that is already there."""
    put(root, "notes/a.md", "theirs")
    with pytest.raises(FileExistsError):
        Files(root).write("notes/a.md", "ours", exclusive=True)
    assert (root / "notes" / "a.md").read_text() == "theirs"
    assert temps(root / "notes") == []


def test_exclusive_write_creates_a_new_note(root: Path) -> None:
    """Where nothing is in the way an exclusive write is an ordinary write."""
    Files(root).write("notes/a.md", "ours", exclusive=True)
    assert (root / "notes" / "a.md").read_text() == "ours"
    assert temps(root / "notes") == []


@pytest.mark.parametrize("rel", ["../escape.md", "notes/../../escape.md"])
def test_write_refuses_paths_outside_the_vault(root: Path, rel: str) -> None:
    """Nothing is written outside the vault."""
    with pytest.raises(MdmemError, match="outside the vault"):
        Files(root).write(rel, "x")
    assert not (root.parent / "escape.md").exists()


# -- what a killed writer leaves -------------------------------------------------------------------


def test_unfinished_writes_names_each_temp_file_and_its_note(root: Path) -> None:
    """Temp files of note writes outside hidden folders, each with the note it was to become."""
    for rel in ("notes/.a.md.0123abcd.tmp", ".b.md.89abcdef.tmp", "notes/sub/.C.MD.00000000.tmp"):
        put(root, rel, "partial")
    for rel in (
        "notes/.x.txt.01234567.tmp",
        "notes/.d.md.xyz.tmp",
        "notes/.e.md.0123ABCD.tmp",
        ".mdmem/.f.md.01234567.tmp",
        "notes/.g.md.0123abcd.tmp.bak",
        "notes/h.md.0123abcd.tmp",
    ):
        put(root, rel, "not a note write")
    assert Files(root).unfinished_writes() == [
        (".b.md.89abcdef.tmp", "b.md"),
        ("notes/.a.md.0123abcd.tmp", "notes/a.md"),
        ("notes/sub/.C.MD.00000000.tmp", "notes/sub/C.MD"),
    ]


def test_unfinished_writes_of_a_clean_vault_is_empty(root: Path) -> None:
    """Ordinary notes are not unfinished writes."""
    put(root, "notes/a.md")
    Files(root).write("notes/b.md", NOTE)
    assert Files(root).unfinished_writes() == []


@pytest.mark.parametrize("rel", ["notes/a.md", "notes/[draft] a.md", "notes/*.md"])
def test_remove_placed_temps_removes_a_second_name_of_the_note(root: Path, rel: str) -> None:
    """A writer killed between link and unlink leaves the temp as a second name of the note: removed."""
    note = put(root, rel)
    tmp = note.with_name(f".{note.name}.0123abcd.tmp")
    os.link(note, tmp)
    Files(root).remove_placed_temps([rel])
    assert not tmp.exists() and note.read_text() == NOTE


def test_remove_placed_temps_keeps_a_temp_that_never_reached_its_place(root: Path) -> None:
    """A temp without its note, or with a different note in place, may be the only copy: kept."""
    put(root, "notes/.a.md.0123abcd.tmp", "only copy")
    put(root, "notes/b.md", "the note")
    put(root, "notes/.b.md.89abcdef.tmp", "another write")
    Files(root).remove_placed_temps(["notes/a.md", "notes/b.md"])
    assert temps(root / "notes") == [".a.md.0123abcd.tmp", ".b.md.89abcdef.tmp"]


def test_remove_placed_temps_only_looks_at_the_notes_named(root: Path) -> None:
    """Temps of other notes stay; names outside the vault or of missing notes are ignored."""
    for name in ("a", "b"):
        note = put(root, f"notes/{name}.md")
        os.link(note, note.with_name(f".{name}.md.0123abcd.tmp"))
    Files(root).remove_placed_temps(["notes/a.md", "../x.md", "notes/missing.md"])
    assert temps(root / "notes") == [".b.md.0123abcd.tmp"]
