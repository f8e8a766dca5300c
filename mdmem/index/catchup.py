"""Catching up after git without making git wait, and noticing what no hook reported.

``CatchUp`` is a part of ``IndexStore`` (a mixin, kept apart so the store stays readable): what a git
hook does (``after_git``: a commit's few notes now, a big checkout, merge, pull or rebase in one
background job), that job (``run_job``), and the cheap check before every read (``notice``).
``state.py`` keeps the job's request mark and its locks; ``githook.py`` is the edge that runs both.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import IndexNotWritten, LockHeld
from .state import JOB_HOOK, IndexState

if TYPE_CHECKING:
    from ..results.indexing import ReindexReport
    from .catalog import Catalog

INLINE_MAX = 150  # notes a hook (or a read) indexes itself (~0.5 s here); more go to the background job
NOTICE_EVERY = 0.5  # seconds between two checks for what no hook reported, per store (a warm server)


class CatchUp:
    """The store's catching up after git (see the module's docstring)."""

    catching_up: str | None = None  # why reads answer while a background job catches up (None: not)
    _noticed_at: float = float("-inf")

    if TYPE_CHECKING:  # provided by IndexStore
        root: Path
        state: IndexState
        index_warning: str | None

        @property
        def catalog(self) -> Catalog: ...
        @property
        def generation(self) -> str: ...
        def head(self) -> str | None: ...
        def rebuild_reason(self) -> str | None: ...
        def commit_changes(self) -> tuple[list[str], str] | None: ...
        def catch_up(self, *, timeout: float, whole_tree: bool = False) -> ReindexReport: ...
        def reindex(self, full: bool = False, *, wait: bool = True) -> ReindexReport: ...

    # -- git hooks and the job -------------------------------------------------------------------

    def after_git(self, hook: str, *, timeout: float, whole_tree: bool = False,
                  after_pass: Callable[[], object] | None = None) -> ReindexReport | str:
        """What a git hook does. A small change (a commit: at most ``inline_max()`` notes) is indexed
        now, as ``catch_up``, and its report returned. A bigger one, or a rebuild, goes to the
        background job, and the returned line says so: git never waits for it. While a job is pending
        every hook hands over to it (it, or one follow-up, reaches the final state) rather than wait
        for the writer lock the job holds. ``hook`` "catch-up" is that job (``run_job``)."""
        if hook == JOB_HOOK:
            self.run_job(after_pass=after_pass)
            return "caught up"
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
        """Notes the commits since the last index touched (all notes when git cannot tell)."""
        diff = self.commit_changes()
        return len(diff[0]) if diff is not None else self.catalog.count()

    def run_job(self, *, wait: bool = True, after_pass: Callable[[], object] | None = None) -> bool:
        """The background catch-up (``reindex --git-hook catch-up``, or a read finishing a killed one):
        whole-tree passes (a full rebuild when the index needs one) under the job's running lock,
        until no request came during a pass; ``after_pass`` (the vector side's restore from the cache)
        runs after each. False when ``wait`` is off and another job runs."""
        with self.state.job_slot(wait) as mine:
            if not mine:
                return False
            while True:
                token = (self.state.job_request() or {}).get("token")
                self.reindex(wait=wait)
                if after_pass is not None:
                    after_pass()
                if self.state.finish_job(token):
                    return True

    # -- before a read ---------------------------------------------------------------------------

    def notice(self) -> None:
        """Before a read (``repair``): catch up with what no hook reported, cheaply. ``reset --hard``,
        ``stash``, a commit made with hooks off, notes added or removed outside git: HEAD against the
        commit the index last saw (read from ``.git``'s files), and the note folders' mtimes against
        those of the last whole scan (~0.2 ms together on 10k notes in 20 folders; a stat of every
        file would cost ~35 ms, so an edit that rewrites a file in place is not seen here: ``status``
        and ``reindex`` see it). A change found is indexed now, or by the background job when it is
        big (more than ``inline_max()`` notes between the commits): then ``catching_up`` and
        ``index_warning`` say so and the answer comes from the index as it is. A request a killed job
        left is finished here. Checked at most every ``NOTICE_EVERY`` seconds per store, and never
        under this store's own writer lock."""
        from ..adapters.git import changed_since, head_cheap

        now = time.monotonic()
        if self.state.locked_here or now - self._noticed_at < NOTICE_EVERY:
            return
        self._noticed_at = now
        if self.catching_up is not None and self.index_warning == self._catching_up_line():
            self.index_warning = None
        self.catching_up = None
        request = self.state.job_request()
        if request is not None:
            # A job is queued or running; else it was killed (or never started): finish it here.
            if self.state.job_active() or not self._finish_job_here():
                self._say_catching_up(str(request.get("why") or "git"))
            return
        head = head_cheap(self.root) or self.head()
        last = self.catalog.get_meta("last_commit")
        if head != last:
            if head and last:
                diff = changed_since(self.root, last, head)
                size = len(diff) if diff is not None else self.catalog.count()
                if size > inline_max():
                    why = f"HEAD moved without a hook: {size} notes changed"
                    self.state.request_job(why)
                    self._say_catching_up(why)
                    return
        elif not self.state.folders_changed(self.generation):
            return
        try:
            self.reindex(wait=False)  # the whole tree: what the commits and the edits changed
        except LockHeld:
            pass  # another writer is at work; the answer comes from the index as it is
        except IndexNotWritten as exc:
            self.index_warning = f"index not updated: {exc}"

    def _finish_job_here(self) -> bool:
        try:
            return self.run_job(wait=False)
        except LockHeld:
            return False

    def _catching_up_line(self) -> str:
        return f"index catching up in the background ({self.catching_up}); answers may miss those changes"

    def _say_catching_up(self, why: str) -> None:
        self.catching_up = why
        if self.index_warning is None:
            self.index_warning = self._catching_up_line()


def inline_max() -> int:
    """``INLINE_MAX``, or $MDMEM_INLINE_MAX (tests use a small vault)."""
    try:
        return int(os.environ.get("MDMEM_INLINE_MAX", INLINE_MAX))
    except ValueError:
        return INLINE_MAX
