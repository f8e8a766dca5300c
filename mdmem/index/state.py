"""``.mdmem/`` on disk: the manifest and its seal, the writer lock, the marks a writer leaves, tidying.

The manifest names the current index generation (``gen-*/``: the catalogue, the BM25 index, the
vectors). A rebuild writes a new generation beside the old one and switches the manifest to it
atomically, so readers never see a half-built index. Two marks record unfinished work: ``dirty``
(the paths a writer is about to change, written before it touches anything and removed when it is
done: a kill -9 or a full disk leaves it behind) and ``stale`` (a git hook could not update the index).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..adapters.locks import flock_within
from ..adapters.plain import open_plain, read_plain
from ..core.errors import LockHeld, MdmemError, write_failure
from . import served
from .served import SERVE_FILE as SERVE_FILE  # defined where the served prompt hook reads them
from .served import STATE_DIR

JOB_MARK, JOB_QUEUED, JOB_RUNNING = "catchup", "catchup.queued", "catchup.running"
JOB_HOOK = "catch-up"  # ``reindex --git-hook catch-up``: the background job (githook.py)
EMBED_HOOK = "embed"  # ``reindex --git-hook embed``: the background embedding job, a sibling with its own files
JOB_FILES = {JOB_HOOK: (JOB_MARK, JOB_QUEUED, JOB_RUNNING), EMBED_HOOK: ("embed", "embed.queued", "embed.running")}
JOB_FD_ENV = "MDMEM_JOB_FD"  # the queued lock's file descriptor, handed from the hook to its job
TREE_FILE = "folders.json"  # the note folders' mtimes at the last whole scan
RACY_NS = 50_000_000  # a folder changed this close to the stamp may have changed again unseen (coarse clocks)


class IndexState:
    """The ``.mdmem/`` folder of one vault."""

    def __init__(self, root: Path, lock_timeout: float) -> None:
        self.root = root
        self.dir = root / STATE_DIR
        self.lock_timeout = lock_timeout
        self._lock_depth = 0

    # -- manifest --------------------------------------------------------------------------------

    @property
    def manifest_path(self) -> Path:
        return self.dir / "manifest.json"

    def manifest(self) -> dict[str, Any] | None:
        """The manifest, or None when missing or unreadable."""
        try:
            data = json.loads(read_plain(self.manifest_path, 1 << 20) or "")
            return data if isinstance(data, dict) else None
        except ValueError:
            return None

    def generation(self) -> str | None:
        """The generation the manifest names (None without a manifest)."""
        gen = (self.manifest() or {}).get("generation")
        return gen if isinstance(gen, str) else None

    def rebuild_reason(self, expected: dict[str, Any]) -> str | None:
        """Why the index must be rebuilt from scratch (``expected``: manifest keys such as the
        schema and engine version), or None if it is usable."""
        m = self.manifest()
        if m is None:
            return "no index yet" if not self.manifest_path.exists() else "manifest unreadable"
        for key, value in expected.items():
            if m.get(key) != value:
                return f"index {key} is {m.get(key)!r}, this mdmem needs {value!r}"
        gen = m.get("generation")
        if not isinstance(gen, str) or not re.fullmatch(r"gen-[\w-]+", gen):
            return "manifest unreadable"
        # Whoosh's files are pickles: opening an index this user did not build could run code.
        # A .mdmem/ that came with a clone or a copy has no valid seal and is rebuilt unopened.
        if not sealed_here(gen, str(m.get("seal", ""))):
            return "index not built here (a copied or cloned .mdmem/ is never opened)"
        if not (self.dir / gen / "catalog.sqlite").is_file():
            return "index files missing"
        return None

    def new_generation(self) -> str:
        """Make an empty generation folder beside the current one; returns its name."""
        gen = f"gen-{time.strftime('%Y%m%d%H%M%S')}-{os.urandom(3).hex()}"
        (self.dir / gen).mkdir(parents=True)
        return gen

    def switch(self, manifest: dict[str, Any]) -> None:
        """Write ``manifest`` (sealed with this user's key for the generation it names), then
        remove the other generations."""
        from ..adapters.files import atomic_write  # lazily: the prompt hook reads serve.json through this module

        generation = str(manifest["generation"])
        manifest = {**manifest, "seal": seal(generation)}
        atomic_write(self.manifest_path, json.dumps(manifest, indent=2) + "\n")
        self.remove_other_generations(generation)

    def remove_other_generations(self, keep: str) -> None:
        import shutil  # hmac and shutil load where they are used: serve.json readers need neither

        for old in self.dir.glob("gen-*"):
            if old.name != keep:
                shutil.rmtree(old, ignore_errors=True)

    def discard(self, generation: str) -> None:
        """Remove a generation that never became current (a failed rebuild leaves no gen-* behind)."""
        if self.generation() != generation:
            import shutil

            shutil.rmtree(self.dir / generation, ignore_errors=True)

    # -- marks -----------------------------------------------------------------------------------

    def marked(self) -> bool:
        """A hook could not update the index, or a writer died (or failed) half-way."""
        return (self.dir / "stale").exists() or (self.dir / "dirty").exists()

    def stale(self) -> bool:
        return (self.dir / "stale").exists()

    def dirty_paths(self) -> list[str] | None:
        """What a writer that did not finish was updating ("*": everything); None when no mark."""
        path = self.dir / "dirty"
        text = read_plain(path, 256 << 20)
        if text is None:  # missing; or a link, FIFO or device someone committed: redo everything
            return ["*"] if path.is_symlink() or path.exists() else None
        return text.splitlines()

    def mark_dirty(self, paths: list[str], *, replace: bool = False) -> None:
        """Record, before touching files or index, what is about to change (kill -9)."""
        self.dir.mkdir(exist_ok=True)
        fd = open_plain(self.dir / "dirty", truncate=replace)
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write("".join(f"{p}\n" for p in paths))

    def clear_dirty(self) -> None:
        (self.dir / "dirty").unlink(missing_ok=True)

    def clear_stale(self) -> None:
        (self.dir / "stale").unlink(missing_ok=True)

    def mark_stale(self) -> None:
        """Note that the files changed while the index could not be updated."""
        self.check_dir()
        self.dir.mkdir(exist_ok=True)
        stale = self.dir / "stale"
        if stale.is_symlink():
            stale.unlink()
        stale.touch()

    # -- the background catch-up job -------------------------------------------------------------
    #
    # A git operation that changes many notes (a checkout a year back, a big merge) is indexed by a
    # detached job, so git never waits for it. Three files in .mdmem/ coordinate the jobs:
    #   catchup          the request mark: a hook (or a read) asked for a catch-up. It stays until a
    #                    job has finished one whole pass begun after the last request, so a killed job
    #                    leaves it behind and the next read or hook finishes the work.
    #   catchup.queued   flock held by the one job that has not started its pass yet. A hook starts a
    #                    job only if it can take this lock (it hands the lock to the child), so at most
    #                    one job waits; a later hook's change is seen by that waiting job.
    #   catchup.running  flock held by the job doing a pass. The queued job waits for it, then releases
    #                    "queued" before it reads anything: a hook after that starts one new follow-up.
    # The embedding job (``kind`` EMBED_HOOK: chunks without vectors) has the same three files
    # of its own (embed, embed.queued, embed.running), so a long embedding never holds back the catch-up
    # of a commit's notes, and reads do not say "catching up" while only vectors are missing.

    def job_request(self, kind: str = JOB_HOOK) -> dict[str, Any] | None:
        """The job's request mark (why, when, token), or None when none is pending."""
        path = self.dir / JOB_FILES[kind][0]
        text = read_plain(path, 64 << 10)
        if text is None:
            return {} if path.is_symlink() or path.exists() else None  # a link or a FIFO: still a request
        try:
            data = json.loads(text)
            return data if isinstance(data, dict) else {}
        except ValueError:
            return {}  # half-written or damaged: still a request

    def request_job(self, why: str, kind: str = JOB_HOOK) -> bool:
        """Record a request for the ``kind`` job and start one unless one is already waiting to start
        (that one will see this change). Returns whether a job process was started. Never waits."""
        import subprocess
        import sys

        self.check_dir()
        self.dir.mkdir(exist_ok=True)
        self._ensure_gitignore()
        name, queued, _ = JOB_FILES[kind]
        # Not ".tmp": tidy() removes those under the writer lock, which this hook does not hold. No fsync:
        # a lost mark costs nothing, the reads' HEAD and folder check finds the change anyway (and the
        # chunks without vectors are in the catalogue).
        tmp = self.dir / f".{name}.{os.urandom(4).hex()}.new"
        tmp.write_text(json.dumps({"why": why, "since": time.time(), "token": os.urandom(8).hex()}) + "\n")
        os.replace(tmp, self.dir / name)
        fd = _open_lock(self.dir / queued)
        try:
            if not _try_flock(fd):
                return False  # a job waits to start: it reads the state after this request
            _reap()
            with open(open_plain(self.dir / f"{name}.log", log=True), "ab") as log:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "mdmem", "--vault", str(self.root), "reindex", "--git-hook", kind],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    start_new_session=True,
                    pass_fds=(fd,),
                    env={**os.environ, JOB_FD_ENV: str(fd)},
                )
            proc.returncode = 0  # detached, never waited for: _reap() collects it, Popen.__del__ need not warn
            _JOBS.append(proc.pid)
            return True  # the child holds the queued lock now (the same open file), until it starts its pass
        finally:
            os.close(fd)

    def job_active(self, kind: str = JOB_HOOK) -> bool:
        """Whether a ``kind`` job is running or waiting to start (tests the locks without keeping them)."""
        _, queued, running = JOB_FILES[kind]
        for name in (running, queued):
            fd = _open_lock(self.dir / name)
            try:
                if not _try_flock(fd):
                    return True
            finally:
                os.close(fd)  # releases the test lock at once
        return False

    @contextmanager
    def job_slot(self, wait: bool = True, kind: str = JOB_HOOK) -> Iterator[bool]:
        """Hold the running lock for one job's passes (yields False when ``wait`` is off and another job
        runs). The queued lock this process inherited from the hook (``MDMEM_JOB_FD``) is released once
        the running lock is held, before the job reads anything."""
        import fcntl

        self.check_dir()
        self.dir.mkdir(exist_ok=True)
        fd = _open_lock(self.dir / JOB_FILES[kind][2])
        try:
            if wait:
                fcntl.flock(fd, fcntl.LOCK_EX)
            elif not _try_flock(fd):
                yield False
                return
            inherited = os.environ.pop(JOB_FD_ENV, None)
            if inherited and inherited.isdigit():
                try:
                    os.close(int(inherited))
                except OSError:
                    pass
            yield True
        finally:
            os.close(fd)

    def finish_job(self, token: str | None, kind: str = JOB_HOOK) -> bool:
        """After a pass: remove the request mark if no new request came since the pass began (``token``:
        the mark's token then). False: a request came meanwhile, so do another pass."""
        now = self.job_request(kind)
        if now is None:
            return True
        if now.get("token") != token:
            return False
        (self.dir / JOB_FILES[kind][0]).unlink(missing_ok=True)
        return True

    # -- what no hook reports: the folders' stamps ------------------------------------------------

    def folders_changed(self, generation: str, *, dirs: bool = True) -> bool:
        """Whether a note folder changed since the index last compared every file (a note added,
        removed or renamed; git's checkout, reset and stash replace files, so they show here too), or
        ``mdmem.toml`` did (what is a note may have changed). One stat per folder; an edit that
        rewrites a file in place does not change its folder (``Indexer.edited`` sees those).
        ``dirs`` False: the record and ``mdmem.toml`` alone (a process whose folder watch names every
        file added, removed or renamed needs no folder's mtime)."""
        try:
            data = self._folders()
            if data.get("generation") != generation or data.get("config") != self.config_stamp():
                return True
            if "one_by_one" not in data:  # recorded by an older mdmem, which compared fewer notes one by one
                return True
            if not dirs:
                return False
            racy = int(data["taken"]) - RACY_NS
            for rel, mtime in data["dirs"].items():
                now = os.stat(self.root / rel if rel else self.root).st_mtime_ns
                if now != mtime or now >= racy:  # changed, or too close to the stamp to tell
                    return True
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return True
        return False

    def _folders(self) -> dict[str, Any]:
        data = json.loads(read_plain(self.dir / TREE_FILE, 256 << 20) or "")
        if not isinstance(data, dict):
            raise ValueError("not an object")
        return data

    def one_by_one(self, generation: str) -> list[str]:
        """The notes git's comparison of files cannot vouch for, each compared on its own before reads:
        those git's index did not hold at the last whole scan, and those that differed from HEAD then or
        since (saved back to HEAD's text, git lists them no more once its index is refreshed)."""
        try:
            data = self._folders()
            found = data.get("one_by_one") if data.get("generation") == generation else None
            return [p for p in found if isinstance(p, str)] if isinstance(found, list) else []
        except (OSError, ValueError):
            return []

    def add_one_by_one(self, generation: str, paths: list[str]) -> None:
        """Add ``paths`` to ``one_by_one`` until the next whole scan (nothing without a scan's record)."""
        from ..adapters.files import atomic_write

        try:
            data = self._folders()
        except (OSError, ValueError):
            return
        if data.get("generation") != generation:
            return
        data["one_by_one"] = sorted({*self.one_by_one(generation), *paths})
        try:
            atomic_write(self.dir / TREE_FILE, json.dumps(data))
        except OSError:
            pass  # disk full: a read still answers; a note then saved back to HEAD's text waits for a whole scan

    def stamp(self, *also: Path) -> str | None:
        """A digest of the current generation's BM25 and vector files (name, size, mtime) and of ``also``:
        any write to the index (a note, a link, vectors arriving) changes it. None without a generation."""
        import hashlib

        gen = self.generation()
        if gen is None:
            return None
        seen = [gen]
        for folder in (self.dir / gen, self.dir / gen / "lexical"):
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for e in entries:
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                # Not the catalogue: SQLite checkpoints its log into it when a reader closes. Every note
                # written is written to the BM25 index too, and vectors to their own file.
                if not e.is_dir(follow_symlinks=False) and not e.name.startswith(("catalog.", "notes_WRITELOCK")):
                    seen.append(f"{e.name}:{st.st_size}:{st.st_mtime_ns}")
        for path in also:
            try:
                st = os.stat(path)
                seen.append(f"{path.name}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                seen.append(f"{path.name}:-")
        return hashlib.sha1("\n".join(seen).encode()).hexdigest()[:16]

    def read_json(self, name: str) -> dict[str, Any] | None:
        """A small state file of ``.mdmem/`` (``name``), or None when missing or unreadable."""
        try:
            data = json.loads(read_plain(self.dir / name, 1 << 20) or "")
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def write_json(self, name: str, data: dict[str, Any]) -> bool:
        """Replace the state file ``name`` atomically; False (nothing written) when it cannot be."""
        from ..adapters.files import atomic_write

        if self.dir.is_symlink() or not self.dir.is_dir():  # never through a link someone committed
            return False
        try:
            atomic_write(self.dir / name, json.dumps(data))
        except OSError:
            return False
        return True

    def config_stamp(self) -> list[int] | None:
        """``mdmem.toml``'s (mtime, size, inode), or None without one: its edits are what a whole scan follows."""
        from ..adapters.config import CONFIG_FILE

        try:
            st = os.stat(self.root / CONFIG_FILE)
        except OSError:
            return None
        return [st.st_mtime_ns, st.st_size, st.st_ino]

    def record_folders(
        self,
        generation: str,
        dirs: dict[str, int],
        taken: int,
        *,
        one_by_one: list[str] | None = None,
        config: list[int] | None = None,
    ) -> None:
        """Remember the folders' mtimes (taken before a whole scan that the index now matches), the notes
        to compare one by one (``one_by_one``), and the stat of the ``mdmem.toml`` the scan followed."""
        from ..adapters.files import atomic_write

        atomic_write(
            self.dir / TREE_FILE,
            json.dumps(
                {
                    "generation": generation,
                    "taken": taken,
                    "dirs": dirs,
                    "config": config,
                    "one_by_one": one_by_one or [],
                }
            ),
        )

    # -- the writer lock -------------------------------------------------------------------------

    @property
    def locked_here(self) -> bool:
        """Whether this object holds the writer lock now."""
        return self._lock_depth > 0

    @contextmanager
    def writer_lock(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the one-writer lock on ``.mdmem/``; wait up to ``timeout`` seconds for it.

        A write the disk refuses under the lock (full, read-only, I/O error) becomes one
        ``IndexNotWritten`` line instead of a traceback from whichever store hit it. What follows a
        write once the lock is released is the indexer's (``Indexer.writer_lock``).
        """
        try:
            with self._lock(timeout):
                yield
        except Exception as exc:
            err = write_failure(exc, self.dir)
            if err is None:
                raise
            raise err from exc

    @contextmanager
    def _lock(self, timeout: float | None) -> Iterator[None]:
        if self._lock_depth:  # re-entrant: this vault already holds it
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        self.check_dir()
        self.dir.mkdir(exist_ok=True)
        self._ensure_gitignore()
        limit = self.lock_timeout if timeout is None else timeout
        lock = self.dir / "lock"
        if lock.is_symlink():
            lock.unlink()  # truncating a link's target would write outside the vault
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            if not flock_within(fd, limit):
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
                raise LockHeld(
                    f"Another mdmem process (pid {holder}) is writing the index of {self.root}. "
                    "Wait for it to finish and retry; if none is running, the lock frees itself."
                )
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            self._drop_links()
            self._lock_depth = 1
            try:
                yield
            finally:
                self._lock_depth = 0
        finally:
            os.close(fd)  # closing releases the flock, also when the process dies

    def check_dir(self) -> None:
        """Refuse a ``.mdmem`` that is a symbolic link: index writes would land outside the vault."""
        if self.dir.is_symlink():
            raise MdmemError(
                f"{self.dir} is a symbolic link; mdmem writes its index only inside the vault. "
                "Remove the link (the index is rebuilt by the next command)."
            )

    def _drop_links(self) -> None:
        """Remove symbolic links in ``.mdmem/`` (mdmem makes none; a cloned or copied vault could
        carry some, and writing the catalogue, cache or stale mark through one leaves the vault)."""
        for entry in os.scandir(self.dir):
            if entry.is_symlink():
                os.unlink(entry.path)

    def _ensure_gitignore(self) -> None:
        """Keep ``.mdmem/`` out of git even in a vault that was never ``init``-ed."""
        inner = self.dir / ".gitignore"
        if inner.is_symlink():
            inner.unlink()
        if not inner.exists():
            inner.write_text("# derived index; rebuild with: mdmem reindex --full\n*\n")

    # -- tidying ---------------------------------------------------------------------------------

    def tidy(self) -> None:
        """Under the writer lock: remove what a killed or failed writer left in ``.mdmem/``.

        Temp files in ``.mdmem/`` and in the current generation (not one a live write holds: some are
        written without this lock), and generations the manifest does not name (a half-built rebuild,
        or an old one a killed rebuild did not remove).
        """
        from ..adapters.files import remove_leftover

        gen = self.generation()
        if gen is not None and (self.dir / gen).is_dir():
            self.remove_other_generations(gen)
            for tmp in (*self.dir.glob(".*.tmp"), *(self.dir / gen).glob(".*.tmp")):
                remove_leftover(tmp)

    def size_bytes(self) -> int:
        """Bytes the whole ``.mdmem/`` folder takes."""
        total = 0
        for dirpath, _, files in os.walk(self.dir):
            for f in files:
                try:
                    total += os.path.getsize(os.path.join(dirpath, f))
                except OSError:
                    pass
        return total


def server_info(root: Path) -> dict[str, Any] | None:
    """The running ``mdmem serve``'s address and token (``SERVE_FILE``), or None if none is running.

    Only a file this user's mdmem wrote for this vault counts: sealed with the machine key (as the
    manifest is) over its pid, port, token and vault, and its pid alive. A ``serve.json`` that came
    with a clone names no server (it made ``status`` show one, and ``serve --stop`` signal its pid;
    stopping also asks the server who it is first: ``edges.serve.prove``)."""
    return served.server_info(root, machine_key())


def server_seal(info: dict[str, Any], key: bytes | None = None) -> str:
    """The seal of a server's ``serve.json`` (its pid, port, token and vault) under this user's key."""
    return served.server_seal(info, key or machine_key())


def hmac_equal(stamp: str, expected: str) -> bool:
    import hmac

    return hmac.compare_digest(stamp.encode(), expected.encode())


# -- the seal ------------------------------------------------------------------------------------

_KEYS: dict[Path, bytes] = {}


def machine_key() -> bytes:
    """This user's secret for sealing index manifests, made on first use (mode 0600).

    Kept outside every vault ($MDMEM_HOME, else ~/.local/state/mdmem), so a vault's own files
    cannot forge it. Without a writable home, a per-process key: the index is rebuilt each run.
    """
    path = Path(served.key_path())
    home = path.parent
    if path in _KEYS:
        return _KEYS[path]
    try:
        if not path.is_file():
            home.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = home / f".index.key.{os.urandom(4).hex()}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(os.urandom(32).hex() + "\n")
            try:
                os.link(tmp, path)  # another process may have made one meanwhile: theirs wins
            except FileExistsError:
                pass
            finally:
                tmp.unlink()
        key = bytes.fromhex(path.read_text().strip())
    except (OSError, ValueError):
        key = os.urandom(32)
    _KEYS[path] = key
    return key


def seal(generation: str, key: bytes | None = None) -> str:
    """The manifest's seal for ``generation`` under ``key`` (default: this user's key)."""
    import hmac

    return hmac.new(key or machine_key(), f"mdmem index {generation}".encode(), "sha256").hexdigest()


def sealed_here(generation: str, stamp: str) -> bool:
    """Whether ``stamp`` was made with this user's key (or another key this process already read:
    $MDMEM_HOME/HOME may change within one process, e.g. under tests)."""
    import hmac

    keys = [*_KEYS.values()] or [machine_key()]
    if any(hmac.compare_digest(stamp, seal(generation, k)) for k in keys):
        return True
    return hmac.compare_digest(stamp, seal(generation))


_JOBS: list[int] = []  # jobs this process started (a hook exits at once; a long-lived process reaps them)


def _reap() -> None:
    """Collect the jobs this process started that have exited (no zombies in ``serve`` or the tests)."""
    for pid in list(_JOBS):
        try:
            done = os.waitpid(pid, os.WNOHANG)[0] != 0
        except ChildProcessError:
            done = True
        if done:
            _JOBS.remove(pid)


def _open_lock(path: Path) -> int:
    if path.is_symlink():
        path.unlink()  # never lock (or create) a file outside the vault
    return os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)


def _try_flock(fd: int) -> bool:
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
