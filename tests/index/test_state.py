"""IndexState: the manifest and its seal, generations, the marks, the writer lock, tidying, serve.json."""

from __future__ import annotations

import errno
import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mdmem.core.errors import IndexNotWritten, LockHeld, MdmemError
from mdmem.index.state import IndexState, machine_key, seal, server_info

EXPECTED = {"schema": 4, "engine": "whoosh-test"}
NOT_HERE = "index not built here (a copied or cloned .mdmem/ is never opened)"


@pytest.fixture(autouse=True)
def _key_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The sealing key of each test lives in its own $MDMEM_HOME."""
    home = tmp_path / "mdmem-home"
    monkeypatch.setenv("MDMEM_HOME", str(home))
    return home


@pytest.fixture
def state(tmp_path: Path) -> IndexState:
    """The state of an empty vault; a second writer gives up at once."""
    root = tmp_path / "vault"
    root.mkdir()
    return IndexState(root, lock_timeout=0.0)


def built(state: IndexState) -> str:
    """A generation with a catalogue file, switched to as a rebuild leaves it; returns its name."""
    gen = state.new_generation()
    (state.dir / gen / "catalog.sqlite").write_bytes(b"")
    state.switch({**EXPECTED, "generation": gen})
    return gen


def edit_manifest(state: IndexState, **changes: Any) -> None:
    """Rewrite manifest keys by hand (as a copied, older or forged index would have them)."""
    manifest = json.loads(state.manifest_path.read_text())
    manifest.update(changes)
    state.manifest_path.write_text(json.dumps(manifest))


# -- the seal ----------------------------------------------------------------------------------------


def test_machine_key_lives_in_mdmem_home_private_and_stable(_key_home: Path) -> None:
    """The key is made once in $MDMEM_HOME (mode 0600) and read back the same."""
    key = machine_key()
    path = _key_home / "index.key"
    assert len(key) == 32 and bytes.fromhex(path.read_text().strip()) == key
    assert path.stat().st_mode & 0o777 == 0o600
    assert machine_key() == key
    assert [p.name for p in _key_home.iterdir()] == ["index.key"]  # no temp file left


def test_machine_key_differs_per_mdmem_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Another $MDMEM_HOME is another user's key."""
    first = machine_key()
    monkeypatch.setenv("MDMEM_HOME", str(tmp_path / "other-home"))
    assert machine_key() != first


def test_seal_depends_on_generation_and_key() -> None:
    """The seal is deterministic, and another generation or another key gives another seal."""
    key = secrets.token_bytes(32)
    assert seal("gen-a") == seal("gen-a") == seal("gen-a", key=machine_key())
    assert len({seal("gen-a"), seal("gen-b"), seal("gen-a", key=key)}) == 3


# -- the manifest ----------------------------------------------------------------------------------

DAMAGE: list[tuple[str, Callable[[IndexState, str], object], str | None]] = [
    ("usable", lambda s, gen: None, None),
    ("no manifest", lambda s, gen: s.manifest_path.unlink(), "no index yet"),
    ("manifest not json", lambda s, gen: s.manifest_path.write_text("{not json"), "manifest unreadable"),
    ("manifest a list", lambda s, gen: s.manifest_path.write_text("[1, 2]"), "manifest unreadable"),
    ("other schema", lambda s, gen: edit_manifest(s, schema=3), "index schema is 3, this mdmem needs 4"),
    ("no engine", lambda s, gen: edit_manifest(s, engine=None), "index engine is None, this mdmem needs 'whoosh-test'"),
    (
        "generation escapes",
        lambda s, gen: edit_manifest(s, generation="../../x", seal=seal("../../x")),
        "manifest unreadable",
    ),
    ("another key's seal", lambda s, gen: edit_manifest(s, seal=seal(gen, key=secrets.token_bytes(32))), NOT_HERE),
    ("no seal", lambda s, gen: edit_manifest(s, seal=""), NOT_HERE),
    ("catalogue missing", lambda s, gen: (s.dir / gen / "catalog.sqlite").unlink(), "index files missing"),
]


@pytest.mark.parametrize(("damage", "reason"), [(d, r) for _, d, r in DAMAGE], ids=[n for n, _, _ in DAMAGE])
def test_rebuild_reason(state: IndexState, damage: Callable[[IndexState, str], object], reason: str | None) -> None:
    """Why the index must be rebuilt from scratch, checked before any index file is opened."""
    gen = built(state)
    damage(state, gen)
    assert state.rebuild_reason(EXPECTED) == reason


def test_rebuild_reason_of_a_vault_never_indexed(state: IndexState) -> None:
    """No .mdmem/ at all: "no index yet", and asking wrote nothing."""
    assert state.rebuild_reason(EXPECTED) == "no index yet"
    assert state.generation() is None and not state.dir.exists()


