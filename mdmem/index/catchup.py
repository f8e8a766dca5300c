"""Catching up after git without making git wait, and noticing what no hook reported.

``CatchUp`` is the store's catching up (``IndexStore.catchup``), a job of its own: what a git hook
does (``after_git``: a commit's few notes now, a big checkout, merge, pull or rebase in one background
job), that job (``run_job``), and the cheap check before every read (``notice``).
``state.py`` keeps the job's request mark and its locks; ``githook.py`` is the edge that runs both.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from ..adapters.files import is_hidden
from ..core.errors import IndexNotWritten, LockHeld
from .state import JOB_HOOK

if TYPE_CHECKING:
    from pathlib import Path

    from ..adapters.config import Config
    from ..adapters.files import Files
    from ..adapters.watch import FolderWatch
    from ..results.indexing import ReindexReport
    from .catalog import Catalog
    from .state import IndexState

INLINE_MAX = 150  # notes a hook (or a read) indexes itself (~0.5 s here); more go to the background job
NOTICE_EVERY = 0.5  # seconds between two checks for what no hook reported, per store (a warm server)
CATCHUP_WAIT = 30.0  # seconds a read waits for the background catch-up (600 notes: ~7 s here at load 4)


class Store(Protocol):
    """What catching up uses of its store (``IndexStore``)."""

    root: Path
    state: IndexState
    files: Files
    config: Config
    index_warning: str | None

    @property
    def catalog(self) -> Catalog: ...
    @property
    def generation(self) -> str: ...
    def head(self) -> str | None: ...
    def rebuild_reason(self) -> str | None: ...
    def commit_changes(self) -> tuple[list[str], str] | None: ...
    def catch_up(self, *, timeout: float, whole_tree: bool = False) -> ReindexReport: ...
    def reindex(self, full: bool = False, *, wait: bool = True, only: list[str] | None = None) -> ReindexReport: ...


class CatchUp:
    """A store's catching up after git (see the module's docstring): its own state, the store's index."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.catching_up: str | None = None  # why reads answer while a background job catches up (None: not)
        self._noticed_at = float("-inf")
        self.watch: FolderWatch | None = None  # a long-running process's watch of the note folders (``watch_files``)
        self.scanned: dict[str, os.stat_result] | None = None  # the notes the last whole-tree pass found
        self._config_stamp: list[int] | None = None  # the stat of the mdmem.toml read (None: unknown)
        self._early: subprocess.Popen[bytes] | None = None  # git's comparison, started by ``start_notice``

    # -- git hooks and the job -------------------------------------------------------------------

    def after_git(
        self, hook: str, *, timeout: float, whole_tree: bool = False, after_pass: Callable[[], object] | None = None
    ) -> ReindexReport | str:
        """What a git hook does. A small change (a commit: at most ``inline_max()`` notes) is indexed
        now, as ``catch_up``, and its report returned. A bigger one, or a rebuild, goes to the
        background job, and the returned line says so: git never waits for it. While a job is pending
        every hook hands over to it (it, or one follow-up, reaches the final state) rather than wait
        for the writer lock the job holds. ``hook`` "catch-up" is that job (``run_job``)."""
        if hook == JOB_HOOK:
            self.run_job(after_pass=after_pass)
            return "caught up"
        reason = self.store.rebuild_reason()
        if reason is not None:
            self.store.state.request_job(f"rebuilding the index: {reason}")
            return f"rebuilding the index in the background ({reason})"
        if self.store.state.job_request() is not None:
            self.store.state.request_job(hook)
            return "a background catch-up is under way; it indexes this change too"
        if not whole_tree:
            size = self._change_size()
            if size > inline_max():
                self.store.state.request_job(f"{hook}: {size} notes changed")
                return f"{size} notes changed; indexing them in the background (searches say so until done)"
        return self.store.catch_up(timeout=timeout, whole_tree=whole_tree)

    def _change_size(self) -> int:
        """Notes the commits since the last index touched (all notes when git cannot tell)."""
        diff = self.store.commit_changes()
        return len(diff[0]) if diff is not None else self.store.catalog.count()

    def run_job(self, *, wait: bool = True, after_pass: Callable[[], object] | None = None) -> bool:
        """The background catch-up (``reindex --git-hook catch-up``, or a read finishing a killed one):
        whole-tree passes (a full rebuild when the index needs one) under the job's running lock,
        until no request came during a pass; ``after_pass`` (the vector side's restore from the cache)
        runs after each. False when ``wait`` is off and another job runs."""
        with self.store.state.job_slot(wait) as mine:
            if not mine:
                return False
            while True:
                token = (self.store.state.job_request() or {}).get("token")
                self.store.reindex(wait=wait)
                if after_pass is not None:
                    after_pass()
                if self.store.state.finish_job(token):
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
        answer must come from the index as it is, ``catching_up`` and ``index_warning`` say so. Checked
        before every read with a watch, else at most every ``NOTICE_EVERY`` seconds per store (a warm
        process without a watch), and never under this store's own writer lock."""
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
            # the whole tree (None: what the commits and the edits changed), or the edited notes alone
            self.store.reindex(wait=False, only=edited)
        except LockHeld:
            pass  # another writer is at work; the answer comes from the index as it is
        except IndexNotWritten as exc:
            self.store.index_warning = f"index not updated: {exc}"

    def start_notice(self) -> None:
        """At the start of a read: start git's comparison of the files (``notice`` reads it) before the read
        loads its engines (~50 ms of imports), so git's time hides behind them on another core."""
        from ..adapters.git import head_cheap

        if self._early is None and self._notice_due():
            self._early = self._start_edit_check(head_cheap(self.store.root))

    def drop_early(self) -> None:
        """Stop the git listing ``start_notice`` began if ``notice`` did not take it (a rebuild, an error)."""
        early, self._early = self._early, None
        _stop(early)

    def _notice_due(self) -> bool:
        return not self.store.state.locked_here and (
            self.watch is not None or time.monotonic() - self._noticed_at >= NOTICE_EVERY
        )

    def _notice(
        self, early: subprocess.Popen[bytes] | None, procs: list[subprocess.Popen[bytes] | None]
    ) -> list[str] | None:
        """``notice``'s checks: the notes to index again ([]: none), or None for a whole-tree pass."""
        from ..adapters.git import head_cheap

        if not self._notice_due():
            return []  # (with a watch the check costs ~0.1 ms: every read makes it)
        self._noticed_at = time.monotonic()
        if self.catching_up is not None and self.store.index_warning == self._catching_up_line():
            self.store.index_warning = None
        self.catching_up = None
        request = self.store.state.job_request()
        if request is not None and not self._job_done():
            self._say_catching_up(str((self.store.state.job_request() or request).get("why") or "git"))
            return []
        head = head_cheap(self.store.root) or self.store.head()
        git = early if early is not None else self._start_edit_check(head)  # git compares files meanwhile
        procs.append(git)
        return self._changes(head, git)

    def _changes(self, head: str | None, git: subprocess.Popen[bytes] | None) -> list[str] | None:
        """For ``notice``: the notes to index again ([]: none, or a big change the background job still
        works on), or None for a whole-tree pass."""
        from ..adapters.git import changed_since

        last = self.store.catalog.get_meta("last_commit")
        if head != last:
            if head and last:
                diff = changed_since(self.store.root, last, head)
                size = len(diff) if diff is not None else self.store.catalog.count()
                if size > inline_max():
                    why = f"HEAD moved without a hook: {size} notes changed"
                    self.store.state.request_job(why)
                    if not self._job_done():
                        self._say_catching_up(why)
                        return []
                    return self._changes(head, git)  # the job caught up; edits since are still to see
            return None
        if self.store.state.folders_changed(self.store.generation):
            return None
        return self.edited(git)

    def _job_done(self) -> bool:
        """Whether the pending background catch-up is done: finished here when it died (or never
        started), else waited for, at most ``catchup_wait()`` seconds (a read after a checkout answers
        from the commit now checked out: ~1-2 s per hundred notes here)."""
        if not self.store.state.job_active():
            return self._finish_job_here()
        deadline = time.monotonic() + catchup_wait()
        while self.store.state.job_request() is not None:
            if time.monotonic() >= deadline:
                return False
            if not self.store.state.job_active():
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
                self.watch = FolderWatch(self.store.root, list(self.store.files.folders()))
            except OSError:
                return False
            self._noticed_at = float("-inf")
            self.notice()  # what changed before the watch began
        return True

    def follow_config(self) -> list[int] | None:
        """Before a whole-tree pass: read ``mdmem.toml`` again if it changed since this process read it (a
        checkout to a commit with other excludes); returns the stat the pass follows."""
        from ..adapters.config import load_config

        stamp = self.store.state.config_stamp()
        if stamp != self._config_stamp:
            self.store.config = load_config(self.store.root)
            self.store.files.exclude = self.store.config.exclude
            self._config_stamp = stamp
        return stamp

    def record_scan(self, folders: dict[str, int], taken: int, config: list[int] | None) -> None:
        """After a whole-tree pass: the folders' stamps, the notes git's comparison cannot vouch for
        (compared one by one before reads: untracked, or differing from HEAD) and the mdmem.toml the
        pass followed."""
        from ..adapters.git import head_cheap, listed, untracked, worktree_changes

        notes, self.scanned = list(self.scanned or {}), None  # (a server need not keep 50k stats)
        in_git = head_cheap(self.store.root) or self.store.head()
        aside: set[str] = set()
        if notes and in_git:
            aside.update(untracked(self.store.root, notes) or ())
            try:
                aside.update(listed(worktree_changes(self.store.root)) or ())
            except OSError:
                pass
        self.store.state.record_folders(self.store.generation, folders, taken, one_by_one=sorted(aside), config=config)

    def _start_edit_check(self, head: str | None) -> subprocess.Popen[bytes] | None:
        """git listing the notes that may differ from HEAD (``git.worktree_changes``), started now so it
        runs beside the other checks; None where a watch or a stat loop does the job instead."""
        from ..adapters.git import worktree_changes

        if self.watch is not None or head is None:
            return None
        try:
            return worktree_changes(self.store.root)
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
            if changed is None:
                return None
            candidates = [p for p in changed if p.lower().endswith(".md") and not is_hidden(p)]
        elif git is not None:
            found = listed(git)
            if found is None:
                return None
            aside = self.store.state.one_by_one(self.store.generation)
            new = sorted(set(found) - set(aside))
            if new:  # saved back to HEAD's text later, git would list them no more
                self.store.state.add_one_by_one(self.store.generation, new)
            candidates = [*found, *aside]
        else:
            candidates = None  # no git: every note's stat (~2x git's time)
        stamps = self.store.catalog.stamps(candidates)
        out = []
        for rel in stamps if candidates is None else dict.fromkeys(candidates):
            if rel not in stamps and (is_hidden(rel) or self.store.files.excluded(rel)):
                continue  # not a note
            try:
                st = os.stat(self.store.root / rel)
            except OSError:
                if rel in stamps:
                    out.append(rel)  # removed: dropped from the index
                continue
            if stamps.get(rel) != (st.st_mtime_ns, st.st_size):
                out.append(rel)
        return out

    def _finish_job_here(self) -> bool:
        try:
            return self.run_job(wait=False)
        except LockHeld:
            return False

    def _catching_up_line(self) -> str:
        return f"index catching up in the background ({self.catching_up}); answers may miss those changes"

    def _say_catching_up(self, why: str) -> None:
        self.catching_up = why
        if self.store.index_warning is None:
            self.store.index_warning = self._catching_up_line()


def _stop(proc: subprocess.Popen[bytes] | None) -> None:
    """End a git listing nobody will read."""
    if proc is not None and proc.returncode is None:
        proc.kill()
        proc.communicate()


def catchup_wait() -> float:
    """Seconds a read waits for the background catch-up before it answers from the index as it is:
    ``CATCHUP_WAIT``, or $MDMEM_CATCHUP_WAIT (the prompt hook sets what its time budget leaves)."""
    try:
        return max(0.0, float(os.environ.get("MDMEM_CATCHUP_WAIT", CATCHUP_WAIT)))
    except ValueError:
        return CATCHUP_WAIT


def inline_max() -> int:
    """``INLINE_MAX``, or $MDMEM_INLINE_MAX (tests use a small vault)."""
    try:
        return int(os.environ.get("MDMEM_INLINE_MAX", INLINE_MAX))
    except ValueError:
        return INLINE_MAX
