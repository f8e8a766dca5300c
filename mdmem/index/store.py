"""The index store: generations, reindex, catch-up after commits, writing and committing a note,
resolving a reference, filters.

It reads the files (``files.Files``), calls the pure parsers and hands records to the adapters
(``catalog``: SQL, ``lexical``: Whoosh); ``state`` keeps ``.mdmem/`` itself. Readers call
``repair()`` first: it is the one step by which a read may write the index (build a missing one,
finish what a killed writer or a failed hook left, rebuild a damaged one). Features take a store;
they never see the ``Vault`` facade.
"""

from __future__ import annotations

import difflib
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..adapters.config import CONFIG_FILE, Config
from ..adapters.files import Files, is_hidden
from ..core.errors import (
    AmbiguousNote,
    IndexMissing,
    IndexNotWritten,
    LockHeld,
    MdmemError,
    NoteNotFound,
    write_failure,
)
from ..core.note import Note, NoteDates, Problem, new_id, note_dates, now_iso
from ..core.rank import Filters, make_filters
from ..core.schema import FilterArgs
from ..core.text import slugify
from ..core.version import __version__
from .catchup import CatchUp
from .parsing import lexical_doc, read_notes
from .state import IndexState

if TYPE_CHECKING:
    import contextlib

    from ..results.indexing import ReindexReport
    from .catalog import Catalog, FileState
    from .lexical import LexicalDoc, LexicalIndex

SCHEMA_VERSION = 8  # 2: chunks for vectors; 3: visibility, link targets; 4: visibility mask fields; 5: git dates;
# 6: attachments, titles from the frontmatter told from H1 titles; 7: external refs, person identities; 8: packed chunks

CATALOG_BATCH = 500  # notes a full build writes to the catalogue per transaction
Progress = Callable[[int, int], None]
T = TypeVar("T")


