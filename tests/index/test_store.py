"""IndexStore: repair (the one way a read writes), reads, writes and commits, resolve, place, filters."""

from __future__ import annotations

import gc
import re
import sqlite3
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from mdmem.adapters.config import Config, load_config
from mdmem.adapters.files import content_hash
from mdmem.core.errors import AmbiguousNote, IndexMissing, MdmemError, NoteNotFound
from mdmem.core.note import iso_to_timestamp
from mdmem.index.store import IndexStore

from ..conftest import git

NOTE = "---\ntitle: Fresh platypus note\n---\nThe platypus lays eggs.\n"
FIXTURE_NOTES = 11


@pytest.fixture(autouse=True)
def _key_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The sealing key of each test lives in its own $MDMEM_HOME."""
    monkeypatch.setenv("MDMEM_HOME", str(tmp_path / "mdmem-home"))


def open_store(root: Path, config: Config | None = None) -> IndexStore:
    """A store as ``Vault.open`` makes one: resolved root, the vault's own settings."""
    root = root.resolve()
    return IndexStore(root, config or load_config(root))


@pytest.fixture
def store(vault_dir: Path) -> Iterator[IndexStore]:
    """A store over the fixture notes, not indexed yet."""
    s = open_store(vault_dir)
    yield s
    s.close()


@pytest.fixture
def indexed(store: IndexStore) -> IndexStore:
    """The fixture notes' store after its first repair (the index built)."""
    store.repair()
    return store


@pytest.fixture
def git_store(git_vault: Path) -> Iterator[IndexStore]:
    """A store over the fixture notes in a git repository, indexed at HEAD by the post-commit hook."""
    s = open_store(git_vault)
    s.repair()
    yield s
    s.close()


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def indexed_title(store: IndexStore, rel: str) -> str | None:
    """The title the catalogue holds for a path (None: not indexed)."""
    row = store.catalog.row(rel)
    return None if row is None else str(row["title"])


# -- repair ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("attr", ["catalog", "lexical", "directory", "generation"])
def test_reading_before_any_index_raises_index_missing_and_writes_nothing(store: IndexStore, attr: str) -> None:
    """The handles only open files: without ``repair`` first there is nothing to open, and nothing is made."""
    with pytest.raises(IndexMissing, match='run "mdmem reindex"'):
        getattr(store, attr)
    assert not (store.root / ".mdmem").exists()


def test_repair_builds_a_missing_index(store: IndexStore) -> None:
    """The first repair builds a sealed generation holding every note."""
    store.repair()
    assert store.rebuild_reason() is None
    assert store.generation == store.state.generation()
    assert store.catalog.count() == FIXTURE_NOTES
    assert [h.path for h in store.lexical.search("descaling", 5)] == ["notes/empty-frontmatter.md"]
    assert store.state.dirty_paths() is None and not store.state.marked()


def test_repair_without_a_mark_does_not_look_at_the_files(indexed: IndexStore) -> None:
    """Repair is cheap: a file nobody recorded is not indexed by it (that is reindex's job)."""
    (indexed.root / "notes" / "fresh.md").write_text(NOTE)
    indexed.repair()
    assert indexed_title(indexed, "notes/fresh.md") is None


@pytest.mark.parametrize("mark", ["stale", "dirty"])
def test_repair_catches_up_after_a_mark(indexed: IndexStore, mark: str) -> None:
    """A hook that failed (stale) or a writer that died (dirty) left work: repair finishes it in place."""
    gen = indexed.generation
    (indexed.root / "notes" / "fresh.md").write_text(NOTE)
    (indexed.root / "notes" / "cjk.md").unlink()
    if mark == "stale":
        indexed.state.mark_stale()
    else:
        indexed.state.mark_dirty(["notes/fresh.md", "notes/cjk.md"])
    indexed.repair()
    assert indexed_title(indexed, "notes/fresh.md") == "Fresh platypus note"
    assert indexed_title(indexed, "notes/cjk.md") is None
    assert not indexed.state.marked()
    assert indexed.generation == gen  # caught up incrementally, not rebuilt


