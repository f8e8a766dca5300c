"""The index store: generations, reading and repairing the index, writing and committing a note,
resolving a reference, filters.

Its indexer (``indexer``) is the one way the index is written: reindex, the update after a write, catching
up after git and the background job; the store builds it with the store's own vector side
(``semantic``) as its listener, so vectors follow every write. Readers call ``repair()`` first: it is
the one step by which a read may write the index (build a missing one, finish what a killed writer or
a failed hook left, rebuild a damaged one). Features take a store and read through ``reading()``
(``reading.IndexRead``), which repairs for them; they never see the ``Vault`` facade.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..adapters.config import Config
from ..adapters.files import Files, is_hidden
from ..core.errors import AmbiguousNote, IndexNotWritten, LockHeld, MdmemError, NoteNotFound, write_failure
from ..core.note import Note, NoteDates, new_id, note_dates
from ..core.schema import FilterArgs
from ..core.text import slugify
from .current import CurrentIndex
from .indexer import Indexer, Progress
from .semantic import Semantic
from .state import IndexState

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..core.rank import Filters
    from ..results.indexing import ReindexReport
    from .catalog import Catalog
    from .lexical import LexicalIndex
    from .reading import IndexRead

T = TypeVar("T")


class IndexStore:
    """One vault's files and the index derived from them (written by ``indexer``; vectors: ``semantic``)."""

    def __init__(self, root: Path, config: Config) -> None:
        self.root = root
        self.state = IndexState(root, config.lock_timeout)
        self.current = CurrentIndex(self.state)
        self.semantic = Semantic(self)  # the vector side: the model loads on its first use
        self.indexer = Indexer(root, config, self.state, self.current, listeners=[self.semantic])
        # Things that went wrong after the work was done (a commit git refused): the Vault puts them
        # in the answer of the call that made them.
        self.warnings: list[str] = []
        self.index_warning: str | None = None  # why reads answered from an index that could not be refreshed
        # Values features derive from the current index (the graph). Each entry names the catalogue it
        # was built from, so close() keeps them: a reopened store rebuilds, and a CLI command does not
        # spend time freeing a graph the process is about to drop anyway.
        self.memo: dict[str, Any] = {}
        self._settled: Any = threading.local()  # ``settled``'s depth, per thread

    @property
    def config(self) -> Config:
        """The vault's settings (``mdmem.toml`` as the last whole-tree pass found it)."""
        return self.indexer.config

    @property
    def files(self) -> Files:
        """The vault's note files (what ``mdmem.toml`` excludes left out)."""
        return self.indexer.files

    def take_warnings(self) -> list[str]:
        """What went wrong since the last call (``warnings``, and why reads could not be refreshed); cleared."""
        lines = [*self.warnings, *(w for w in (self.index_warning, self.indexer.warning) if w)]
        self.warnings.clear()
        self.index_warning = self.indexer.warning = None
        return lines

    def close(self) -> None:
        """Release the index handles (the store can be used again afterwards)."""
        self.current.close()

    # -- the current generation ----------------------------------------------------------------

    def rebuild_reason(self) -> str | None:
        """Why the index must be rebuilt from scratch, or None if it is usable."""
        return self.indexer.rebuild_reason()

    def _open_generation(self) -> None:
        """Point at the manifest's generation; its stores open lazily on first use."""
        self.current.follow()

    def follow_generation(self) -> None:
        """Point at the manifest's generation now (a writer that waited may find another one current)."""
        self.current.follow()

    @property
    def generation(self) -> str:
        """The generation this store reads (the manifest's, as of the last ``repair``)."""
        return self.current.generation

    @property
    def directory(self) -> Path:
        """The current generation's folder."""
        return self.current.directory

    @property
    def catalog(self) -> Catalog:
        """The note catalogue of the current generation (call ``repair`` first in a read)."""
        return self.current.catalog

    @property
    def lexical(self) -> LexicalIndex:
        """The BM25 index of the current generation (call ``repair`` first in a read)."""
        return self.current.lexical

    def stamp(self, *also: Path) -> str | None:
        """What the index is now, as a short digest that changes with every write to it (and to ``also``)."""
        return self.state.stamp(*also)

    def state_json(self, name: str) -> dict[str, Any] | None:
        """A small JSON file mdmem keeps in ``.mdmem/`` (a cache), or None."""
        return self.state.read_json(name)

    def save_state_json(self, name: str, data: dict[str, Any]) -> bool:
        """Write a small JSON file in ``.mdmem/`` atomically; False when it could not be written."""
        return self.state.write_json(name, data)

    # -- repair: the one way a read writes ---------------------------------------------------------

    def repair(self, damaged: Exception | None = None, *, notice: bool = True) -> None:
        """Make the index answerable before a read: build it when there is none (or it cannot be
        used), finish what a killed writer or a failed hook left (the marks in ``.mdmem/``), and
        rebuild it when a read found it ``damaged``; then (``notice``) catch up with what no hook
        reported (``notice()``). The only step by which a read writes; what it writes gets its
        vectors from the background job or the next vector read, never by a model loaded here."""
        if damaged is None and getattr(self._settled, "depth", 0) > 0:
            return  # inside ``settled``: repaired once already
        if notice:
            self.indexer.start_notice()
        try:
            with self.indexer.reading():
                self._repair(damaged, notice)
        finally:
            self.indexer.drop_early()  # a listing notice() did not read would be stale by the next read

    @contextlib.contextmanager
    def settled(self) -> Iterator[None]:
        """Repaired once, then read as it is (this thread): for a long read-only pass (``review``) whose
        hundreds of reads would otherwise each look for changes on disk. A damaged index still repairs."""
        self.repair()
        self._settled.depth = getattr(self._settled, "depth", 0) + 1
        try:
            yield
        finally:
            self._settled.depth -= 1

    def _repair(self, damaged: Exception | None, notice: bool) -> None:
        if damaged is not None:
            print(f"mdmem: index unreadable ({type(damaged).__name__}); rebuilding it.", file=sys.stderr)
            self.close()
            self.reindex(full=True)
            return
        if self.current.name is None or self.current.name != self.state.generation() or self.state.marked():
            if self.rebuild_reason() is not None or self.state.marked():
                try:
                    self.reindex(wait=False)
                except LockHeld:
                    if self.rebuild_reason() is not None:
                        raise
                except IndexNotWritten as exc:
                    if self.rebuild_reason() is not None:
                        raise
                    # The previous index still answers; the mark stays, so a later command catches up.
                    self.index_warning = f"index not updated: {exc}"
            self._open_generation()
        try:
            self.catalog  # noqa: B018  (opening fails on a damaged file, which is then rebuilt)
        except Exception as exc:
            if getattr(exc, "sqlite_errorname", "") not in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
                raise
            self.repair(damaged=exc)
            return
        if notice:
            self.indexer.notice()
            self._open_generation()  # a background job it waited for may have built another one

    def reading(self, *, notice: bool = True) -> contextlib.AbstractContextManager[IndexRead]:
        """The read door features use (``reading.IndexRead``): repaired once (``notice`` as in ``repair``)
        for the outermost read of this thread, the same view for a read inside it."""
        from .reading import read_view

        return read_view(self, notice=notice)

    def read(self, fn: Callable[[], T]) -> T:
        """Run an index read; if the index turns out damaged, repair it (rebuild) and read again."""
        try:
            return fn()
        except MdmemError:
            raise
        except Exception as exc:
            full = write_failure(exc, self.state.dir)
            if full is not None:  # a full disk is no damage: a rebuild would need room for a whole index
                raise full from exc
            self.repair(damaged=exc)
            return fn()

    # -- writing the index -------------------------------------------------------------------------

    def writer_lock(self, timeout: float | None = None) -> contextlib.AbstractContextManager[None]:
        """Hold the one-writer lock (see ``Indexer.writer_lock``: vectors follow what was written under it)."""
        return self.indexer.writer_lock(timeout)

    def reindex(
        self,
        full: bool = False,
        *,
        progress: Progress | None = None,
        wait: bool = True,
        timeout: float | None = None,
        only: list[str] | None = None,
        head: str | None = None,
    ) -> ReindexReport:
        """Bring the index up to date with the files (``Indexer.reindex``; see ``Vault.reindex``)."""
        return self.indexer.reindex(full, progress=progress, wait=wait, timeout=timeout, only=only, head=head)

    def update(self, paths: list[str]) -> ReindexReport:
        """Under the writer lock: index these vault-relative paths now (after a write)."""
        return self.indexer.update(paths)

    # -- git ---------------------------------------------------------------------------------------

    def head(self) -> str | None:
        """The vault repository's HEAD commit (None outside git or before the first commit)."""
        return self.indexer.head()

    def commit(self, paths: list[str], message: str) -> str | None:
        """Commit vault files that mdmem has just written and indexed (no-op outside git).

        Runs under the writer lock, so mdmem's own commits never race each other for
        ``.git/index.lock`` and the catalogue's last indexed commit moves in step with HEAD. When
        git still refuses (another git process keeps its lock, a pre-commit hook fails), the files
        stay written and indexed: the reason goes to ``warnings`` and None is returned.
        """
        from ..adapters.git import commit_paths, find_git_dir
        from ..core.errors import CommitFailed

        if find_git_dir(self.root) is None:
            return None
        try:
            with self.writer_lock():
                result = commit_paths(self.root, [self.files.safe_path(p) for p in paths], message)
                if result is None:
                    return None
                sha, parent = result
                # Our commit only holds files we indexed, so if the index matched the parent it
                # matches the new commit too (the git hook is skipped for our own commits).
                self.repair()
                if self.catalog.get_meta("last_commit") == parent:
                    self._record_commit(paths, parent, sha)
                    self.catalog.set_meta("last_commit", sha)
                return sha
        except (CommitFailed, LockHeld) as exc:
            import shlex

            files = " ".join(shlex.quote(p) for p in paths)
            self.warnings.append(
                f"{', '.join(paths)} saved and indexed, but not committed: "
                f"{str(exc).rstrip('.')}. Commit it with: git add {files} && git commit"
            )
            return None

    def _record_commit(self, paths: list[str], parent: str | None, sha: str) -> None:
        """Our commit dates the notes in it. Most carry ``created``/``updated`` of their own (the notes
        mdmem writes), so only their git columns move; one dated by its file's time (a hand-written
        note mdmem pinned) is indexed again, now dated by the commit as a rebuild would."""
        from .dating import Dating

        if any("mtime" in (d.created_from, d.updated_from) for _, d in self.catalog.file_dates(paths).values()):
            self.indexer.update(paths, head=sha)
            return
        changed = Dating(self.root, sha, since=parent).changes(self.catalog)
        self.catalog.set_git_dates({p: d for p, d in changed.items() if d is not None})

    def dates(self, note: Note) -> NoteDates:
        """A note's dates and where each came from: its frontmatter as read now, the git dates and
        file time the index holds (a note not indexed yet: its file's time)."""
        self.repair()
        row = self.catalog.row(note.path)
        if row is None:
            return note_dates(note, self.files.safe_path(note.path).stat().st_mtime_ns / 1e9)
        git = (row["git_created"], row["git_updated"]) if row["git_updated"] is not None else None
        edited = git is not None and row["updated_from"] == "mtime"  # the index found it edited since its commit
        return note_dates(note, row["mtime_ns"] / 1e9, git, modified=edited)

    # -- notes -------------------------------------------------------------------------------------

    def write_note(self, rel: str, text: str | bytes, *, exclusive: bool = False) -> Path:
        """Under the writer lock: write a note (or an attachment's bytes) atomically; follow it with ``update([rel])``.

        The path is marked dirty first, so if the process dies before the index has the note,
        the next command indexes it. ``exclusive`` refuses to overwrite.
        """
        self.state.mark_dirty([rel])
        return self.files.write(rel, text, exclusive=exclusive)

    def place(self, path: str | None, title: str) -> str:
        """The vault-relative path for a new note: ``path`` (must not exist), else a free
        ``notes_dir/<slug>.md``."""
        if path:
            rel = path if path.lower().endswith(".md") else f"{path}.md"
            if len(rel.rsplit("/", 1)[-1].encode()) > 240:  # 255 bytes less the temp file's suffix
                raise MdmemError(f"The file name in {rel!r} is too long (over 240 bytes); choose a shorter --path.")
            if self.files.safe_path(rel).exists():
                raise MdmemError(f"{rel} already exists; choose another --path.")
            rel = self.files.rel(self.files.safe_path(rel))
            if is_hidden(rel) or self.files.excluded(rel):
                raise MdmemError(
                    f"{rel} is in a hidden folder or excluded by mdmem.toml, where notes are not "
                    "indexed; choose another --path."
                )
            return rel
        slug = slugify(title)
        base = f"{self.config.notes_dir}/{slug}" if self.config.notes_dir else slug
        rel, n = f"{base}.md", 2
        while self.files.safe_path(rel).exists():
            rel, n = f"{base}-{n}.md", n + 1
        return rel

    def new_id(self) -> str:
        """A note id no indexed note has."""
        indexed = self.rebuild_reason() is None
        if indexed:
            self.repair()
        while True:
            nid = new_id()
            if not indexed or not self.catalog.lookup(nid):
                return nid

    def resolve(self, ref: str) -> str:
        """The path of the note ``ref`` names: id, path (with or without .md), stem, title or alias."""
        self.repair()
        cat = self.catalog
        exact = set(cat.exact(ref))
        if len(exact) == 1:  # 'notes/A' beside 'notes/a', 'C# tips' beside 'C': the exact name wins
            return exact.pop()
        matches = cat.lookup(ref)
        if not matches:
            # Maybe a file that exists but is not indexed yet.
            candidate = ref if ref.lower().endswith(".md") else f"{ref}.md"
            if self.files.safe_path(candidate).is_file():
                return candidate
            close = difflib.get_close_matches(ref.casefold(), cat.all_names(), n=3, cutoff=0.6)
            raise NoteNotFound(ref, close)
        for kind in ("id", "path"):
            exact = {p for p, k in matches if k == kind}
            if len(exact) == 1:
                return exact.pop()
        paths = sorted({p for p, _ in matches})
        if len(paths) == 1:
            return paths[0]
        # Versions of one note share a title: the current (active) one is meant.
        rows = cat.rows(paths)
        active = [p for p in paths if rows.get(p, {}).get("status") == "active"]
        if len(active) == 1 and cat.superseded_by([active[0]]) == {}:
            return active[0]
        raise AmbiguousNote(ref, paths)

    def get(self, ref: str) -> Note:
        """The note ``ref`` names, parsed fresh from its file."""
        rel = self.resolve(ref)
        try:
            return self.files.read_note(rel)[0]
        except FileNotFoundError:
            raise NoteNotFound(ref) from None

    # -- filters -----------------------------------------------------------------------------------

    def now(self, as_of: Any = None) -> float:
        """The time retrieval judges visibility and decay by: ``as_of``, else $MDMEM_NOW, else now."""
        from ..core.rank import date_bound

        value = as_of or os.environ.get("MDMEM_NOW")
        if value:
            ts = date_bound(value, "as-of")
            assert ts is not None
            return ts
        return time.time()

    def filters(self, args: FilterArgs | None = None, /, **given: Any) -> Filters:
        """The retrieval filters ``args`` (with the keyword filters ``given`` set on it: ``FilterArgs.of``)
        as ``rank.Filters``, judged at ``now(as_of)``."""
        from ..core.rank import make_filters

        a = FilterArgs.of(args, **given)
        return make_filters(a, visible_at=self.now(a.as_of))
