"""The indexer: the one way the index is written. Reindex (whole tree or some notes), the update after
a write, catching up after git without making git wait (``after_git``: a commit's few notes now, a big
checkout, merge, pull or rebase in one background job, ``run_job``), and the cheap check before every
read for what no hook reported (``notice``).

It owns what it writes by: the settings and the note files (``mdmem.toml`` is read again when a
whole-tree pass finds it changed), the current generation's handles it shares with the store
(``current``), and ``.mdmem/`` (``state``: the marks, the locks, the job's request). What follows a write
is told to the listeners given at construction: "notes indexed" once the outermost writer lock is
released, "new generation" before a rebuilt one becomes current (the vector side subscribes to both).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..adapters.config import CONFIG_FILE, Config
from ..adapters.files import Files, is_hidden
from ..core.errors import IndexNotWritten, LockHeld, MdmemError, write_failure
from ..core.note import Note, NoteDates, Problem, now_iso
from .parsing import lexical_doc, read_notes
from .state import JOB_HOOK
from .waits import catchup_wait, inline_max, read_lock_wait

if TYPE_CHECKING:
    from ..adapters.watch import FolderWatch
    from ..results.indexing import ReindexReport
    from .catalog import Catalog, FileState
    from .current import CurrentIndex
    from .lexical import LexicalDoc
    from .state import IndexState

SCHEMA_VERSION = 11  # 2: chunks for vectors; 3: visibility, link targets; 4: visibility mask fields; 5: git dates;
# 6: attachments, titles from the frontmatter told from H1 titles; 7: external refs, person identities;
# 8: packed chunks; 9: links in frontmatter properties; 10: Snowball stems and the exact-form field;
# 11: stop words told before stemming ("does", "why" were indexed as "doe", "whi"), markdown links' labels

CATALOG_BATCH = 500  # notes a full build writes to the catalogue per transaction
NOTICE_EVERY = 0.5  # seconds between two checks for what no hook reported, per store (a process that never watched)
Progress = Callable[[int, int], None]


class IndexListener(Protocol):
    """What follows the index's writes (the vector side, ``Semantic``)."""

    def notes_indexed(self, *, inline: bool) -> object:
        """Notes' chunks changed (run once the outermost writer lock is released); ``inline`` False: a
        read caught up, so nothing heavy may load here."""

    def new_generation(self, directory: Path, catalog: Catalog) -> object:
        """A rebuilt generation (``directory``, ``catalog``) is about to become current."""


def expected_manifest() -> dict[str, Any]:
    """The manifest keys an index this mdmem can use must have (schema and engine version)."""
    from .lexical import engine_version

    return {"schema": SCHEMA_VERSION, "engine": engine_version()}