def test_repair_follows_a_generation_another_store_switched_to(indexed: IndexStore) -> None:
    """Another process rebuilt the index: this store's next repair reads the new generation."""
    old = indexed.generation
    indexed.catalog.count()  # holds the old generation open
    (indexed.root / "notes" / "fresh.md").write_text(NOTE)
    other = open_store(indexed.root)
    try:
        other.reindex(full=True)
        new = other.generation
    finally:
        other.close()
    indexed.repair()
    assert indexed.generation == new != old
    assert indexed_title(indexed, "notes/fresh.md") == "Fresh platypus note"


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_repair_rebuilds_a_damaged_catalogue(indexed: IndexStore, capsys: pytest.CaptureFixture[str]) -> None:
    """A catalogue that is not a database is rebuilt (one line on stderr), not trusted or fatal."""
    old = indexed.generation
    indexed.close()
    (indexed.state.dir / old / "catalog.sqlite").write_bytes(b"garbage" * 100)
    indexed.repair()
    assert indexed.generation != old
    assert indexed.catalog.count() == FIXTURE_NOTES
    assert "index unreadable (DatabaseError); rebuilding it." in capsys.readouterr().err


# Whoosh leaks a file handle when it meets a garbage TOC (see test_index.test_garbage_index_is_rebuilt).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_read_rebuilds_a_damaged_index_and_reads_again(indexed: IndexStore) -> None:
    """A read that finds the BM25 files damaged gets its answer from a rebuilt index."""
    old = indexed.generation
    indexed.close()
    for f in (indexed.state.dir / old / "lexical").iterdir():
        f.write_bytes(b"\x00garbage")
    indexed.repair()  # the catalogue is fine, so repair alone does not notice
    hits = indexed.read(lambda: [h.path for h in indexed.lexical.search("descaling", 5)])
    assert hits == ["notes/empty-frontmatter.md"]
    assert indexed.generation != old
    indexed.close()
    with warnings.catch_warnings():  # collect whoosh's leaked handle here, not in a later test
        warnings.simplefilter("ignore")
        gc.collect()


def test_read_retries_only_once(indexed: IndexStore) -> None:
    """A read that fails again after the rebuild raises instead of rebuilding forever."""
    calls: list[str] = []

    def broken() -> None:
        calls.append(indexed.generation)
        raise sqlite3.DatabaseError("database disk image is malformed")

    with pytest.raises(sqlite3.DatabaseError):
        indexed.read(broken)
    assert len(calls) == 2 and calls[0] != calls[1]


def test_read_passes_mdmem_errors_through_without_a_rebuild(indexed: IndexStore) -> None:
    """An MdmemError is an answer (not found, ambiguous), not a damaged index."""
    gen, calls = indexed.generation, []

    def not_found() -> None:
        calls.append(1)
        raise NoteNotFound("x")

    with pytest.raises(NoteNotFound):
        indexed.read(not_found)
    assert calls == [1] and indexed.generation == gen


# -- writing, committing, catching up --------------------------------------------------------------


def test_update_after_write_note_indexes_it_and_clears_the_mark(indexed: IndexStore) -> None:
    """The path is marked dirty before the file is written and unmarked once it is indexed."""
    with indexed.writer_lock():
        indexed.write_note("notes/fresh.md", NOTE, exclusive=True)
        assert indexed.state.dirty_paths() == ["notes/fresh.md"]
        report = indexed.update(["notes/fresh.md"])
    assert report.added == ["notes/fresh.md"] and not report.full
    assert indexed.state.dirty_paths() is None
    assert indexed.resolve("Fresh platypus note") == "notes/fresh.md"
    assert [h.path for h in indexed.lexical.search("platypus", 5)] == ["notes/fresh.md"]


def test_write_note_exclusive_refuses_an_existing_note(indexed: IndexStore) -> None:
    """An exclusive write never clobbers a note; the note keeps its text."""
    before = (indexed.root / "notes" / "cjk.md").read_bytes()
    with indexed.writer_lock(), pytest.raises(FileExistsError):
        indexed.write_note("notes/cjk.md", NOTE, exclusive=True)
    assert (indexed.root / "notes" / "cjk.md").read_bytes() == before


def test_commit_outside_git_is_a_no_op(indexed: IndexStore) -> None:
    """No repository, no commit and no warning."""
    assert indexed.commit(["notes/cjk.md"], "msg") is None and indexed.warnings == []