def test_switch_writes_a_sealed_manifest_and_removes_other_generations(state: IndexState) -> None:
    """The manifest names the new generation under this user's seal; older ones are gone."""
    old = built(state)
    half_built = state.new_generation()
    new = state.new_generation()
    (state.dir / new / "catalog.sqlite").write_bytes(b"")
    state.switch({**EXPECTED, "generation": new, "mdmem": "9.9"})
    manifest = json.loads(state.manifest_path.read_text())
    assert manifest == {**EXPECTED, "generation": new, "mdmem": "9.9", "seal": seal(new)}
    assert state.generation() == new and state.rebuild_reason(EXPECTED) is None
    assert sorted(p.name for p in state.dir.glob("gen-*")) == [new]
    assert old != new != half_built
    assert not list(state.dir.glob(".*.tmp"))


def test_new_generations_have_distinct_names(state: IndexState) -> None:
    """Two generations made in the same second do not collide, and each is an empty folder."""
    a, b = state.new_generation(), state.new_generation()
    assert a != b and a.startswith("gen-") and list((state.dir / a).iterdir()) == []


def test_discard_removes_only_a_generation_that_is_not_current(state: IndexState) -> None:
    """A failed rebuild's generation goes; the current one stays whatever the caller says."""
    current = built(state)
    failed = state.new_generation()
    state.discard(failed)
    state.discard(current)
    assert sorted(p.name for p in state.dir.glob("gen-*")) == [current]
    assert state.rebuild_reason(EXPECTED) is None


# -- the marks -------------------------------------------------------------------------------------


def test_dirty_mark_appends_until_replaced_then_clears(state: IndexState) -> None:
    """Paths about to change accumulate; ``replace`` starts over; clearing removes the mark."""
    assert state.dirty_paths() is None
    state.mark_dirty(["notes/a.md"])
    state.mark_dirty(["notes/b.md", "notes/ü.md"])
    assert state.dirty_paths() == ["notes/a.md", "notes/b.md", "notes/ü.md"]
    state.mark_dirty(["*"], replace=True)
    assert state.dirty_paths() == ["*"]
    state.clear_dirty()
    assert state.dirty_paths() is None and not state.marked()


@pytest.mark.parametrize(("mark", "stale"), [("dirty", False), ("stale", True)])
def test_either_mark_makes_the_state_marked(state: IndexState, mark: str, stale: bool) -> None:
    """``marked`` sees both marks, ``stale`` only the hook's; clearing it unmarks."""
    assert not state.marked()
    if mark == "dirty":
        state.mark_dirty(["notes/a.md"])
    else:
        state.mark_stale()
    assert state.marked() and state.stale() is stale
    state.clear_dirty()
    state.clear_stale()
    assert not state.marked()


def test_mark_stale_replaces_a_symlink_instead_of_writing_through_it(state: IndexState, tmp_path: Path) -> None:
    """A ``stale`` that is a link (a copied vault) is replaced, and its target left alone."""
    victim = tmp_path / "victim"
    victim.write_text("precious")
    state.dir.mkdir()
    (state.dir / "stale").symlink_to(victim)
    state.mark_stale()
    assert state.stale() and not (state.dir / "stale").is_symlink()
    assert victim.read_text() == "precious"


# -- the writer lock -------------------------------------------------------------------------------


def test_writer_lock_is_reentrant_in_one_object(state: IndexState) -> None:
    """Nested holds in one IndexState do not wait on themselves; the lock is held until the outer ends."""
    with state.writer_lock():
        with state.writer_lock(timeout=0):
            assert state.locked_here
        assert state.locked_here
        assert (state.dir / "lock").read_text() == str(os.getpid())
    assert not state.locked_here


def test_a_second_state_on_the_same_folder_gets_lock_held_naming_the_pid(state: IndexState) -> None:
    """Another IndexState is another writer: refused at once with timeout 0, then free after release."""
    other = IndexState(state.root, lock_timeout=30.0)
    with state.writer_lock():
        started = time.monotonic()
        with pytest.raises(LockHeld, match=rf"Another mdmem process \(pid {os.getpid()}\) is writing the index of"):
            with other.writer_lock(timeout=0):
                pass
        assert time.monotonic() - started < 5
        assert not other.locked_here
    with other.writer_lock(timeout=0):
        assert other.locked_here


def test_writer_lock_waits_the_state_lock_timeout(state: IndexState) -> None:
    """Without a timeout argument a writer waits ``lock_timeout`` seconds before giving up."""
    other = IndexState(state.root, lock_timeout=0.3)
    with state.writer_lock():
        started = time.monotonic()
        with pytest.raises(LockHeld):
            with other.writer_lock():
                pass
        assert time.monotonic() - started >= 0.3


def test_writer_lock_keeps_the_state_folder_out_of_git(state: IndexState) -> None:
    """Taking the lock makes .mdmem/ with a .gitignore that ignores everything in it."""
    with state.writer_lock():
        pass
    assert (state.dir / ".gitignore").read_text().splitlines()[-1] == "*"


