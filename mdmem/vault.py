"""Vault: the one orchestrator. Reads files, calls the pure parsers, drives the index adapters."""

from __future__ import annotations

import datetime as dt
import difflib
import fnmatch
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import __version__
from .config import CONFIG_FILE, Config, load_config
from .errors import AmbiguousNote, IndexNotWritten, LockHeld, MdmemError, NoteNotFound, VaultNotFound, write_failure
from .note import Note, Problem, iso_to_timestamp, parse_note, render_note, to_iso

if TYPE_CHECKING:
    from .graph import Graph
    from .hybrid import Candidate, EmbedReport, Semantic
    from .index.catalog import Catalog, FileState
    from .index.lexical import LexicalIndex
    from .rank import Filters

STATE_DIR = ".mdmem"
SCHEMA_VERSION = 4  # 2: chunks for vectors; 3: visibility, link targets; 4: visibility mask fields
MAX_INDEXED_BYTES = 4 * 1024 * 1024  # text beyond this is not indexed (the file is untouched)
# write_file's temp names: ".NAME.<8 hex>.tmp" beside the note (hidden, so the scan skips them)
TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.[0-9a-f]{8}\.tmp$")

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: a note, its score and the passage that matched."""

    id: str
    path: str
    title: str
    score: float
    snippet: str = ""
    type: str = "note"
    tags: list[str] = field(default_factory=list)
    scope: str = "global"
    date: str | None = None
    explain: dict[str, Any] | None = None
    links: list[dict[str, Any]] | None = None  # connection hints: a few typed neighbours to follow

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("explain", "links"):
            if d[key] is None:
                del d[key]
        return d


@dataclass(slots=True)
class ReindexReport:
    """What a reindex did."""

    full: bool = False
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    commit: str | None = None
    reason: str = ""

    @property
    def changed(self) -> int:
        return len(self.added) + len(self.updated) + len(self.deleted)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["problems"] = [asdict(p) for p in self.problems]
        return d


@dataclass(frozen=True, slots=True)
class AddResult:
    """The note ``add`` wrote."""

    id: str
    path: str
    title: str
    commit: str | None


class Vault:
    """A folder of markdown notes and its sidecar index in ``.mdmem/``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.state = root / STATE_DIR
        self.config: Config = load_config(root)
        self._catalog: Catalog | None = None
        self._lexical: LexicalIndex | None = None
        self._generation: str | None = None
        self._semantic: Semantic | None = None
        self._lock_depth = 0
        self.last_info: dict[str, Any] = {}  # what the last vsearch/query did (coverage, stages)
        # Things that went wrong after the work was done (a commit git refused); the CLI prints
        # them to stderr, MCP adds them to the tool result (issue 7).
        self.warnings: list[str] = []
        self.index_warning: str | None = None  # why reads answered from an index that could not be refreshed
        self._graph_cache: Any = None  # (catalog, change token, Graph): see connect.load_graph

    # -- opening -------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Vault:
        """Open the vault whose root is ``path`` (any folder of notes can be a vault)."""
        root = Path(path).expanduser()
        if not root.is_dir():
            raise VaultNotFound(f"No folder at {root}. Create one with \"mdmem init {root}\".")
        return cls(root.resolve())

    @classmethod
    def discover(cls, start: str | os.PathLike[str] | None = None) -> Vault:
        """The vault containing ``start`` (default: the current directory), found by walking up."""
        here = Path(start or os.getcwd()).expanduser().resolve()
        for p in (here, *here.parents):
            if (p / CONFIG_FILE).is_file() or (p / STATE_DIR).is_dir():
                return cls(p)
        raise VaultNotFound(
            f"No mdmem vault at or above {here}. Run \"mdmem init PATH\" to make one, "
            "or pass --vault PATH (or set MDMEM_VAULT)."
        )

    def close(self) -> None:
        """Release index handles (the vault can be used again afterwards)."""
        if self._semantic is not None:
            self._semantic.close()
        if self._lexical is not None:
            self._lexical.close()
        if self._catalog is not None:
            self._catalog.close()
        self._lexical = self._catalog = None
        self._generation = None

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- files ---------------------------------------------------------------------------------

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def safe_path(self, rel: str) -> Path:
        """The absolute path of a vault-relative path; refuses anything that leaves the vault."""
        p = (self.root / rel).resolve()
        if p != self.root and self.root not in p.parents:
            raise MdmemError(f"{rel!r} is outside the vault {self.root}; use a path inside it.")
        return p

    def _excluded(self, rel: str) -> bool:
        return any(fnmatch.fnmatch(rel, pat) for pat in self.config.exclude)

    def scan(self) -> dict[str, os.stat_result]:
        """Every note file: vault-relative path → stat. Hidden folders and excludes are skipped;
        symlinks are followed only when they stay inside the vault."""
        found: dict[str, os.stat_result] = {}
        root = str(self.root)
        cut = len(root) + 1
        exclude = self.config.exclude
        stack = [root]
        while stack:
            directory = stack.pop()
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            for entry in entries:
                name = entry.name
                if name[0] == ".":
                    continue
                try:
                    if entry.is_symlink():
                        target = Path(entry.path).resolve()
                        if self.root not in target.parents:
                            continue  # never follow a link out of the vault
                        if _hidden(target.relative_to(self.root).as_posix()):
                            continue  # nor into .git/, .mdmem/ (tokens, remote URLs) or other hidden folders
                        if entry.is_dir():
                            continue  # linked folders could loop; their notes are found directly
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif name[-3:].lower() == ".md" and entry.is_file():
                        rel = entry.path[cut:].replace(os.sep, "/")
                        if not (exclude and self._excluded(rel)):
                            found[rel] = entry.stat()
                except OSError:
                    continue
        return found

    def read_note(self, rel: str) -> tuple[Note, str, bytes]:
        """Parse one file. Returns the note, its content hash and raw bytes. Never raises on content."""
        path = self.safe_path(rel)
        if _hidden(self.rel(path)) and not _hidden(rel):
            raise MdmemError(f"{rel!r} links into a hidden folder ({self.rel(path)}); mdmem does not read "
                             "notes there. Link to a note outside hidden folders.")
        raw = path.read_bytes()
        digest = hashlib.blake2b(raw, digest_size=16).hexdigest()
        extra: list[Problem] = []
        if b"\x00" in raw[:8192]:
            extra.append(Problem(rel, "file", "looks like a binary file, not markdown", "move it out of the vault"))
            text = ""
        else:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                extra.append(Problem(rel, "encoding", f"not valid UTF-8 (byte {exc.start}); "
                                     "unreadable bytes were replaced", "save the file as UTF-8"))
                text = raw.decode("utf-8", errors="replace")
        if len(text) > MAX_INDEXED_BYTES:
            extra.append(Problem(rel, "file", f"{len(raw)} bytes; only the first "
                                 f"{MAX_INDEXED_BYTES // 1048576} MB are indexed", "split the note"))
            text = text[:MAX_INDEXED_BYTES]
        note = parse_note(text, rel)
        note.problems = extra + note.problems
        return note, digest, raw

    def write_file(self, rel: str, text: str, *, exclusive: bool = False) -> Path:
        """Write a note atomically (temp file + fsync + rename); ``exclusive`` refuses to overwrite.

        Call it under the writer lock and follow it with ``_update``: the path is marked dirty
        first, so if the process dies before the index has the note, the next command indexes it.
        """
        path = self.safe_path(rel)
        self._mark_dirty([rel])
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            with open(tmp, "x", encoding="utf-8", newline="") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            if exclusive:
                os.link(tmp, path)  # fails if the path appeared meanwhile; never clobbers
                tmp.unlink()
            else:
                os.replace(tmp, path)
        finally:
            if tmp.exists():
                tmp.unlink()
        return path

    # -- index state -----------------------------------------------------------------------------

    @property
    def manifest_path(self) -> Path:
        return self.state / "manifest.json"

    def manifest(self) -> dict[str, Any] | None:
        """The manifest, or None when missing or unreadable."""
        try:
            data = json.loads(self.manifest_path.read_text())
            return data if isinstance(data, dict) else None
        except (OSError, ValueError):
            return None

    def _expected_manifest(self) -> dict[str, Any]:
        from .index.lexical import engine_version

        return {"schema": SCHEMA_VERSION, "engine": engine_version()}

    def _rebuild_reason(self) -> str | None:
        """Why the index must be rebuilt from scratch, or None if it is usable."""
        m = self.manifest()
        if m is None:
            return "no index yet" if not self.manifest_path.exists() else "manifest unreadable"
        expected = self._expected_manifest()
        for key, value in expected.items():
            if m.get(key) != value:
                return f"index {key} is {m.get(key)!r}, this mdmem needs {value!r}"
        gen = m.get("generation")
        if not isinstance(gen, str) or not re.fullmatch(r"gen-[\w-]+", gen):
            return "manifest unreadable"
        # Whoosh's files are pickles: opening an index this user did not build could run code.
        # A .mdmem/ that came with a clone or a copy has no valid seal and is rebuilt unopened.
        if not _sealed_here(gen, str(m.get("seal", ""))):
            return "index not built here (a copied or cloned .mdmem/ is never opened)"
        if not (self.state / gen / "catalog.sqlite").is_file():
            return "index files missing"
        return None

    def _open_generation(self) -> None:
        """Point at the manifest's generation; its stores open lazily on first use."""
        gen = str((self.manifest() or {}).get("generation"))
        if self._generation != gen:
            self.close()
            self._generation = gen

    def current_generation(self) -> str:
        self.ensure_index()
        return str(self._generation)

    def _get_catalog(self) -> Catalog:
        if self._catalog is None:
            from .index.catalog import Catalog

            path = self.state / str(self._generation) / "catalog.sqlite"
            try:
                self._catalog = Catalog(path)
            except Exception as exc:  # WAL mode writes a -shm file even to read
                err = write_failure(exc, path)
                if err is None:
                    raise
                raise err from exc
        return self._catalog

    def _get_lexical(self) -> LexicalIndex:
        if self._lexical is None:
            from .index.lexical import LexicalIndex

            self._lexical = LexicalIndex(self.state / str(self._generation) / "lexical")
        return self._lexical

    @property
    def catalog(self) -> Catalog:
        """The note catalogue (built first if there is no index, rebuilt if its file is damaged)."""
        self.ensure_index()
        try:
            return self._get_catalog()
        except Exception as exc:
            if getattr(exc, "sqlite_errorname", "") not in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
                raise
            self._rebuild_damaged(exc)
            return self._get_catalog()

    @property
    def lexical(self) -> LexicalIndex:
        """The BM25 index (built first if there is no index)."""
        self.ensure_index()
        return self._get_lexical()

    def ensure_index(self) -> None:
        """Build the index if there is none (or it cannot be used); refresh if marked stale."""
        if self._generation is not None and self._generation == (self.manifest() or {}).get("generation"):
            if not self._marked():
                return
        if self._rebuild_reason() is not None or self._marked():
            try:
                self.reindex(wait=False)
            except LockHeld:
                if self._rebuild_reason() is not None:
                    raise
            except IndexNotWritten as exc:
                if self._rebuild_reason() is not None:
                    raise
                # The previous index still answers; the mark stays, so a later command catches up.
                self.index_warning = f"index not updated: {exc}"
        self._open_generation()

    def _marked(self) -> bool:
        """A hook could not update the index, or a writer died (or failed) half-way."""
        return (self.state / "stale").exists() or (self.state / "dirty").exists()

    def _dirty_paths(self) -> list[str] | None:
        """What a writer that did not finish was updating ("*": everything); None when no mark."""
        try:
            return (self.state / "dirty").read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return None

    def _mark_dirty(self, paths: list[str], *, replace: bool = False) -> None:
        """Record, before touching files or index, what is about to change (issue 7: kill -9)."""
        self.state.mkdir(exist_ok=True)
        with open(self.state / "dirty", "w" if replace else "a", encoding="utf-8") as fh:
            fh.write("".join(f"{p}\n" for p in paths))

    @contextmanager
    def writer_lock(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the one-writer lock on ``.mdmem/``; wait up to ``timeout`` seconds for it.

        A write the disk refuses under the lock (full, read-only, I/O error) becomes one
        ``IndexNotWritten`` line instead of a traceback from whichever store hit it.
        """
        try:
            with self._lock(timeout):
                yield
        except Exception as exc:
            err = write_failure(exc, self.state)
            if err is None:
                raise
            raise err from exc

    @contextmanager
    def _lock(self, timeout: float | None) -> Iterator[None]:
        import fcntl

        if self._lock_depth:  # re-entrant: this Vault already holds it
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        self._check_state_dir()
        self.state.mkdir(exist_ok=True)
        self._ensure_gitignore()
        limit = self.config.lock_timeout if timeout is None else timeout
        lock = self.state / "lock"
        if lock.is_symlink():
            lock.unlink()  # truncating a link's target would write outside the vault
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            deadline = time.monotonic() + limit
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
                        raise LockHeld(
                            f"Another mdmem process (pid {holder}) is writing the index of {self.root}. "
                            "Wait for it to finish and retry; if none is running, the lock frees itself."
                        ) from None
                    time.sleep(0.05)
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

    def _check_state_dir(self) -> None:
        """Refuse a ``.mdmem`` that is a symbolic link: index writes would land outside the vault."""
        if self.state.is_symlink():
            raise MdmemError(f"{self.state} is a symbolic link; mdmem writes its index only inside the vault. "
                             "Remove the link (the index is rebuilt by the next command).")

    def _drop_links(self) -> None:
        """Remove symbolic links in ``.mdmem/`` (mdmem makes none; a cloned or copied vault could
        carry some, and writing the catalogue, cache or stale mark through one leaves the vault)."""
        for entry in os.scandir(self.state):
            if entry.is_symlink():
                os.unlink(entry.path)

    def _ensure_gitignore(self) -> None:
        """Keep ``.mdmem/`` out of git even in a vault that was never ``init``-ed."""
        inner = self.state / ".gitignore"
        if inner.is_symlink():
            inner.unlink()
        if not inner.exists():
            inner.write_text("# derived index; rebuild with: mdmem reindex --full\n*\n")

    def mark_stale(self) -> None:
        """Note that the files changed while the index could not be updated."""
        self._check_state_dir()
        self.state.mkdir(exist_ok=True)
        stale = self.state / "stale"
        if stale.is_symlink():
            stale.unlink()
        stale.touch()

    # -- reindex ---------------------------------------------------------------------------------

    def reindex(self, full: bool = False, *, progress: Progress | None = None,
                wait: bool = True, timeout: float | None = None,
                only: list[str] | None = None, head: str | None = None) -> ReindexReport:
        """Bring the index up to date with the files.

        Args:
            full: rebuild from scratch instead of comparing content hashes.
            progress: called with (done, total) while notes are parsed.
            wait: wait for another writer (up to ``timeout`` or the configured lock timeout).
            only: vault-relative paths to refresh instead of scanning the whole vault.
            head: with ``only``, the commit those paths bring the index up to.
        """
        started = time.perf_counter()
        with self.writer_lock(timeout if wait else 0.0):
            report = self._update(full, progress, only)
            if head and only is not None and not report.full:
                self._get_catalog().set_meta("last_commit", head)
                report.commit = head
        report.seconds = time.perf_counter() - started
        return report

    def _update(self, full: bool, progress: Progress | None, only: list[str] | None) -> ReindexReport:
        """reindex() under the writer lock.

        The "dirty" mark is written first and removed last: if this process is killed (or the
        disk fills) in between, the next command sees the mark and finishes the job (issue 7).
        """
        pending = self._dirty_paths()
        self._tidy(pending or [])
        stale = self.state / "stale"
        if only is not None and (stale.exists() or (pending is not None and "*" in pending)):
            only = None  # changes nobody recorded (a hook that could not update, a killed run): compare all
        elif only is not None and pending:
            only = sorted({*only, *pending})  # notes a killed writer placed but did not index
        self._mark_dirty(["*"] if only is None else only, replace=True)
        stale.unlink(missing_ok=True)
        report = self._update_marked(full, progress, only)
        (self.state / "dirty").unlink(missing_ok=True)
        return report

    def _update_marked(self, full: bool, progress: Progress | None, only: list[str] | None) -> ReindexReport:
        reason = self._rebuild_reason()
        if reason is None and not full:
            try:
                return self._incremental(progress, only)
            except MdmemError:
                raise
            except Exception as exc:  # an unreadable index is rebuilt, never trusted
                if write_failure(exc, self.state) is not None:
                    raise  # a full disk: a rebuild would need more space still
                report = self._full(progress)
                report.reason = f"index unreadable ({type(exc).__name__}: {exc}); rebuilt"
                return report
        report = self._full(progress)
        report.reason = "requested" if full and reason is None else (reason or "")
        return report

    def _tidy(self, pending: list[str]) -> None:
        """Under the writer lock: remove what a killed or failed writer left behind.

        Temp files in ``.mdmem/`` and in the current generation, generations the manifest does
        not name (a half-built rebuild, or an old one a killed rebuild did not remove), and a
        note's temp file when it is a second name of the note already in place (killed between
        link and unlink). A temp file that never reached its place is kept: ``doctor`` names it.
        """
        gen = (self.manifest() or {}).get("generation")
        if isinstance(gen, str) and (self.state / gen).is_dir():
            for d in self.state.glob("gen-*"):
                if d.name != gen:
                    shutil.rmtree(d, ignore_errors=True)
            for tmp in (*self.state.glob(".*.tmp"), *(self.state / gen).glob(".*.tmp")):
                tmp.unlink(missing_ok=True)
        import glob

        for rel in pending:
            if rel == "*":
                continue
            try:
                path = self.safe_path(rel)
                for tmp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
                    if TEMP_NAME.match(tmp.name) and path.exists() and os.path.samefile(tmp, path):
                        tmp.unlink()
            except (OSError, MdmemError):
                continue

    def unfinished_writes(self) -> list[tuple[str, str]]:
        """(temp file, the note it was to become) for every note write a killed process left."""
        out = []
        for directory, dirs, files in os.walk(self.root):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in files:
                m = TEMP_NAME.match(name)
                if m and m["name"].lower().endswith(".md"):
                    tmp = Path(directory) / name
                    out.append((self.rel(tmp), self.rel(tmp.with_name(m["name"]))))
        return sorted(out)

    def _parse_many(self, paths: list[str], stats: dict[str, os.stat_result],
                    progress: Progress | None) -> list[tuple[Note, FileState, Any]]:
        return list(self._parse_stream(paths, stats, progress))

    def _parse_stream(self, paths: list[str], stats: dict[str, os.stat_result],
                      progress: Progress | None) -> Iterator[tuple[Note, FileState, Any]]:
        """Parse files in order. Many files are parsed in a second process while this one
        indexes (a full rebuild of 10k notes is ~25% parsing)."""
        from .index.catalog import FileState

        total = len(paths)
        if total >= PARALLEL_PARSE_MIN and (os.cpu_count() or 1) > 1:
            results: Iterator[tuple[str, Note | None, str]] = _parallel_parse(self.root, paths)
        else:
            results = ((rel, *_read_or_none(self, rel)) for rel in paths)
        for i, (rel, note, digest) in enumerate(results, 1):
            if progress and (i % 50 == 0 or i == total):
                progress(i, total)
            if note is None:
                continue  # vanished or unreadable since the scan; the next run sees it again
            st = stats[rel]
            yield note, FileState(digest, st.st_mtime_ns, st.st_size), st

    def _lexical_doc(self, note: Note, state: FileState, st: os.stat_result) -> Any:
        from .index.lexical import FOREVER, LexicalDoc

        date = iso_to_timestamp(note.date)
        until = iso_to_timestamp(note.valid_until)
        if until is not None and note.valid_until and len(note.valid_until) == 10:
            until += 86400  # a date-only valid_until holds through that whole day
        return LexicalDoc(
            path=note.path, id=note.id, title=note.title, aliases=" \n".join(note.aliases),
            entities=" \n".join(note.entities), tags=note.tags,
            headings=" \n".join(h.text for h in note.headings), body=note.text,
            type=note.type, scope=note.scope, status=note.status,
            date=date if date is not None else st.st_mtime, hash=state.hash,
            hide_until=iso_to_timestamp(note.snoozed_until) or 0.0,
            vfrom=iso_to_timestamp(note.valid_from) or 0.0,
            vuntil=until if until is not None else FOREVER,
        )

    def _full(self, progress: Progress | None) -> ReindexReport:
        """Build a new generation beside the current one, then switch the manifest to it."""
        self.close()
        gen = f"gen-{time.strftime('%Y%m%d%H%M%S')}-{secrets.token_hex(3)}"
        directory = self.state / gen
        directory.mkdir(parents=True)
        try:
            return self._build(gen, progress)
        except BaseException:
            self.close()
            if (self.manifest() or {}).get("generation") != gen:
                shutil.rmtree(directory, ignore_errors=True)  # a failed rebuild leaves no gen-* behind
            raise

    def _build(self, gen: str, progress: Progress | None) -> ReindexReport:
        from .index.catalog import Catalog
        from .index.lexical import LexicalIndex

        directory = self.state / gen
        stats = self.scan()
        parsed: list[tuple[Note, FileState, Any]] = []

        def docs() -> Iterator[Any]:
            for item in self._parse_stream(sorted(stats), stats, progress):
                parsed.append(item)
                yield self._lexical_doc(*item)

        lexical = LexicalIndex.create(directory / "lexical")
        lexical.write(docs(), (), bulk=True)
        lexical.close()
        catalog = Catalog(directory / "catalog.sqlite")
        try:
            catalog.apply(((n, s) for n, s, _ in parsed), ())
            commit = self._head()
            catalog.set_meta("last_commit", commit)
            catalog.set_meta("indexed_at", _now())
        finally:
            catalog.close()
        manifest = {**self._expected_manifest(), "generation": gen, "mdmem": __version__,
                    "created": _now(), "seal": _seal(gen)}
        _atomic_write(self.manifest_path, json.dumps(manifest, indent=2) + "\n")
        for old in self.state.glob("gen-*"):
            if old.name != gen:
                shutil.rmtree(old, ignore_errors=True)
        self._open_generation()
        return ReindexReport(full=True, added=[n.path for n, _, _ in parsed],
                             problems=[p for n, _, _ in parsed for p in n.problems], commit=commit)

    def _incremental(self, progress: Progress | None, only: list[str] | None) -> ReindexReport:
        self._open_generation()
        catalog, lexical = self._get_catalog(), self._get_lexical()
        lexical.doc_count()  # opening fails on a damaged index, which then gets rebuilt
        stamps = catalog.stamps()
        if only is None:
            stats = self.scan()
            gone = [p for p in stamps if p not in stats]
        else:
            stats, gone = {}, []
            for rel in only:
                p = self.safe_path(rel)
                if p.is_file():
                    stats[rel] = p.stat()
                elif rel in stamps:
                    gone.append(rel)
        candidates = [p for p, st in stats.items() if stamps.get(p) != (st.st_mtime_ns, st.st_size)]
        known = catalog.hashes(candidates)
        parsed = self._parse_many(sorted(candidates), stats, progress)
        # A note without a date of its own is dated by its file's mtime, so a new mtime is a change
        # even when the text is not (or the index would differ from --full; a reader can also stat a
        # file mid-write and see the final text with an earlier mtime).
        same = {n.path for n, s, _ in parsed if known.get(n.path) == s.hash and iso_to_timestamp(n.date) is not None}
        changed = [(n, s, st) for n, s, st in parsed if n.path not in same]
        touched = [(n.path, s) for n, s, _ in parsed if n.path in same]
        report = ReindexReport(
            added=[n.path for n, _, _ in changed if n.path not in known],
            updated=[n.path for n, _, _ in changed if n.path in known],
            deleted=sorted(gone), unchanged=len(stats) - len(changed),
            problems=[p for n, _, _ in changed for p in n.problems],
        )
        if changed or gone:
            # Lexical first, catalogue second: if we die between the two, the catalogue still
            # holds the old hashes, so the next run redoes these notes (upserts are idempotent).
            lexical.write((self._lexical_doc(n, s, st) for n, s, st in changed), gone)
        commit = self._head() if only is None else catalog.get_meta("last_commit")
        catalog.apply(((n, s) for n, s, _ in changed), gone, touched)
        if only is None:
            catalog.set_meta("last_commit", commit)
        catalog.set_meta("indexed_at", _now())
        report.commit = commit
        return report

    def commit_changes(self) -> tuple[list[str], str] | None:
        """(note paths changed between the last indexed commit and HEAD, HEAD), or None when
        that cannot be told cheaply (no git, nothing indexed yet, unknown commit)."""
        from .git import changed_since

        head = self._head()
        if head is None or self._rebuild_reason() is not None:
            return None
        self._open_generation()
        last = self._get_catalog().get_meta("last_commit")
        if not last:
            return None
        if last == head:
            return [], head
        paths = changed_since(self.root, last, head)
        if paths is None:
            return None
        return [p for p in paths if not any(part.startswith(".") for part in p.split("/"))
                and not self._excluded(p)], head

    def _head(self) -> str | None:
        from .git import find_git_dir, head_commit

        if find_git_dir(self.root) is None:
            return None
        try:
            return head_commit(self.root)
        except Exception:
            return None

    # -- reading ---------------------------------------------------------------------------------

    def search(self, text: str, limit: int = 10, *, type: str | list[str] | None = None,
               tag: str | list[str] | None = None, scope: str | list[str] | None = None,
               status: str | list[str] | None = None, since: str | dt.date | None = None,
               until: str | dt.date | None = None, path: str | None = None,
               include: str | list[str] | None = None, as_of: str | None = None) -> list[Hit]:
        """BM25 search over the notes (no model is loaded).

        Args:
            text: the query; words, identifiers, any language.
            limit: at most this many hits.
            type, tag, scope, status: keep notes with these values (a list means any of them;
                several tags must all be present). A note without a scope is global and always kept
                by a scope filter.
            since, until: keep notes dated (authored/updated/created, else file time) in this range.
            path: a folder or glob (vault-relative) the note must be under.
            include: also show notes hidden by default: forgotten, archived, snoozed, expired.
            as_of: judge snoozes and validity windows at this date instead of now.
        """
        from .text import snippet, terms

        filters = self._filters(type, tag, scope, status, since, until, path, include, as_of)
        raw = self._repairing(lambda: self._demote_superseded(self.lexical.search(text, limit, filters)))
        # A writer commits lexical first, the catalogue second (see _incremental); a reader in
        # between would get a new note the catalogue cannot resolve yet (get(id) fails), so such a
        # hit waits for its row (issue 7: tests/test_concurrency.py, readers during writes).
        known = self.catalog.rows(h.path for h in raw)
        raw = [h for h in raw if h.path in known]
        qterms = set(terms(text))
        hits = []
        for h in raw:
            try:
                body = self._body_for_snippet(h.path)
            except OSError:
                body = ""
            hits.append(Hit(
                id=h.id, path=h.path, title=h.title, score=round(h.score, 4),
                snippet=snippet(body, qterms), type=h.type, tags=h.tags, scope=h.scope,
                date=_ts_to_iso(h.date),
            ))
        return hits

    def _filters(self, type: Any = None, tag: Any = None, scope: Any = None, status: Any = None,
                 since: Any = None, until: Any = None, path: str | None = None,
                 include: Any = None, as_of: Any = None) -> Filters:
        from .rank import Filters

        bad = [i for i in _tuple(include) if i not in INCLUDE_CHOICES]
        if bad:
            raise MdmemError(f"--include takes {', '.join(INCLUDE_CHOICES)}; got {', '.join(bad)}.")
        return Filters(
            types=_tuple(type), tags=_tuple(tag),
            scopes=(*_tuple(scope), "global") if scope else (),
            statuses=_tuple(status), since=_date_bound(since, "since"),
            until=_date_bound(until, "until", end=True), path=path,
            visible_at=self.now(as_of), include=_tuple(include),
        )

    def now(self, as_of: Any = None) -> float:
        """The time retrieval judges visibility and decay by: ``as_of``, else $MDMEM_NOW, else now."""
        value = as_of or os.environ.get("MDMEM_NOW")
        if value:
            ts = _date_bound(value, "as-of")
            assert ts is not None
            return ts
        return time.time()

    @property
    def semantic(self) -> Semantic:
        """The vector side (embedder, cache, usearch); the model loads on first use."""
        if self._semantic is None:
            from .hybrid import Semantic

            self._semantic = Semantic(self)
        return self._semantic

    def embed(self, progress: Progress | None = None, *, max_new: int | None = None) -> EmbedReport:
        """Give every chunk a vector: cached ones are reused, the rest run through the model.

        Args:
            progress: called with (embedded, to embed).
            max_new: embed at most this many new chunks (the rest stay for later).
        Interrupting (Ctrl-C) keeps what was embedded; the next run resumes.
        """
        return self.semantic.embed(progress, max_new=max_new)

    def vsearch(self, text: str, limit: int = 10, *, explain: bool = False, **filters: Any) -> list[Hit]:
        """Vector search: notes whose meaning is closest to ``text`` (loads the model).

        Takes the filters of ``search``. Notes below the similarity floor are not returned.
        """
        from .hybrid import vector_search

        cands, info = vector_search(self.semantic, text, limit, self._filters(**filters))
        self.last_info = info
        return self._hits(cands, text, explain)

    def query(self, text: str, limit: int = 10, *, explain: bool = False, vectors: bool = True,
              priors: bool = True, **filters: Any) -> list[Hit]:
        """Hybrid search: BM25 and vectors fused by weighted RRF, optional rerank, near-duplicates held back.

        Args:
            text: the question or words.
            limit: at most this many hits.
            explain: attach each score's parts to ``Hit.explain``.
            vectors: use the vector leg (False: BM25 only, no model loaded).
            priors: add the salience/pin/recency/confidence priors (False: relevance alone).
            **filters: those of ``search``.
        """
        from .hybrid import hybrid_search

        cands, info = hybrid_search(self, self.semantic if vectors else None, text, limit,
                                    self._filters(**filters), prior_weight=None if priors else 0.0)
        self.last_info = info
        return self._with_links(self._hits(cands, text, explain))

    def recall(self, text: str, limit: int = 10, *, explain: bool = False, vectors: bool = True,
               **filters: Any) -> list[Hit]:
        """Intent-routed retrieval, the one agents should call first.

        The query is classified (why / when / who / recent / general) and routed: causal links
        for why, a time window for when, entity matches for who, recency-weighted priors for
        recent, plain hybrid otherwise. ``last_info`` holds the intent and the route.
        """
        from .recall import recall

        cands, info = recall(self, text, limit, self._filters(**filters), vectors=vectors)
        self.last_info = info
        return self._with_links(self._hits(cands, text, explain))

    def context(self, prompt: str, budget: int = 600, **kwargs: Any) -> dict[str, Any]:
        """Memory for a prompt within ``budget`` tokens (see ``recall.build_context``)."""
        from .recall import build_context

        return build_context(self, prompt, budget=budget, **kwargs)

    def _with_links(self, hits: list[Hit], top: int = 3, per_hit: int = 3) -> list[Hit]:
        """Connection hints on the top hits: up to ``per_hit`` typed neighbours each (causal links
        first, then other typed links, then mentions and entities), so an agent can follow them."""
        from .connect import connection_hints

        if not hits:
            return hits
        hints = connection_hints(self, [h.path for h in hits[:top]], per_hit)
        return [replace(h, links=hints[h.path]) if hints.get(h.path) else h for h in hits]

    def _hits(self, cands: list[Candidate], text: str, explain: bool) -> list[Hit]:
        from .text import snippet, terms

        rows = self.catalog.rows(c.path for c in cands)
        qterms = set(terms(text))
        hits = []
        for c in cands:
            row = rows.get(c.path)
            if row is None:
                continue
            body = c.chunk_text
            if not body:
                try:
                    body = self._body_for_snippet(c.path)
                except OSError:
                    body = ""
            hits.append(Hit(
                id=row["id"], path=c.path, title=row["title"], score=round(c.score, 6),
                snippet=snippet(body, qterms), type=row["type"], tags=row["tags"], scope=row["scope"],
                date=_ts_to_iso(row["date"]), explain={**c.explain, "final": round(c.score, 6)} if explain else None,
            ))
        return hits

    def _demote_superseded(self, hits: list[Any]) -> list[Any]:
        """BM25 order, except that a superseded note goes below its successor (or to the end)."""
        if len(hits) < 1:
            return hits
        successors = self.catalog.superseded_by(h.path for h in hits)
        if not successors:
            return hits
        order = [h for h in hits if h.path not in successors]
        for h in hits:
            if h.path in successors:
                after = next((i for i, o in enumerate(order) if o.path == successors[h.path]), len(order) - 1)
                order.insert(after + 1, h)
        return order

    def _repairing(self, read: Callable[[], Any]) -> Any:
        """Run an index read; if the index is damaged, rebuild it once and read again."""
        try:
            return read()
        except MdmemError:
            raise
        except Exception as exc:
            self._rebuild_damaged(exc)
            return read()

    def _rebuild_damaged(self, exc: Exception) -> None:
        import sys

        print(f"mdmem: index unreadable ({type(exc).__name__}); rebuilding it.", file=sys.stderr)
        self.close()
        self.reindex(full=True)

    def _body_for_snippet(self, rel: str) -> str:
        from .note import split_frontmatter

        raw = self.safe_path(rel).read_bytes()[:MAX_INDEXED_BYTES]
        return split_frontmatter(raw.decode("utf-8", errors="replace"))[1]

    def resolve(self, ref: str) -> str:
        """The path of the note ``ref`` names: id, path (with or without .md), stem, title or alias."""
        exact = set(self.catalog.exact(ref))
        if len(exact) == 1:  # 'notes/A' beside 'notes/a', 'C# tips' beside 'C': the exact name wins
            return exact.pop()
        matches = self.catalog.lookup(ref)
        if not matches:
            # Maybe a file that exists but is not indexed yet.
            candidate = ref if ref.lower().endswith(".md") else f"{ref}.md"
            try:
                if self.safe_path(candidate).is_file():
                    return candidate
            except MdmemError:
                raise
            names = self.catalog.all_names()
            close = difflib.get_close_matches(ref.casefold(), names, n=3, cutoff=0.6)
            raise NoteNotFound(ref, close)
        for kind in ("id", "path"):
            exact = {p for p, k in matches if k == kind}
            if len(exact) == 1:
                return exact.pop()
        paths = sorted({p for p, _ in matches})
        if len(paths) == 1:
            return paths[0]
        # Versions of one note share a title: the current (active) one is meant.
        rows = self.catalog.rows(paths)
        active = [p for p in paths if rows.get(p, {}).get("status") == "active"]
        if len(active) == 1 and self.catalog.superseded_by([active[0]]) == {}:
            return active[0]
        raise AmbiguousNote(ref, paths)

    def get(self, ref: str) -> Note:
        """The note ``ref`` names, parsed fresh from its file."""
        rel = self.resolve(ref)
        try:
            return self.read_note(rel)[0]
        except FileNotFoundError:
            raise NoteNotFound(ref) from None

    # -- writing ---------------------------------------------------------------------------------

    def add(self, title: str, body: str = "", *, type: str = "note", tags: list[str] | None = None,
            scope: str | None = None, salience: float | None = None, confidence: float | None = None,
            pinned: bool = False, entities: list[str] | None = None, aliases: list[str] | None = None,
            path: str | None = None, commit: bool | None = None, extra: dict[str, Any] | None = None,
            ) -> AddResult:
        """Write a new note atomically, index it and (in a git vault) commit it.

        Args:
            title: the note's title; also names the file unless ``path`` is given.
            body: markdown body.
            path: vault-relative file path to write (must not exist).
            commit: commit the new file (default: the vault's ``[git] commit`` setting).
        """
        title = title.strip()
        if not title:
            raise MdmemError("A note needs a title; pass --title TEXT.")
        from .note import TYPES

        if type not in TYPES:
            raise MdmemError(f"Unknown type {type!r}; use one of: {', '.join(sorted(TYPES))}.")
        for name, v in (("salience", salience), ("confidence", confidence)):
            if v is not None and not 0.0 <= v <= 1.0:
                raise MdmemError(f"{name} must be between 0 and 1, got {v}.")
        if scope is not None and not re.match(r"^(global|(project|topic):[\w.\-/]+)$", scope):
            raise MdmemError(f"scope must be global, project:NAME or topic:NAME, got {scope!r}.")
        now = _now()
        note_id = self._new_id()
        meta: dict[str, Any] = {
            "id": note_id, "title": title, "type": type,
            "salience": salience, "confidence": confidence, "pinned": True if pinned else None,
            "scope": scope, "tags": tags or None, "aliases": aliases or None,
            "entities": entities or None, "created": now, "updated": now,
        }
        meta.update(extra or {})
        text = render_note(meta, body)
        with self.writer_lock():
            rel = self._place(path, title)
            self.write_file(rel, text, exclusive=True)
            self._update(False, None, [rel])
        msg = f"mdmem: add {type} \"{title}\""
        sha = self.commit([rel], msg) if (self.config.git_commit if commit is None else commit) else None
        return AddResult(id=note_id, path=rel, title=title, commit=sha)

    def commit(self, paths: list[str], message: str) -> str | None:
        """Commit vault files that mdmem has just written and indexed (no-op outside git).

        Runs under the writer lock, so mdmem's own commits never race each other for
        ``.git/index.lock`` and the catalogue's last indexed commit moves in step with HEAD. When
        git still refuses (another git process keeps its lock, a pre-commit hook fails), the files
        stay written and indexed: the reason goes to ``warnings`` and None is returned.
        """
        from .errors import CommitFailed
        from .git import commit_paths, find_git_dir

        if find_git_dir(self.root) is None:
            return None
        try:
            with self.writer_lock():
                result = commit_paths(self.root, [self.safe_path(p) for p in paths], message)
                if result is None:
                    return None
                sha, parent = result
                # Our commit only holds files we indexed, so if the index matched the parent it
                # matches the new commit too (the git hook is skipped for our own commits).
                if self.catalog.get_meta("last_commit") == parent:
                    self.catalog.set_meta("last_commit", sha)
                return sha
        except (CommitFailed, LockHeld) as exc:
            import shlex

            files = " ".join(shlex.quote(p) for p in paths)
            self.warnings.append(f"{', '.join(paths)} saved and indexed, but not committed: "
                                 f"{str(exc).rstrip('.')}. Commit it with: git add {files} && git commit")
            return None

    def _place(self, path: str | None, title: str) -> str:
        if path:
            rel = path if path.lower().endswith(".md") else f"{path}.md"
            if len(rel.rsplit("/", 1)[-1].encode()) > 240:  # 255 bytes less the temp file's suffix
                raise MdmemError(f"The file name in {rel!r} is too long (over 240 bytes); choose a shorter --path.")
            if self.safe_path(rel).exists():
                raise MdmemError(f"{rel} already exists; choose another --path.")
            return self.rel(self.safe_path(rel))
        slug = slugify(title)
        base = f"{self.config.notes_dir}/{slug}" if self.config.notes_dir else slug
        rel, n = f"{base}.md", 2
        while self.safe_path(rel).exists():
            rel, n = f"{base}-{n}.md", n + 1
        return rel

    def _new_id(self) -> str:
        while True:
            nid = new_id()
            if self._rebuild_reason() is not None or not self.catalog.lookup(nid):
                return nid

    # -- lifecycle (see lifecycle.py) ----------------------------------------------------------

    def pin(self, ref: str, pinned: bool = True, *, commit: bool | None = None) -> Any:
        """Pin (or unpin) a note: pinned notes come first in context and get a prior boost."""
        from .lifecycle import update_note

        return update_note(self, ref, {"pinned": True if pinned else None}, "pin" if pinned else "unpin",
                           commit=commit)

    def snooze(self, ref: str, until: str, *, commit: bool | None = None) -> Any:
        """Hide a note from retrieval until a date (``until``: YYYY-MM-DD)."""
        from .lifecycle import update_note

        return update_note(self, ref, {"snoozed_until": until}, f"snooze until {until}", commit=commit)

    def forget(self, ref: str, *, commit: bool | None = None) -> Any:
        """Mark a note forgotten: kept on disk and in git, hidden from retrieval."""
        from .lifecycle import update_note

        return update_note(self, ref, {"status": "forgotten"}, "forget", commit=commit)

    def restore(self, ref: str, *, commit: bool | None = None) -> Any:
        """Undo forget/archive/snooze: the note is active and visible again."""
        from .lifecycle import update_note

        return update_note(self, ref, {"status": "active", "snoozed_until": None}, "restore", commit=commit)

    def correct(self, ref: str, body: str, *, title: str | None = None, commit: bool | None = None) -> Any:
        """A successor note that supersedes ``ref``; returns (AddResult, Change of the old note)."""
        from .lifecycle import correct

        return correct(self, ref, body, title=title, commit=commit)

    def history(self, ref: str) -> dict[str, Any]:
        """The version chain through a note and each version's git log."""
        from .lifecycle import history

        return history(self, ref)

    # -- reports ---------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """Counts, index freshness and the last indexed commit."""
        from .git import find_git_dir, hooks_installed

        self.ensure_index()
        cat = self.catalog
        disk = self.scan()
        stamps = cat.stamps()
        new = [p for p in disk if p not in stamps]
        deleted = [p for p in stamps if p not in disk]
        maybe = [p for p, st in disk.items() if p in stamps and stamps[p] != (st.st_mtime_ns, st.st_size)]
        known = cat.hashes(maybe)
        changed = [p for p in maybe
                   if hashlib.blake2b(self.safe_path(p).read_bytes(), digest_size=16).hexdigest() != known.get(p)]
        head = self._head()
        last = cat.get_meta("last_commit")
        manifest = self.manifest() or {}
        problems = list(cat.problems())
        from .serve import read_info

        try:
            done, total = self.semantic.coverage()
            vectors: dict[str, Any] = {"model": self.semantic.embedder.name, "chunks_with_vectors": done,
                                       "chunks": total, "complete": done >= total}
        except MdmemError as exc:
            vectors = {"error": str(exc)}
        served = read_info(self.root)
        return {
            "vault": str(self.root),
            "notes": cat.count(),
            "types": cat.counts_by("type"),
            "statuses": cat.counts_by("status"),
            "problems": len(problems),
            "notes_with_problems": len({p.path for p in problems}),
            "index": {
                "engine": manifest.get("engine"), "schema": manifest.get("schema"),
                "generation": manifest.get("generation"), "indexed_at": cat.get_meta("indexed_at"),
                "size_bytes": _du(self.state),
            },
            "vectors": vectors,
            "serve": {"pid": served["pid"], "port": served["port"]} if served else None,
            "pending": {"new": sorted(new), "changed": sorted(changed), "deleted": sorted(deleted)},
            "fresh": not (new or changed or deleted) and (head is None or head == last),
            "git": {
                "repository": find_git_dir(self.root) is not None,
                "head": head, "last_indexed_commit": last,
                "hooks": hooks_installed(self.root),
            },
        }

    def doctor(self) -> list[Problem]:
        """Every problem with the vault: broken notes (file, field, fix) and vault setup."""
        self.ensure_index()
        out = list(self.catalog.problems())
        from .connect import dangling_problems

        out += dangling_problems(self)
        for tmp, target in self.unfinished_writes():
            out.append(Problem(tmp, "file", f"unfinished write of {target}: mdmem was stopped before the note "
                               "reached its place; this hidden file holds the text it was writing",
                               f"to keep it, rename it to {target} (or another .md name); else delete it"))
        from .git import HOOK_NAMES, find_git_dir, hooks_installed

        if find_git_dir(self.root) is not None:
            installed = hooks_installed(self.root)
            if len(installed) < len(HOOK_NAMES):
                out.append(Problem(".git/hooks", "hooks", "git hooks not installed; the index goes stale "
                                   "after commits", "run: mdmem hooks install"))
        gi = self.root / ".gitignore"
        if find_git_dir(self.root) is not None and (not gi.exists() or ".mdmem" not in gi.read_text(errors="replace")):
            out.append(Problem(".gitignore", ".mdmem/", ".mdmem/ is not in .gitignore (an inner "
                               ".gitignore keeps it out for now)", "add a line '.mdmem/' to .gitignore"))
        return out

    # -- graph (see connect.py and graph.py; issue 5) -------------------------------------------

    def graph(self) -> Graph:
        """The note graph (typed edges, entity nodes, adjacency both ways), cached until the index changes."""
        from .connect import load_graph

        return load_graph(self)

    def links(self, ref: str) -> dict[str, Any]:
        """Edges out of a note: typed frontmatter links, body mentions, supersedes, entities."""
        from .connect import links

        return links(self, ref)

    def backlinks(self, ref: str) -> dict[str, Any]:
        """Edges into a note (or an entity) from other notes."""
        from .connect import backlinks

        return backlinks(self, ref)

    def neighbors(self, ref: str, depth: int = 1, *, types: list[str] | None = None,
                  direction: str = "both", limit: int | None = None) -> dict[str, Any]:
        """Notes and entities within ``depth`` hops of a note.

        Args:
            types: follow only edges of these types (e.g. caused_by, mentions, about).
            direction: "out", "in" or "both".
        """
        from .connect import neighbors

        return neighbors(self, ref, depth, types=types, direction=direction, limit=limit)

    def shortest_path(self, a: str, b: str, *, types: list[str] | None = None,
                      max_depth: int | None = None) -> dict[str, Any]:
        """The fewest hops between two notes, in either edge direction (``found`` False if none)."""
        from .connect import shortest_path

        return shortest_path(self, a, b, types=types, max_depth=max_depth)

    def why(self, text: str, limit: int = 10, *, depth: int = 3, vectors: bool | None = None,
            seeds: list[Hit] | None = None, **filters: Any) -> dict[str, Any]:
        """Causal answer: the best matches for ``text`` with their causes and effects.

        Args:
            depth: causal hops to follow from each match, each way.
            vectors: True: hybrid matches; False: BM25 only; None: BM25, hybrid only if BM25 finds
                nothing and the vault has vectors.
            seeds: matches found elsewhere (e.g. by a warm server) instead of running a query.
            **filters: those of ``search``; hidden notes stay out of the chains too.
        """
        from .connect import why

        return why(self, text, limit, depth=depth, vectors=vectors, seeds=seeds, filters=filters)

    def timeline(self, ref: str, window: int = 5, *, all_notes: bool = False, vectors: bool | None = None,
                 **filters: Any) -> dict[str, Any]:
        """The notes before and after a note (or the best match for a query) in time.

        Args:
            window: how many notes on each side.
            all_notes: place it among all notes instead of its related ones.
        """
        from .connect import timeline

        return timeline(self, ref, window, all_notes=all_notes, vectors=vectors, filters=filters)

    def entity(self, name: str, **filters: Any) -> dict[str, Any]:
        """Everything about an entity and its aliases: its note, notes about it, links, mentions."""
        from .connect import entity

        return entity(self, name, filters=filters)

    def link(self, a: str, b: str, type: str = "related", reason: str | None = None, *,
             commit: bool | None = None) -> Any:
        """Add a typed link from note A to note B in A's frontmatter; returns a lifecycle ``Change``."""
        from .connect import link

        return link(self, a, b, type, reason, commit=commit)

    def unlink(self, a: str, b: str, type: str | None = None, *, commit: bool | None = None) -> Any:
        """Remove A's frontmatter links to B (only of ``type`` if given); returns a ``Change``."""
        from .connect import unlink

        return unlink(self, a, b, type, commit=commit)

    def suggest_links(self, ref: str, limit: int = 3) -> list[dict[str, Any]]:
        """Similar notes ``ref`` does not link to yet, as ``mdmem link`` commands (nothing is written)."""
        from .connect import suggest_links

        return suggest_links(self, ref, limit)

    def export_graph(self, fmt: str = "json", *, types: list[str] | None = None, entities: bool = True,
                     **filters: Any) -> str:
        """The graph as json, dot or a self-contained html page."""
        from .connect import export_graph

        return export_graph(self, fmt, types=types, entities=entities, filters=filters)


# ---------------------------------------------------------------------------------------------
# helpers

INCLUDE_CHOICES = ("forgotten", "archived", "snoozed", "expired")
PARALLEL_PARSE_MIN = 400  # below this, starting a worker costs more than it saves


def _read_or_none(vault: Vault, rel: str) -> tuple[Note | None, str]:
    try:
        note, digest, _ = vault.read_note(rel)
        return note, digest
    except OSError:
        return None, ""


def _parse_batch(root: str, rels: list[str]) -> list[tuple[str, Note | None, str]]:
    vault = Vault(Path(root))
    return [(rel, *_read_or_none(vault, rel)) for rel in rels]


def _parallel_parse(root: Path, paths: list[str], batch: int = 200) -> Iterator[tuple[str, Note | None, str]]:
    """Parse ``paths`` in one worker process, in order, a batch ahead of the consumer."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        futures = [pool.submit(_parse_batch, str(root), paths[i : i + batch])
                   for i in range(0, len(paths), batch)]
        for fut in futures:
            yield from fut.result()

_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def new_id() -> str:
    """A short sortable id: ``m-`` + 9 chars of millisecond time + 3 random chars (base32)."""
    n = (int(time.time() * 1000) << 15) | secrets.randbits(15)
    chars = []
    for _ in range(12):
        chars.append(_CROCKFORD[n & 31])
        n >>= 5
    return "m-" + "".join(reversed(chars))


def slugify(title: str) -> str:
    """A file-name slug that keeps letters of every script: 'Use Hotwire!' → 'use-hotwire'."""
    s = re.sub(r"[^\w\s-]", "", title.casefold(), flags=re.UNICODE)
    s = re.sub(r"[\s_-]+", "-", s).strip("-")
    s = s[:80]
    while len(s.encode()) > 200:  # file names are at most 255 bytes; 80 CJK extension chars are 320
        s = s[:-1]
    return s.rstrip("-") or "note"


def _hidden(rel: str) -> bool:
    return any(part.startswith(".") and part not in (".", "..") for part in rel.split("/"))


def _machine_key() -> bytes:
    """This user's secret for sealing index manifests, made on first use (mode 0600).

    Kept outside every vault ($MDMEM_HOME, else ~/.local/state/mdmem), so a vault's own files
    cannot forge it. Without a writable home, a per-process key: the index is rebuilt each run.
    """
    home = Path(os.environ.get("MDMEM_HOME") or Path.home() / ".local" / "state" / "mdmem")
    path = home / "index.key"
    if path in _KEYS:
        return _KEYS[path]
    try:
        if not path.is_file():
            home.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = home / f".index.key.{secrets.token_hex(4)}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_hex(32) + "\n")
            try:
                os.link(tmp, path)  # another process may have made one meanwhile: theirs wins
            except FileExistsError:
                pass
            finally:
                tmp.unlink()
        key = bytes.fromhex(path.read_text().strip())
    except (OSError, ValueError):
        key = secrets.token_bytes(32)
    _KEYS[path] = key
    return key


_KEYS: dict[Path, bytes] = {}


def _seal(generation: str, key: bytes | None = None) -> str:
    return hmac.new(key or _machine_key(), f"mdmem index {generation}".encode(), "sha256").hexdigest()


def _sealed_here(generation: str, seal: str) -> bool:
    """Whether ``seal`` was made with this user's key (or another key this process already read:
    $MDMEM_HOME/HOME may change within one process, e.g. under tests)."""
    keys = [*_KEYS.values()] or [_machine_key()]
    if any(hmac.compare_digest(seal, _seal(generation, k)) for k in keys):
        return True
    return hmac.compare_digest(seal, _seal(generation))


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _tuple(v: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    if v is None:
        return ()
    if isinstance(v, str):
        return (v,)
    return tuple(v)


def _date_bound(v: str | dt.date | None, name: str, end: bool = False) -> float | None:
    if v is None or v == "":
        return None
    iso = to_iso(v) if not isinstance(v, str) else to_iso(v.strip())
    if iso is None:
        raise MdmemError(f"--{name} must be a date like 2026-01-31, got {v!r}.")
    ts = iso_to_timestamp(iso)
    assert ts is not None
    return ts + 86399.999 if end and len(iso) == 10 else ts


def _ts_to_iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _du(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(dirpath, f))
            except OSError:
                pass
    return total