def test_commit_moves_the_last_indexed_commit_with_head(git_store: IndexStore) -> None:
    """mdmem's own commit is indexed already, so the catalogue's last commit follows HEAD."""
    root = git_store.root
    assert git_store.catalog.get_meta("last_commit") == head(root)
    with git_store.writer_lock():
        git_store.write_note("notes/fresh.md", NOTE, exclusive=True)
        git_store.update(["notes/fresh.md"])
    sha = git_store.commit(["notes/fresh.md"], "mdmem: add fresh")
    assert sha is not None and sha == head(root)
    assert git_store.catalog.get_meta("last_commit") == sha
    assert git(root, "status", "--porcelain", "notes/fresh.md") == ""
    assert git(root, "log", "-1", "--format=%s") == "mdmem: add fresh\n"
    assert git_store.warnings == []


def test_commit_git_refuses_keeps_the_file_and_warns(git_store: IndexStore) -> None:
    """A failing pre-commit hook: the note stays written and indexed, the reason becomes a warning."""
    root = git_store.root
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'error: commits are frozen today' >&2\nexit 1\n")
    hook.chmod(0o755)
    before = head(root)
    with git_store.writer_lock():
        git_store.write_note("notes/fresh.md", NOTE, exclusive=True)
        git_store.update(["notes/fresh.md"])
    assert git_store.commit(["notes/fresh.md"], "mdmem: add fresh") is None
    assert head(root) == before and git_store.catalog.get_meta("last_commit") == before
    assert (root / "notes" / "fresh.md").read_text() == NOTE
    assert indexed_title(git_store, "notes/fresh.md") == "Fresh platypus note"
    [warning] = git_store.warnings
    assert warning.startswith("notes/fresh.md saved and indexed, but not committed: ")
    assert "commits are frozen today" in warning
    assert warning.endswith("Commit it with: git add notes/fresh.md && git commit")


def test_catch_up_after_a_commit_indexes_only_the_committed_changes(git_store: IndexStore) -> None:
    """Changed and added notes of the commits since the last index; an uncommitted edit waits."""
    root = git_store.root
    (root / "notes" / "bare-date.md").write_text("---\ntitle: Release train v2\n---\nShips on Wednesdays now.\n")
    (root / "notes" / "fresh.md").write_text(NOTE)
    git(root, "add", "notes/bare-date.md", "notes/fresh.md")
    git(root, "commit", "-qm", "edit by hand", env={"MDMEM_SKIP_HOOK": "1"})
    (root / "notes" / "cjk.md").write_text("---\ntitle: Uncommitted\n---\nnot yet\n")
    report = git_store.indexer.catch_up(timeout=5)
    assert (report.added, report.updated, report.deleted) == (["notes/fresh.md"], ["notes/bare-date.md"], [])
    assert not report.full and report.commit == head(root)
    assert git_store.catalog.get_meta("last_commit") == head(root)
    assert indexed_title(git_store, "notes/bare-date.md") == "Release train v2"
    assert indexed_title(git_store, "notes/cjk.md") == "数据库迁移"


def test_catch_up_with_nothing_committed_changes_nothing(git_store: IndexStore) -> None:
    """At the indexed commit already, a catch-up is empty."""
    report = git_store.indexer.catch_up(timeout=5)
    assert report.changed == 0 and report.commit == head(git_store.root)


def test_catch_up_after_a_deletion_drops_the_note(git_store: IndexStore) -> None:
    """A note a commit removed leaves the index."""
    root = git_store.root
    git(root, "rm", "-q", "notes/cjk.md")
    git(root, "commit", "-qm", "rm", env={"MDMEM_SKIP_HOOK": "1"})
    report = git_store.indexer.catch_up(timeout=5)
    assert report.deleted == ["notes/cjk.md"] and indexed_title(git_store, "notes/cjk.md") is None


# -- resolve ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ref",
    [
        "m-fixture01",
        "notes/with-id.md",
        "notes/with-id",
        "with-id",
        "Hotwire decision",
        "hotwire DECISION",
        "Frontend choice",
        "[[Hotwire decision]]",
    ],
)
def test_resolve_by_id_path_stem_title_or_alias(indexed: IndexStore, ref: str) -> None:
    """Every name of a note leads to its path."""
    assert indexed.resolve(ref) == "notes/with-id.md"