class Indexer:
    """The one writer of a vault's index (see the module's docstring)."""

    def __init__(
        self,
        root: Path,
        config: Config,
        state: IndexState,
        current: CurrentIndex,
        listeners: Sequence[IndexListener] = (),
    ) -> None:
        self.root = root
        self.config = config
        self.files = Files(root, config.not_notes, config.include)
        self.state = state
        self.current = current
        self.listeners = tuple(listeners)
        # Set by a write whose work changed the notes' chunks: the listeners hear of it once the
        # outermost writer lock is released.
        self.changed = False
        self.warning: str | None = None  # why reads answered from an index that could not be refreshed
        self.catching_up: str | None = None  # why reads answer while a background job catches up (None: not)
        self.watch: FolderWatch | None = None  # a long-running process's watch of the note folders (``watch_files``)
        self.scanned: dict[str, os.stat_result] | None = None  # the notes the last whole-tree pass found
        # With a watch: notes it reported that no write has indexed since (the kernel reports a save once), and
        # whether only a whole-tree pass can tell what changed (the watch just began, or lost track).
        self.pending: set[str] = set()
        self.unsure = False
        self.lock_busy = False  # the last read's wait for another writer's lock ran out
        self._reading = 0  # inside ``reading()``: a read catching up, whose listeners must stay cheap
        self._deciding = 0  # inside ``deciding()``: the rebuild reason is told once
        self._decided: tuple[tuple[int, int, int] | None, str | None] | None = None  # (manifest stat, reason)
        self._noticed_at = float("-inf")
        self._config_stamp: list[int] | None = None  # the stat of the mdmem.toml read (None: unknown)
        self._early: subprocess.Popen[bytes] | None = None  # git's comparison, started by ``start_notice``

    # -- the writer lock and what follows it ---------------------------------------------------

    @contextmanager
    def writer_lock(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the one-writer lock (``IndexState.writer_lock``). When the work under the outermost lock
        changed chunks (``changed``), the listeners hear "notes indexed" after the release: the lock is
        free for them, and whatever they do comes after the write is complete."""
        with self.state.writer_lock(timeout):
            yield
        if self.changed and not self.state.locked_here:
            self._tell_indexed(inline=not self._reading)

    def _tell_indexed(self, *, inline: bool) -> None:
        self.changed = False
        for listener in self.listeners:
            listener.notes_indexed(inline=inline)

    @contextmanager
    def reading(self) -> Iterator[None]:
        """A read's catching up (``IndexStore.repair``): its writes tell the listeners ``inline`` False,
        so a BM25 read never loads the embedding model or the vector index."""
        self._reading += 1
        try:
            yield
        finally:
            self._reading -= 1

    # -- whether the index can be used -----------------------------------------------------------

    def rebuild_reason(self) -> str | None:
        """Why the index must be rebuilt from scratch, or None if it is usable. Within ``deciding()``
        it is read once, and again only when the manifest was replaced meanwhile (a rebuild)."""
        if not self._deciding:
            return self.state.rebuild_reason(expected_manifest())
        stamp = self._manifest_stamp()
        if self._decided is None or self._decided[0] != stamp:
            self._decided = (stamp, self.state.rebuild_reason(expected_manifest()))
        return self._decided[1]

    @contextmanager
    def deciding(self) -> Iterator[None]:
        """One operation (a hook, a reindex) within which the rebuild reason is read once."""
        self._deciding += 1
        try:
            yield
        finally:
            self._deciding -= 1
            if not self._deciding:
                self._decided = None

    def _manifest_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.state.manifest_path)
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    # -- writing the index -------------------------------------------------------------------------

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
        with self.deciding(), self.writer_lock(timeout if wait else 0.0):
            report = self._update(full, progress, only, head)
            if head and only is not None and not report.full:
                self.current.catalog.set_meta("last_commit", head)
                report = replace(report, commit=head)
        return replace(report, seconds=time.perf_counter() - started)

    def update(self, paths: list[str], *, head: str | None = None) -> ReindexReport:
        """Under the writer lock: index these vault-relative paths now (after a write); ``head``: the
        commit that has just recorded them (mdmem's own, made from the last indexed one), which dates them."""
        return self._update(False, None, paths, head)

    def _update(
        self, full: bool, progress: Progress | None, only: list[str] | None, head: str | None = None
    ) -> ReindexReport:
        """reindex() under the writer lock.

        The "dirty" mark is written first and removed last: if this process is killed (or the
        disk fills) in between, the next command sees the mark and finishes the job.
        """
        reported = set(self.pending)  # what the watch reported: each compared by its text, not its stat
        if only is not None and reported:
            only = sorted({*only, *reported})
        pending = self.state.dirty_paths()
        self.state.tidy()
        self.files.remove_placed_temps([p for p in pending or [] if p != "*"])
        if only is not None and (self.state.stale() or (pending is not None and "*" in pending) or CONFIG_FILE in only):
            only = None  # changes nobody recorded (a hook that could not update, a killed run), or a new
            # mdmem.toml (what is a note may have changed): compare all
        elif only is not None and pending:
            only = sorted({*only, *pending})  # notes a killed writer placed but did not index
        whole_check = self.watch is not None and only is None  # begun after the watch: it sees what came before
        self.state.mark_dirty(["*"] if only is None else only, replace=True)
        self.state.clear_stale()
        # A whole-tree pass records the folders' mtimes, taken before it scans (see notice()), and follows
        # the mdmem.toml it finds.
        taken, folders = (time.time_ns(), self.files.folders()) if only is None else (0, None)
        config = self.follow_config() if only is None else None
        report = self._update_marked(full, progress, only, head, reported)
        self.changed |= report.full or report.changed > 0  # chunks changed: vectors are due
        if folders is not None:
            self.record_scan(folders, taken, config)
        self.state.clear_dirty()
        self.pending -= reported
        if whole_check:
            self.unsure = False
        return report

    def _update_marked(
        self, full: bool, progress: Progress | None, only: list[str] | None, head: str | None, recheck: set[str]
    ) -> ReindexReport:
        reason = self.rebuild_reason()
        if reason is None and not full:
            try:
                return self._incremental(progress, only, head, recheck)
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
        from ..adapters.disk import check_room, size_of

        old = self.state.generation()
        need = size_of([self.state.dir / old]) if old else 0  # the new one is about as big as the last
        check_room(self.state.dir, need)  # fail before writing, not with a disk filled by half an index
        self.current.close()
        gen = self.state.new_generation()
        try:
            return self._build(gen, progress)
        except BaseException as exc:
            self.current.close()
            if isinstance(exc, Exception) and not getattr(exc, "need", None):  # for a full disk's message:
                exc.need = need or 2 * size_of([self.state.dir / gen])  # type: ignore[attr-defined]  # (no old: what fitted, twice)
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
        stats = self.scanned = self.files.scan(attachments)
        added: list[str] = []
        problems: list[Problem] = []
        batch: list[tuple[Note, FileState, NoteDates]] = []
        catalog = Catalog(directory / "catalog.sqlite")

        def docs() -> Iterator[LexicalDoc]:
            # Each note goes to both stores as it is read, the catalogue a batch at a time: keeping every
            # parsed note for the catalogue until the BM25 segment was written made a big build's peak memory.
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
            for listener in self.listeners:  # readers of the new generation keep every cached vector
                listener.new_generation(directory, catalog)
        finally:
            catalog.close()
        from ..core.version import __version__

        self.state.switch({**expected_manifest(), "generation": gen, "mdmem": __version__, "created": now_iso()})
        self._decided = None  # a new manifest: the index is usable now
        self.current.follow()
        return ReindexReport(full=True, added=added, problems=problems, commit=commit)

    def _incremental(
        self, progress: Progress | None, only: list[str] | None, head: str | None = None, recheck: Collection[str] = ()
    ) -> ReindexReport:
        from ..results.indexing import ReindexReport
        from .dating import Dating

        self.current.follow()
        catalog, lexical = self.current.catalog, self.current.lexical
        lexical.doc_count()  # opening fails on a damaged index, which then gets rebuilt
        attachments: list[str] = []
        last = catalog.get_meta("last_commit")
        commit = self.head() if only is None else (head or last)
        # Commits since the last index date the notes they touched, even a note whose
        # file did not change on disk (a commit of an edit indexed before it was committed).
        dating = Dating(self.root, commit, since=last)
        moved = dating.changes(catalog)
        # A commit's catch-up reads the rows of its own notes only (all of them cost a big vault's hook).
        stamps = catalog.stamps(None if only is None else [*only, *moved])
        if only is None:
            stats = self.scanned = self.files.scan(attachments)
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
        # ``recheck``: notes the watch saw written; a save within the same mtime tick at the same size
        # leaves the stat as it was, so their text decides
        candidates = [
            p for p, st in stats.items() if stamps.get(p) != (st.st_mtime_ns, st.st_size) or p in moved or p in recheck
        ]
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
        self.current.follow()
        last = self.current.catalog.get_meta("last_commit")
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

    # -- git hooks and the job -------------------------------------------------------------------

    def after_git(self, hook: str, *, timeout: float, whole_tree: bool = False) -> ReindexReport | str:
        """What a git hook does. A small change (a commit: at most ``inline_max()`` notes) is indexed
        now, as ``catch_up``, and its report returned. A bigger one, or a rebuild, goes to the
        background job, and the returned line says so: git never waits for it. While a job is pending
        every hook hands over to it (it, or one follow-up, reaches the final state) rather than wait
        for the writer lock the job holds. ``hook`` "catch-up" is that job (``run_job``)."""
        if hook == JOB_HOOK:
            self.run_job()
            return "caught up"
        with self.deciding():  # the rebuild reason, told once for the whole hook
            return self._after_git(hook, timeout, whole_tree)

    def _after_git(self, hook: str, timeout: float, whole_tree: bool) -> ReindexReport | str:
        reason = self.rebuild_reason()
        if reason is not None:
            self.state.request_job(f"rebuilding the index: {reason}")
            return f"rebuilding the index in the background ({reason})"
        if self.state.job_request() is not None:
            self.state.request_job(hook)
            return "a background catch-up is under way; it indexes this change too"
        if not whole_tree:
            size = self._change_size()
            if size > inline_max():
                self.state.request_job(f"{hook}: {size} notes changed")
                return f"{size} notes changed; indexing them in the background (searches say so until done)"
        return self.catch_up(timeout=timeout, whole_tree=whole_tree)

    def _change_size(self) -> int:
        """Notes the commits since the last index touched that are here, on disk or indexed (all notes
        when git cannot tell): a sparse checkout's diff also names the files outside it, which this
        index never sees (a checkout of 3,662 notes said "17896 notes changed")."""
        diff = self.commit_changes()
        if diff is None:
            return self.current.catalog.count()
        indexed = self.current.catalog.stamps(diff[0])
        return sum(1 for p in diff[0] if p in indexed or (self.root / p).exists())

    def run_job(self, *, wait: bool = True) -> bool:
        """The background catch-up (``reindex --git-hook catch-up``, or a read finishing a killed one):
        whole-tree passes (a full rebuild when the index needs one) under the job's running lock,
        until no request came during a pass; after each the listeners hear "notes indexed" (the vector
        side restores what the cache holds). False when ``wait`` is off and another job runs."""
        with self.state.job_slot(wait) as mine:
            if not mine:
                return False
            while True:
                token = (self.state.job_request() or {}).get("token")
                self.reindex(wait=wait)
                self._tell_indexed(inline=True)
                if self.state.finish_job(token):
                    return True

    # -- before a read ---------------------------------------------------------------------------

    def notice(self) -> None:
        """Before a read (``repair``): catch up with what no hook reported, cheaply, so the answer comes
        from the files as they are now. In order: a pending background job (wait for it, at most
        ``catchup_wait()`` seconds; a job that died is finished here), HEAD against the commit the index
        last saw (read from ``.git``'s files: ``reset --hard``, ``stash``, a commit made with hooks off),
        the note folders' mtimes against those of the last whole scan (notes added, removed, renamed),
        ``mdmem.toml``'s stat, then each note file against the stat the catalogue recorded (``edited``:
        an editor's in-place save changes no folder). A change found is indexed now, or by the
        background job when it is big (more than ``inline_max()`` notes between the commits); when the
        answer must come from the index as it is, ``catching_up`` and ``warning`` say so. Another
        writer's lock is waited for ``read_lock_wait()`` seconds; past that the answer comes from the
        index as it is, ``warning`` says so, and what the watch reported stays ``pending`` for the next
        read. Checked before every read in a process that asked for a watch, else at most every
        ``NOTICE_EVERY`` seconds per store, and never under this store's own writer lock."""
        early, self._early = self._early, None
        procs = [early]
        try:
            edited = self._notice(early, procs)
        finally:
            for proc in procs:
                _stop(proc)  # not needed (a whole-tree pass compares every file)
        if edited == []:
            return
        try:
            # the whole tree (None: what the commits and the edits changed), or the edited notes alone;
            # another writer holds the lock for a moment (a hook, the embedding job, another warm process)
            # once per busy spell: after a wait ran out, reads only try the lock until they get it (a
            # rebuild elsewhere holds it for minutes; a read that waited each time would add up)
            self.reindex(timeout=0.0 if self.lock_busy else read_lock_wait(self.state.lock_timeout), only=edited)
            self.lock_busy = False
        except LockHeld as exc:
            # still held: the answer comes from the index as it is, and says so; the watch's reports stay
            # pending, so the next read indexes them
            self.lock_busy = True
            self.warning = f"index not updated, answers may miss the latest edits: {exc}"
        except IndexNotWritten as exc:
            self.warning = f"index not updated: {exc}"

    def start_notice(self) -> None:
        """At the start of a read: start git's comparison of the files (``notice`` reads it) before the read
        loads its engines (their imports), so git's time hides behind them on another core."""
        from ..adapters.git import head_cheap

        if self._early is None and self._notice_due():
            self._early = self._start_edit_check(head_cheap(self.root))

    def drop_early(self) -> None:
        """Stop the git listing ``start_notice`` began if ``notice`` did not take it (a rebuild, an error)."""
        early, self._early = self._early, None
        _stop(early)

    def _notice_due(self) -> bool:
        return not self.state.locked_here and (
            self.watch is not None or self.unsure or time.monotonic() - self._noticed_at >= NOTICE_EVERY
        )

    def _notice(
        self, early: subprocess.Popen[bytes] | None, procs: list[subprocess.Popen[bytes] | None]
    ) -> list[str] | None:
        """``notice``'s checks: the notes to index again ([]: none), or None for a whole-tree pass."""
        from ..adapters.git import head_cheap

        if not self._notice_due():
            return []  # (with a watch the check is nearly free: every read makes it)
        self._noticed_at = time.monotonic()
        if self.catching_up is not None and self.warning == self._catching_up_line():
            self.warning = None
        self.catching_up = None
        request = self.state.job_request()
        if request is not None and not self._job_done():
            self._say_catching_up(str((self.state.job_request() or request).get("why") or "git"))
            return []
        head = head_cheap(self.root) or self.head()
        git = early if early is not None else self._start_edit_check(head)  # git compares files meanwhile
        procs.append(git)
        return self._changes(head, git)

    def _changes(self, head: str | None, git: subprocess.Popen[bytes] | None) -> list[str] | None:
        """For ``notice``: the notes to index again ([]: none, or a big change the background job still
        works on), or None for a whole-tree pass."""
        from ..adapters.git import changed_since

        last = self.current.catalog.get_meta("last_commit")
        if head != last:
            if head and last:
                diff = changed_since(self.root, last, head)
                size = len(diff) if diff is not None else self.current.catalog.count()
                if size > inline_max():
                    why = f"HEAD moved without a hook: {size} notes changed"
                    self.state.request_job(why)
                    if not self._job_done():
                        self._say_catching_up(why)
                        return []
                    return self._changes(head, git)  # the job caught up; edits since are still to see
            return None
        # A watch that has not lost track names each file added, removed or renamed (mdmem's own add in
        # another process too): the folders' mtimes would only make every such save a whole-tree pass.
        watched = self.watch is not None and self.watch.fd is not None and not self.unsure
        if self.state.folders_changed(self.current.generation, dirs=not watched):
            return None
        return self.edited(git)

    def _job_done(self) -> bool:
        """Whether the pending background catch-up is done: finished here when it died (or never
        started), else waited for, at most ``catchup_wait()`` seconds (a read after a checkout answers
        from the commit now checked out, after a wait that grows with the notes changed)."""
        if not self.state.job_active():
            return self._finish_job_here()
        deadline = time.monotonic() + catchup_wait()
        while self.state.job_request() is not None:
            if time.monotonic() >= deadline:
                return False
            if not self.state.job_active():
                return self._finish_job_here()
            time.sleep(0.05)
        return True

    # -- files edited since they were indexed ------------------------------------------------------

    def watch_files(self) -> bool:
        """For a process that stays up (serve, MCP): watch the note folders, so a read learns what changed
        from the kernel's events instead of comparing every file (``FolderWatch``: no thread, no CPU while
        idle). False where that is not possible (not Linux, no watches left): reads compare the files."""
        from ..adapters.watch import FolderWatch

        if self.watch is None:
            try:
                self.watch = FolderWatch(self.root, list(self.files.folders()))
            except OSError:
                self.unsure = True  # no watch: every read compares the files, as a cold read does
                return False
            self._noticed_at = float("-inf")
            self.unsure = True  # what changed before the watch began: compared file by file, once
            self.notice()
        return True

    def follow_config(self) -> list[int] | None:
        """Before a whole-tree pass: read ``mdmem.toml`` again if it changed since this process read it (a
        checkout to a commit with other excludes); returns the stat the pass follows."""
        from ..adapters.config import load_config

        stamp = self.state.config_stamp()
        if stamp != self._config_stamp:
            self.config = load_config(self.root)
            self.files.exclude, self.files.include = self.config.not_notes, self.config.include
            self._config_stamp = stamp
        return stamp

    def record_scan(self, folders: dict[str, int], taken: int, config: list[int] | None) -> None:
        """After a whole-tree pass: the folders' stamps, the notes git's comparison cannot vouch for
        (compared one by one before reads: untracked, or differing from HEAD) and the mdmem.toml the
        pass followed."""
        from ..adapters.git import head_cheap, listed, untracked, worktree_changes

        notes, self.scanned = list(self.scanned or {}), None  # (a server need not keep 50k stats)
        in_git = head_cheap(self.root) or self.head()
        aside: set[str] = set()
        if notes and in_git:
            aside.update(untracked(self.root, notes) or ())
            try:
                aside.update(listed(worktree_changes(self.root)) or ())
            except OSError:
                pass
        self.state.record_folders(self.current.generation, folders, taken, one_by_one=sorted(aside), config=config)

    def _start_edit_check(self, head: str | None) -> subprocess.Popen[bytes] | None:
        """git listing the notes that may differ from HEAD (``git.worktree_changes``), started now so it
        runs beside the other checks; None where a watch or a stat loop does the job instead."""
        from ..adapters.git import worktree_changes

        if self.watch is not None or head is None:
            return None
        try:
            return worktree_changes(self.root)
        except OSError:
            return None

    def edited(self, git: subprocess.Popen[bytes] | None = None) -> list[str] | None:
        """The notes whose file differs from what the catalogue recorded (size or mtime: written in
        place, replaced, removed, excluded since), or None when only a whole-tree pass can tell (the
        watch lost track, git failed). Candidates come from the process's folder watch, else from git
        (its listed files and the notes it cannot vouch for, ``IndexState.one_by_one``), else every
        indexed note."""
        from ..adapters.git import listed

        if self.watch is not None:
            changed = self.watch.changes()
            if changed is None or self.unsure:
                self.unsure = True  # until a whole-tree pass begun since has compared every file
                return None
            self.pending.update(p for p in changed if p.lower().endswith(".md") and not is_hidden(p))
            candidates = sorted(self.pending)
        elif git is not None:
            found = listed(git)
            if found is None:
                return None
            aside = self.state.one_by_one(self.current.generation)
            new = sorted(set(found) - set(aside))
            if new:  # saved back to HEAD's text later, git would list them no more
                self.state.add_one_by_one(self.current.generation, new)
            candidates = [*found, *aside]
        else:
            candidates = None  # no git: every note's stat (~2x git's time)
        stamps = self.current.catalog.stamps(candidates)
        out = []
        for rel in stamps if candidates is None else dict.fromkeys(candidates):
            if rel not in stamps and (is_hidden(rel) or self.files.excluded(rel)):
                continue  # not a note
            try:
                st = os.stat(self.root / rel)
            except OSError:
                if rel in stamps:
                    out.append(rel)  # removed: dropped from the index
                continue
            if stamps.get(rel) != (st.st_mtime_ns, st.st_size) or (rel in self.pending and self._rewritten(rel)):
                out.append(rel)
        if self.watch is not None:
            self.pending = set(out)  # the others are indexed as they are now
        return out

    def _rewritten(self, rel: str) -> bool:
        """Whether a note the watch saw written differs from the text indexed (its stat may not: same tick)."""
        from ..adapters.files import content_hash

        try:
            raw = self.files.safe_path(rel).read_bytes()
        except (OSError, MdmemError):
            return True  # the reindex decides
        return self.current.catalog.hashes([rel]).get(rel) != content_hash(raw)

    def _finish_job_here(self) -> bool:
        try:
            return self.run_job(wait=False)
        except LockHeld:
            return False

    def _catching_up_line(self) -> str:
        return f"index catching up in the background ({self.catching_up}); answers may miss those changes"

    def _say_catching_up(self, why: str) -> None:
        self.catching_up = why
        if self.warning is None:
            self.warning = self._catching_up_line()


def _stop(proc: subprocess.Popen[bytes] | None) -> None:
    """End a git listing nobody will read."""
    if proc is not None and proc.returncode is None:
        proc.kill()
        proc.communicate()