class IndexStore:
    """One vault's files and the index derived from them (catching up after git: ``catchup``)."""

    def __init__(self, root: Path, config: Config) -> None:
        self.root = root
        self.config = config
        self.files = Files(root, config.exclude)
        self.state = IndexState(root, config.lock_timeout)
        self._catalog: Catalog | None = None
        self._lexical: LexicalIndex | None = None
        self._generation: str | None = None
        # Things that went wrong after the work was done (a commit git refused): the Vault puts them
        # in the answer of the call that made them.
        self.warnings: list[str] = []
        self.index_warning: str | None = None  # why reads answered from an index that could not be refreshed
        # Values features derive from the current index (the graph). Each entry names the catalogue it
        # was built from, so close() keeps them: a reopened store rebuilds, and a CLI command does not
        # spend ~10 ms on 10k notes freeing a graph the process is about to drop anyway.
        self.memo: dict[str, Any] = {}
        # A new generation's vectors from the cache before it is current (the Vault wires Semantic.carry)
        self.carry_vectors: Callable[[Path, Catalog], object] | None = None
        self.catchup = CatchUp(self)  # after git, the background job, and what reads notice

    def close(self) -> None:
        """Release the index handles (the store can be used again afterwards)."""
        if self._lexical is not None:
            self._lexical.close()
        if self._catalog is not None:
            self._catalog.close()
        self._lexical = self._catalog = None
        self._generation = None

    # -- the current generation ----------------------------------------------------------------

    def expected_manifest(self) -> dict[str, Any]:
        from .lexical import engine_version

        return {"schema": SCHEMA_VERSION, "engine": engine_version()}

    def rebuild_reason(self) -> str | None:
        """Why the index must be rebuilt from scratch, or None if it is usable."""
        return self.state.rebuild_reason(self.expected_manifest())

    def _open_generation(self) -> None:
        """Point at the manifest's generation; its stores open lazily on first use."""
        gen = str(self.state.generation())
        if self._generation != gen:
            self.close()
            self._generation = gen

    def follow_generation(self) -> None:
        """Point at the manifest's generation now (a writer that waited may find another one current)."""
        self._open_generation()

    @property
    def generation(self) -> str:
        """The generation this store reads (the manifest's, as of the last ``repair``)."""
        if self._generation is None:
            self._open_generation()
        if self._generation in (None, "None"):
            raise IndexMissing(f'No index at {self.state.dir}; run "mdmem reindex".')
        return str(self._generation)

    @property
    def directory(self) -> Path:
        """The current generation's folder."""
        return self.state.dir / self.generation

    @property
    def catalog(self) -> Catalog:
        """The note catalogue of the current generation (call ``repair`` first in a read)."""
        if self._catalog is None:
            from .catalog import Catalog

            path = self.directory / "catalog.sqlite"
            try:
                self._catalog = Catalog(path)
            except Exception as exc:  # WAL mode writes a -shm file even to read
                err = write_failure(exc, path)
                if err is None:
                    raise
                raise err from exc
        return self._catalog

    @property
    def lexical(self) -> LexicalIndex:
        """The BM25 index of the current generation (call ``repair`` first in a read)."""
        if self._lexical is None:
            from .lexical import LexicalIndex

            self._lexical = LexicalIndex(self.directory / "lexical")
        return self._lexical

    # -- repair: the one way a read writes ---------------------------------------------------------

    def repair(self, damaged: Exception | None = None, *, notice: bool = True) -> None:
        """Make the index answerable before a read: build it when there is none (or it cannot be
        used), finish what a killed writer or a failed hook left (the marks in ``.mdmem/``), and
        rebuild it when a read found it ``damaged``; then (``notice``) catch up with what no hook
        reported (``notice()``). The only step by which a read writes; what it writes gets its
        vectors from the background job or the next vector read, never by a model loaded here."""
        if notice:
            self.catchup.start_notice()
        try:
            with self.state.reading():
                self._repair(damaged, notice)
        finally:
            self.catchup.drop_early()  # a listing notice() did not read would be stale by the next read

    def _repair(self, damaged: Exception | None, notice: bool) -> None:
        if damaged is not None:
            print(f"mdmem: index unreadable ({type(damaged).__name__}); rebuilding it.", file=sys.stderr)
            self.close()
            self.reindex(full=True)
            return
        if self._generation is None or self._generation != self.state.generation() or self.state.marked():
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
            self.catchup.notice()
            self._open_generation()  # a background job it waited for may have built another one

    def read(self, fn: Callable[[], T]) -> T:
        """Run an index read; if the index turns out damaged, repair it (rebuild) and read again."""
        try:
            return fn()
        except MdmemError:
            raise
        except Exception as exc:
            self.repair(damaged=exc)
            return fn()

    # -- writing the index -------------------------------------------------------------------------

    def writer_lock(self, timeout: float | None = None) -> contextlib.AbstractContextManager[None]:
        """Hold the one-writer lock (see ``IndexState.writer_lock``)."""
        return self.state.writer_lock(timeout)

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
        """Bring the index up to date with the files (see ``Vault.reindex``)."""
        started = time.perf_counter()
        with self.writer_lock(timeout if wait else 0.0):
            report = self._update(full, progress, only, head)
            if head and only is not None and not report.full:
                self.catalog.set_meta("last_commit", head)
                report = replace(report, commit=head)
        return replace(report, seconds=time.perf_counter() - started)

    def update(self, paths: list[str]) -> ReindexReport:
        """Under the writer lock: index these vault-relative paths now (after a write)."""
        return self._update(False, None, paths)

    def _update(
        self, full: bool, progress: Progress | None, only: list[str] | None, head: str | None = None
    ) -> ReindexReport:
        """reindex() under the writer lock.

        The "dirty" mark is written first and removed last: if this process is killed (or the
        disk fills) in between, the next command sees the mark and finishes the job.
        """
        pending = self.state.dirty_paths()
        self.state.tidy()
        self.files.remove_placed_temps([p for p in pending or [] if p != "*"])
        if only is not None and (self.state.stale() or (pending is not None and "*" in pending) or CONFIG_FILE in only):
            only = None  # changes nobody recorded (a hook that could not update, a killed run), or a new
            # mdmem.toml (what is a note may have changed): compare all
        elif only is not None and pending:
            only = sorted({*only, *pending})  # notes a killed writer placed but did not index
        self.state.mark_dirty(["*"] if only is None else only, replace=True)
        self.state.clear_stale()
        # A whole-tree pass records the folders' mtimes, taken before it scans (see notice()), and follows
        # the mdmem.toml it finds.
        taken, folders = (time.time_ns(), self.files.folders()) if only is None else (0, None)
        config = self.catchup.follow_config() if only is None else None
        report = self._update_marked(full, progress, only, head)
        self.state.changed |= report.full or report.changed > 0  # chunks changed: vectors are due
        if folders is not None:
            self.catchup.record_scan(folders, taken, config)
        self.state.clear_dirty()
        return report

    def _update_marked(
        self, full: bool, progress: Progress | None, only: list[str] | None, head: str | None
    ) -> ReindexReport:
        reason = self.rebuild_reason()
        if reason is None and not full:
            try:
                return self._incremental(progress, only, head)
            except MdmemError:
                raise
            except Exception as exc:  # an unreadable index is rebuilt, never trusted
                if write_failure(exc, self.state.dir) is not None:
                    raise  # a full disk: a rebuild would need more space still
                return replace(self._full(progress), reason=f"index unreadable ({type(exc).__name__}: {exc}); rebuilt")
        return replace(self._full(progress), reason="requested" if full and reason is None else (reason or ""))

    def _parse_stream(
        self, paths: list[str], stats: dict[str, os.stat_result], progress: Progress | None, count_terms: bool = False
    ) -> Iterator[tuple[Note, FileState, Any, Any]]:
        """Parse files in order (many in a second process while this one indexes: ``parsing``);
        (note, its state, its stat, its term counts if ``count_terms`` and counted ahead)."""
        from .catalog import FileState

        total = len(paths)
        for i, (rel, note, digest, counts) in enumerate(read_notes(self.files, paths, count_terms=count_terms), 1):
            if progress and (i % 50 == 0 or i == total):
                progress(i, total)
            if note is None:
                continue  # vanished or unreadable since the scan; the next run sees it again
            st = stats[rel]
            yield note, FileState(digest, st.st_mtime_ns, st.st_size), st, counts

    def _full(self, progress: Progress | None) -> ReindexReport:
        """Build a new generation beside the current one, then switch the manifest to it."""
        self.close()
        gen = self.state.new_generation()
        try:
            return self._build(gen, progress)
        except BaseException:
            self.close()
            self.state.discard(gen)
            raise

    def _build(self, gen: str, progress: Progress | None) -> ReindexReport:
        from ..results.indexing import ReindexReport
        from .catalog import Catalog
        from .dating import Dating
        from .lexical import LexicalIndex

        directory = self.state.dir / gen
        commit = self.head()
        dating = Dating(self.root, commit)  # git's history pass runs while the first notes are parsed
        attachments: list[str] = []
        stats = self.catchup.scanned = self.files.scan(attachments)
        added: list[str] = []
        problems: list[Problem] = []
        batch: list[tuple[Note, FileState, NoteDates]] = []
        catalog = Catalog(directory / "catalog.sqlite")

        def docs() -> Iterator[LexicalDoc]:
            # Each note goes to both stores as it is read, the catalogue a batch at a time: keeping every
            # parsed note for the catalogue until the BM25 segment was written: part of 600 MB at 50k notes.
            for i, (note, state, st, counts) in enumerate(self._parse_stream(sorted(stats), stats, progress, True)):
                if i == 0:
                    dating.start_full()
                batch.append((note, state, dating.dates(note, st)))
                added.append(note.path)
                problems.extend(note.problems)
                yield lexical_doc(*batch[-1], counts)
                if len(batch) >= CATALOG_BATCH:
                    catalog.apply(batch, ())
                    batch.clear()
            catalog.apply(batch, ())

        try:
            lexical = LexicalIndex.create(directory / "lexical")
            lexical.write(docs(), (), bulk=True)
            lexical.close()
            dating.history()  # waited for already, unless the vault has no notes
            catalog.set_attachments(attachments, replace=True)
            catalog.set_meta("last_commit", commit)
            catalog.set_meta("indexed_at", now_iso())
            if self.carry_vectors is not None:  # readers of the new generation keep every cached vector
                self.carry_vectors(directory, catalog)
        finally:
            catalog.close()
        self.state.switch({**self.expected_manifest(), "generation": gen, "mdmem": __version__, "created": now_iso()})
        self._open_generation()
        return ReindexReport(full=True, added=added, problems=problems, commit=commit)

    def _incremental(self, progress: Progress | None, only: list[str] | None, head: str | None = None) -> ReindexReport:
        from ..results.indexing import ReindexReport
        from .dating import Dating

        self._open_generation()
        catalog, lexical = self.catalog, self.lexical
        lexical.doc_count()  # opening fails on a damaged index, which then gets rebuilt
        attachments: list[str] = []
        last = catalog.get_meta("last_commit")
        commit = self.head() if only is None else (head or last)
        # Commits since the last index date the notes they touched, even a note whose
        # file did not change on disk (a commit of an edit indexed before it was committed).
        dating = Dating(self.root, commit, since=last)
        moved = dating.changes(catalog)
        # A commit's catch-up reads the rows of its own notes only (all of them: ~75 ms at 50k notes).
        stamps = catalog.stamps(None if only is None else [*only, *moved])
        if only is None:
            stats = self.catchup.scanned = self.files.scan(attachments)
            gone = [p for p in stamps if p not in stats]
            known_files = set(catalog.attachments())
            if known_files != set(attachments):
                catalog.set_attachments(attachments, replace=True)
        else:
            stats, gone = {}, []
            lost: list[str] = []
            for rel in dict.fromkeys([*only, *(p for p in moved if p in stamps)]):
                p = self.files.safe_path(rel)
                if rel[-3:].lower() != ".md" or self.files.excluded(rel):
                    (attachments if p.is_file() else lost).append(rel)
                    if rel in stamps:
                        gone.append(rel)  # a note once, excluded now (mdmem.toml at another commit)
                elif p.is_file():
                    stats[rel] = p.stat()
                elif rel in stamps:
                    gone.append(rel)
            if attachments or lost:
                catalog.set_attachments(attachments, lost)
        candidates = [p for p, st in stats.items() if stamps.get(p) != (st.st_mtime_ns, st.st_size) or p in moved]
        known = catalog.file_dates(candidates)
        dating.use_stored(known)
        dating.adopt([p for p in candidates if p not in known and p not in moved])
        parsed = [
            (n, s, dating.dates(n, st)) for n, s, st, _ in self._parse_stream(sorted(candidates), stats, progress)
        ]
        # A note is rewritten when its text or its dates changed: an undated note's date may come
        # from its file's mtime, so a new mtime can be a change even when the text is not (or the
        # index would differ from --full; a reader can also stat a file mid-write and see the final
        # text with an earlier mtime).
        same = {n.path for n, s, d in parsed if known.get(n.path) == (s.hash, d)}
        changed = [item for item in parsed if item[0].path not in same]
        touched = [(n.path, s) for n, s, _ in parsed if n.path in same]
        if changed or gone:
            # Lexical first, catalogue second: if we die between the two, the catalogue still
            # holds the old hashes, so the next run redoes these notes (upserts are idempotent).
            lexical.write((lexical_doc(*item) for item in changed), gone)
        catalog.apply(changed, gone, touched)
        if only is None:
            catalog.set_meta("last_commit", commit)
        catalog.set_meta("indexed_at", now_iso())
        return ReindexReport(
            added=[n.path for n, _, _ in changed if n.path not in known],
            updated=[n.path for n, _, _ in changed if n.path in known],
            deleted=sorted(gone),
            unchanged=len(stats) - len(changed),
            problems=[p for n, _, _ in changed for p in n.problems],
            commit=commit if only is None else last,
        )

    # -- git ---------------------------------------------------------------------------------------

    def head(self) -> str | None:
        """The vault repository's HEAD commit (None outside git or before the first commit)."""
        from ..adapters.git import find_git_dir, head_commit

        if find_git_dir(self.root) is None:
            return None
        try:
            return head_commit(self.root)
        except Exception:
            return None

    def commit_changes(self) -> tuple[list[str], str] | None:
        """(paths changed between the last indexed commit and HEAD, HEAD), or None when
        that cannot be told cheaply (no git, nothing indexed yet, unknown commit)."""
        from ..adapters.git import changed_since

        head = self.head()
        if head is None or self.rebuild_reason() is not None:
            return None
        self._open_generation()
        last = self.catalog.get_meta("last_commit")
        if not last:
            return None
        if last == head:
            return [], head
        paths = changed_since(self.root, last, head)
        if paths is None:
            return None
        return [p for p in paths if not is_hidden(p)], head  # excluded files: attachments links may name

    def catch_up(self, *, timeout: float, whole_tree: bool = False) -> ReindexReport:
        """After commits, merges or checkouts: index what the commits since the last index touched
        (``whole_tree``, or a diff git cannot make: compare every file). Uncommitted edits are for
        ``reindex``. The diff is taken under the writer lock: hooks of overlapping commits queue for
        it, and one that read HEAD before a later hook ran would move the last indexed commit back."""
        with self.writer_lock(timeout):
            diff = None if whole_tree else self.commit_changes()
            if diff is None:
                return self.reindex(timeout=timeout)
            return self.reindex(timeout=timeout, only=diff[0], head=diff[1])

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
                    self.catalog.set_meta("last_commit", sha)
                    self._record_commit(parent, sha)
                return sha
        except (CommitFailed, LockHeld) as exc:
            import shlex

            files = " ".join(shlex.quote(p) for p in paths)
            self.warnings.append(
                f"{', '.join(paths)} saved and indexed, but not committed: "
                f"{str(exc).rstrip('.')}. Commit it with: git add {files} && git commit"
            )
            return None

    def _record_commit(self, parent: str | None, sha: str) -> None:
        """Our commit's date as the git dates of the notes in it. Only those columns: the notes
        mdmem writes carry ``created``/``updated`` of their own, which the index already dates them by."""
        from .dating import Dating

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
        a = FilterArgs.of(args, **given)
        return make_filters(a, visible_at=self.now(a.as_of))