def test_resolve_repairs_first(store: IndexStore) -> None:
    """A resolve on a vault never indexed builds the index on the way."""
    assert store.resolve("m-fixture01") == "notes/with-id.md"


def test_resolve_an_ambiguous_title_lists_the_candidates(indexed: IndexStore) -> None:
    """Two notes with one title: AmbiguousNote names both, sorted, and says how to pick."""
    with pytest.raises(AmbiguousNote, match="Use the id or the path") as exc:
        indexed.resolve("Duplicate title")
    assert exc.value.candidates == ["notes/people/dup-b.md", "notes/projects/dup-a.md"]


def test_resolve_a_missing_note_suggests_close_names(indexed: IndexStore) -> None:
    """A typo gets NoteNotFound with the closest names."""
    with pytest.raises(NoteNotFound, match="Did you mean") as exc:
        indexed.resolve("Hotwire decisoin")
    assert "hotwire decision" in exc.value.suggestions


def test_resolve_nothing_close_suggests_a_search(indexed: IndexStore) -> None:
    """With no close name the message points to search instead."""
    with pytest.raises(NoteNotFound, match='Try "mdmem search') as exc:
        indexed.resolve("zzzz qqqq")
    assert exc.value.suggestions == []


def test_resolve_a_file_not_indexed_yet_by_its_path(indexed: IndexStore) -> None:
    """A note written since the last index is still found by its path."""
    (indexed.root / "notes" / "fresh.md").write_text(NOTE)
    assert indexed.resolve("notes/fresh") == "notes/fresh.md"
    assert indexed.get("notes/fresh.md").title == "Fresh platypus note"


# -- place -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "title", "existing", "expected"),
    [
        (None, "Use Hotwire!", [], "notes/use-hotwire.md"),
        (None, "Use Hotwire!", ["notes/use-hotwire.md"], "notes/use-hotwire-2.md"),
        (None, "Use Hotwire!", ["notes/use-hotwire.md", "notes/use-hotwire-2.md"], "notes/use-hotwire-3.md"),
        (None, "?!", [], "notes/note.md"),
        (None, "数据库迁移", [], "notes/数据库迁移.md"),
        ("ideas/x", "ignored title", [], "ideas/x.md"),
        ("ideas/x.md", "ignored title", [], "ideas/x.md"),
        ("ideas/../y", "ignored title", [], "y.md"),
        ("ideas/" + "é" * 118, "t", [], "ideas/" + "é" * 118 + ".md"),  # 239 bytes with .md
    ],
)
def test_place(tmp_path: Path, path: str | None, title: str, existing: list[str], expected: str) -> None:
    """A given path gets .md; else a free slug in notes_dir, numbered from -2."""
    store = open_store(tmp_path)
    for rel in existing:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(NOTE)
    assert store.place(path, title) == expected


def test_place_without_a_notes_dir_uses_the_vault_top(tmp_path: Path) -> None:
    """``notes_dir = ""`` puts new notes at the top of the vault."""
    assert open_store(tmp_path, Config(notes_dir="")).place(None, "Top level") == "top-level.md"


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("notes/a", "notes/a.md already exists; choose another --path"),
        ("notes/a.md", "already exists"),
        ("x" * 238, "too long"),
        ("ideas/" + "é" * 119, "too long (over 240 bytes)"),
        ("../outside", "outside the vault"),
    ],
)
def test_place_refuses(tmp_path: Path, path: str, words: str) -> None:
    """An existing note, a file name over 240 bytes or a path out of the vault is refused."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text(NOTE)
    with pytest.raises(MdmemError, match=re.escape(words)):
        open_store(tmp_path).place(path, "title")


@pytest.mark.parametrize(
    "path",
    [
        "notes/x",
        ".hidden/x",
        ".mdmem/x",
        "drafts/x",
    ],
)
def test_a_placed_note_stays_indexed_after_the_next_reindex(vault_dir: Path, path: str) -> None:
    """Whatever ``place`` accepts, reindex keeps finding (refusing the path would do as well)."""
    store = open_store(vault_dir, Config(exclude=("drafts/*",)))
    try:
        store.repair()
        try:
            rel = store.place(path, "title")
        except MdmemError:
            return
        with store.writer_lock():
            store.write_note(rel, NOTE, exclusive=True)
            store.update([rel])
        assert store.reindex().deleted == []
        assert indexed_title(store, rel) == "Fresh platypus note"
    finally:
        store.close()


# -- time and filters ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "as_of", "expected"),
    [
        ("2026-01-31", None, "2026-01-31"),
        ("2026-01-31", "2025-06-01", "2025-06-01"),
        (None, "2025-06-01T12:00:00Z", "2025-06-01T12:00:00Z"),
        ("2026-01-31T08:30:00+02:00", None, "2026-01-31T06:30:00Z"),
        ("", "2025-06-01", "2025-06-01"),
    ],
)
def test_now_is_as_of_else_mdmem_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str | None, as_of: str | None, expected: str
) -> None:
    """Retrieval judges visibility at ``as_of``, else $MDMEM_NOW; filters carry that time."""
    if env is None:
        monkeypatch.delenv("MDMEM_NOW", raising=False)
    else:
        monkeypatch.setenv("MDMEM_NOW", env)
    store = open_store(tmp_path)
    assert store.now(as_of) == iso_to_timestamp(expected)
    assert store.filters(as_of=as_of).visible_at == iso_to_timestamp(expected)


def test_now_without_a_date_is_the_clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No $MDMEM_NOW and no ``as_of``: now."""
    monkeypatch.delenv("MDMEM_NOW", raising=False)
    before = time.time()
    assert before <= open_store(tmp_path).now() <= time.time()