def test_a_symlinked_state_folder_is_refused(state: IndexState, tmp_path: Path) -> None:
    """.mdmem as a link would send index writes out of the vault: refused, and nothing written there."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    state.dir.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(MdmemError, match="symbolic link"):
        with state.writer_lock():
            pass
    with pytest.raises(MdmemError, match="symbolic link"):
        state.mark_stale()
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("name", ["lock", "catalog-link", ".gitignore"])
def test_writer_lock_never_writes_through_a_link_in_the_state_folder(
    state: IndexState, tmp_path: Path, name: str
) -> None:
    """Links in .mdmem/ (mdmem makes none) are removed, their targets untouched."""
    victim = tmp_path / "victim"
    victim.write_text("precious")
    state.dir.mkdir()
    (state.dir / name).symlink_to(victim)
    with state.writer_lock():
        pass
    assert victim.read_text() == "precious"
    assert not any(p.is_symlink() for p in state.dir.iterdir())


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), "disk full"),
        (OSError(errno.EROFS, "Read-only file system"), "read-only file system"),
    ],
)
def test_writer_lock_turns_a_refused_disk_write_into_one_line(state: IndexState, error: OSError, words: str) -> None:
    """A full or read-only disk under the lock is IndexNotWritten saying what to do."""
    with pytest.raises(IndexNotWritten, match=f"{words}.*Notes on disk are untouched"):
        with state.writer_lock():
            raise error


def test_writer_lock_lets_other_errors_through(state: IndexState) -> None:
    """Anything that is not a disk error keeps its type (and the lock is released)."""
    with pytest.raises(KeyError):
        with state.writer_lock():
            raise KeyError("x")
    assert not state.locked_here
    with IndexState(state.root, lock_timeout=0.0).writer_lock(timeout=0):
        pass


# -- tidy, size, serve.json ------------------------------------------------------------------------


def test_tidy_removes_what_a_killed_writer_left(state: IndexState) -> None:
    """Other generations and temp files go; the manifest and the current generation stay."""
    gen = built(state)
    leftover = state.new_generation()
    for tmp in (state.dir / ".manifest.json.0123abcd.tmp", state.dir / gen / ".x.0123abcd.tmp"):
        tmp.write_text("partial")
    state.tidy()
    assert sorted(p.name for p in state.dir.glob("gen-*")) == [gen] and leftover != gen
    assert not list(state.dir.rglob("*.tmp"))
    assert state.rebuild_reason(EXPECTED) is None


def test_writes_without_the_lock_survive_a_tidy_running_beside_them(state: IndexState) -> None:
    """A read records notes to compare one by one without the writer lock while the lock's holder tidies
    temp files away: every write still lands, whole (CI saw ``os.replace`` fail on a temp just removed)."""
    import threading

    gen = built(state)
    state.record_folders(gen, {"": 1}, 1)
    stop = threading.Event()
    tidies = 0

    def tidy() -> None:
        nonlocal tidies
        while not stop.is_set():
            state.tidy()
            tidies += 1

    tidier = threading.Thread(target=tidy)
    tidier.start()
    try:
        for i in range(300):
            state.add_one_by_one(gen, [f"notes/n{i}.md"])
            assert state.write_json("review-count.json", {"n": i})
    finally:
        stop.set()
        tidier.join()
    assert tidies > 0
    assert state.one_by_one(gen) == sorted(f"notes/n{i}.md" for i in range(300))
    assert state.read_json("review-count.json") == {"n": 299}
    assert not list(state.dir.glob(".*.tmp"))


def test_tidy_without_a_usable_manifest_removes_nothing(state: IndexState) -> None:
    """With no generation named there is nothing to tell leftovers by: every folder stays."""
    gen = built(state)
    state.manifest_path.unlink()
    state.tidy()
    assert [p.name for p in state.dir.glob("gen-*")] == [gen]


def test_size_bytes_counts_every_file_in_the_state_folder(state: IndexState) -> None:
    """The size is the sum of the files, in subfolders too."""
    assert state.size_bytes() == 0
    gen = state.new_generation()
    (state.dir / "a").write_bytes(b"x" * 10)
    (state.dir / gen / "b").write_bytes(b"y" * 5)
    assert state.size_bytes() == 15


def write_serve(state: IndexState, info: object) -> None:
    state.dir.mkdir(exist_ok=True)
    (state.dir / "serve.json").write_text(json.dumps(info))


def test_server_info_of_a_live_process_is_its_file(state: IndexState) -> None:
    """A serve.json whose pid runs, sealed with this user's key for this vault, is the server's address."""
    from mdmem.index.state import server_seal

    info: dict[str, object] = {"pid": os.getpid(), "port": 5000, "token": "t", "vault": str(state.root.resolve())}
    info["seal"] = server_seal(info)
    write_serve(state, info)
    assert server_info(state.root) == info


def test_server_info_of_a_dead_process_is_none(state: IndexState) -> None:
    """A serve.json left by a server that died does not count as a server."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    write_serve(state, {"pid": int(proc.stdout), "port": 5000, "token": "t"})
    assert server_info(state.root) is None


@pytest.mark.parametrize("content", [None, "{not json", "[1]", '{"port": 5000}', '{"pid": "x"}'])
def test_server_info_without_a_readable_file_is_none(state: IndexState, content: str | None) -> None:
    """No file, or one that is not a server's, is no server."""
    if content is not None:
        state.dir.mkdir()
        (state.dir / "serve.json").write_text(content)
    assert server_info(state.root) is None
