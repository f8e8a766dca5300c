"""Team memory through git: what ``sync`` did, the conflicts it kept, what ``resolve`` settled."""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import Answer, Result


@dataclass(frozen=True, slots=True)
class SyncConflict(Result):
    """Both sides changed one note. ``note``: the note kept at its path (this machine's text);
    ``copy``: the other side's text saved beside it, a note of its own until ``mdmem resolve`` (None
    when nothing is left to settle: an edit kept over a delete, the same rename on both sides);
    ``kind``: edit/edit, add/add, edit/delete, delete/edit, rename/rename; ``detail``: one line."""

    note: str
    kind: str
    detail: str
    copy: str | None = None
    commit: str | None = None  # the commit the other version came from


@dataclass(frozen=True, slots=True)
class SyncReport(Answer):
    """What ``mdmem sync`` did: the hand edits it committed first, what it fetched and merged, the
    notes the merge changed here, the conflicts (kept, never lost) and what it pushed."""

    vault: str
    branch: str
    upstream: str
    committed: list[str] = field(default_factory=list)  # hand-edited notes committed before syncing
    fetched: int = 0  # commits the remote had that this clone had not
    merged: str | None = None  # the merge commit (or the fast-forward's new HEAD)
    pushed: int = 0  # commits the remote got
    notes_changed: list[str] = field(default_factory=list)  # notes the sync changed in this clone
    merged_notes: list[str] = field(default_factory=list)  # notes both sides changed, merged cleanly
    conflicts: list[SyncConflict] = field(default_factory=list)
    retries: int = 0  # pushes the remote rejected because it moved meanwhile
    index: str = ""  # what the index did: "n notes reindexed", or the background job's line
    staged_elsewhere: list[str] = field(default_factory=list)  # the user's other staged changes: left uncommitted
    vectors: str = ""  # what the vector pack did: fetched, pushed, up to date, refused (and why)


@dataclass(frozen=True, slots=True)
class Resolution(Answer):
    """What ``mdmem resolve NOTE`` did: ``side`` (ours, theirs, both) applied to ``note``, its
    conflict ``copies`` removed, committed as ``commit``. ``resolved`` False: there was no conflict."""

    note: str
    side: str
    resolved: bool
    copies: list[str] = field(default_factory=list)
    commit: str | None = None
