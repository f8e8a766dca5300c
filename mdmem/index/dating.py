"""Dates from git for one reindex: a note without ``created``/``updated`` of its own is
dated by the first and last commit that touched its file, following renames.

One ``git log`` pass gives every file's commits: over the whole history for a full index (started
in the background while the notes are parsed), over the new commits only when the index catches up
with commits that descend from the last indexed one; a file that arrives in them is dated by them,
one that was there keeps its first commit and moves its last. A checkout back, a rebase or a reset
(HEAD no longer descends from the last indexed commit) walks the whole history again. The file's
mtime counts only where git does not know the file, or for an edit not committed yet.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..adapters.git import History, PendingHistory, modified_files, tracked_files
from ..core.note import Note, NoteDates, note_dates

if TYPE_CHECKING:
    from .catalog import Catalog

GitDates = tuple[float, float]  # (first commit, last commit), author times


class Dating:
    """The git side of the dates for one reindex: what the commits from ``since`` to ``head`` did."""

    def __init__(self, root: Path, head: str | None, since: str | None = None) -> None:
        self.root, self.head = root, head
        self.moved = head is not None and head != since  # no new commits: the stored dates hold
        self._pending = PendingHistory(root, since, head) if head is not None and self.moved else None
        self._history: History | None = None
        self._modified: set[str] | None = None
        self._git: dict[str, GitDates | None] = {}  # path → git dates to use (new or stored)

    def history(self) -> History | None:
        """The history pass's result (waits for it; None without git or new commits)."""
        if self._pending is not None:
            self._history = self._pending.result()
            self._pending = None
        return self._history

    def start_full(self) -> None:
        """For a full index: every file's dates are the history's."""
        history = self.history()
        if history is not None:
            self._git = {p: (h.first, h.last) for p, h in history.files.items()}

    def changes(self, catalog: Catalog) -> dict[str, GitDates | None]:
        """Indexed or new files whose git dates the new commits change: path → new dates."""
        history = self.history()
        if history is None:
            return {}
        files = history.files
        if history.complete:
            stored = catalog.git_dates(None)
            new: dict[str, GitDates | None] = {p: None for p in stored}
            new.update((p, (h.first, h.last)) for p, h in files.items())
        else:
            stored = catalog.git_dates([*files, *(h.origin for h in files.values() if h.origin)])
            new = {}
            for path, h in files.items():
                before = stored.get(h.origin) if h.origin is not None else None
                new[path] = (h.first, h.last) if before is None else (min(before[0], h.first), max(before[1], h.last))
        changed = {p: d for p, d in new.items() if stored.get(p) != d}
        self._git.update(changed)
        return changed

    def use_stored(self, known: dict[str, tuple[str, NoteDates]]) -> None:
        """The git dates the index holds (``Catalog.file_dates``), for files no new commit touched."""
        for path, (_, d) in known.items():
            if path not in self._git:
                self._git[path] = (
                    (d.git_created, d.git_updated) if d.git_created is not None and d.git_updated is not None else None
                )

    def adopt(self, paths: list[str]) -> None:
        """Files new to the index that no new commit brought (a deleted file restored, a folder no
        longer excluded): if HEAD holds them, the whole history dates them (rare, so walked again)."""
        if self.head is None or not paths:
            return
        tracked = tracked_files(self.root, paths)
        if not tracked:
            return  # new notes nobody committed: the common case, one ls-tree
        history = (
            self._history
            if self._history is not None and self._history.complete
            else PendingHistory(self.root, None, self.head).result()
        )
        for path in tracked:
            h = history.files.get(path) if history is not None else None
            self._git[path] = (h.first, h.last) if h is not None else None

    def dates(self, note: Note, st: os.stat_result) -> NoteDates:
        """The note's dates, given its file's stat."""
        mtime = st.st_mtime_ns / 1e9
        git = self._git.get(note.path)
        modified = False
        if git is not None and mtime >= git[1] + 1 and not (note.created and note.updated):
            # Newer than its last commit (every file of a fresh clone is): edited, or only written by
            # git? (Commit times are whole seconds: a file written in its commit's second counts as committed.)
            modified = note.path in self.modified()
        return note_dates(note, mtime, git, modified)

    def modified(self) -> set[str]:
        """Notes edited since HEAD (one ``git diff`` per reindex, asked only when needed)."""
        if self._modified is None:
            self._modified = modified_files(self.root) or set()
        return self._modified