def test_a_bad_mdmem_now_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$MDMEM_NOW that is not a date says what a date looks like."""
    monkeypatch.setenv("MDMEM_NOW", "yesterday")
    with pytest.raises(MdmemError, match=r"--as-of must be a date like 2026-01-31, got 'yesterday'"):
        open_store(tmp_path).now()


def test_filters_turn_arguments_into_filters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every filter argument lands in its field (a scope admits global notes, until is the whole day)."""
    monkeypatch.setenv("MDMEM_NOW", "2026-03-01")
    f = open_store(tmp_path).filters(
        type="decision",
        tag=["a", "b"],
        scope="project:x",
        status="active",
        since="2026-01-01",
        until="2026-01-31",
        path="notes",
        include="archived",
    )
    assert (f.types, f.tags, f.scopes, f.statuses, f.path, f.include) == (
        ("decision",),
        ("a", "b"),
        ("project:x", "global"),
        ("active",),
        "notes",
        ("archived",),
    )
    assert f.since == iso_to_timestamp("2026-01-01")
    assert f.until == pytest.approx(iso_to_timestamp("2026-01-31") + 86400 - 0.001, abs=1e-6)  # type: ignore[operator]
    assert f.visible_at == iso_to_timestamp("2026-03-01")


def test_new_id_skips_an_id_an_indexed_note_has(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two ids of one millisecond can repeat (15 random bits); the store never hands out a taken one."""
    import secrets

    from mdmem.core.note import new_id

    monkeypatch.setattr(time, "time", lambda: 1_764_511_351.1235)
    bits = [7, 7, 8]
    monkeypatch.setattr(secrets, "randbits", lambda k: bits.pop(0) if bits else 9)
    taken = new_id()
    (vault_dir / "notes" / "taken.md").write_text(f"---\nid: {taken}\ntitle: Taken\n---\nbody\n")
    store = open_store(vault_dir)
    try:
        store.repair()
        fresh = store.new_id()
    finally:
        store.close()
    assert fresh != taken and fresh[:11] == taken[:11]


def test_content_hash_in_the_catalogue_is_the_files(indexed: IndexStore) -> None:
    """The catalogue's hash of a note is ``files.content_hash`` of its bytes."""
    raw = (indexed.root / "notes" / "cjk.md").read_bytes()
    assert indexed.catalog.hashes(["notes/cjk.md"]) == {"notes/cjk.md": content_hash(raw)}


def test_a_title_from_the_first_heading_is_suggested_too(indexed: IndexStore) -> None:
    """Titles taken from an H1 (no frontmatter title) are names people type: a typo suggests them."""
    (indexed.root / "notes" / "h1-only.md").write_text("# Quarterly platypus review\n\nNo frontmatter.\n")
    indexed.reindex()
    with pytest.raises(NoteNotFound, match="Did you mean") as exc:
        indexed.resolve("Quarterly platypus reveiw")
    assert "quarterly platypus review" in exc.value.suggestions
