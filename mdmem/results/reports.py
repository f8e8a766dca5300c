"""Vault reports: status, doctor, init, import, setup and graph export (reindex and embed: ``indexing``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..core.note import Problem
from .base import Answer, Result


@dataclass(frozen=True, slots=True)
class IndexInfo(Result):
    """The index on disk."""

    engine: str | None
    schema: int | None
    generation: str | None
    indexed_at: str | None
    size_bytes: int


@dataclass(frozen=True, slots=True)
class VectorStatus(Result):
    """How many chunks have vectors, or why vectors are unavailable (then only ``error``)."""

    model: str | None = None
    chunks_with_vectors: int = 0
    chunks: int = 0
    complete: bool = False
    error: str | None = None
    embedding: str | None = None  # the background embedding job: "in the background", "interrupted"
    # A running ``mdmem embed`` (another process): pid, done, total, started, updated (epoch seconds).
    # Its vectors join ``chunks_with_vectors`` when it finishes; until then this is its progress.
    running: dict[str, Any] | None = None
    note: str | None = None  # why the model runs slower than it could (a failed ONNX export), in one line
    from_pack: int = 0  # chunks whose vector came from a fetched vector pack (not run through the model)
    unchecked: int = 0  # of those, not yet checked against the local model (the background job does)

    def data(self) -> dict[str, Any]:
        if self.error is not None:
            return {"error": self.error}
        d: dict[str, Any] = {
            "model": self.model,
            "chunks_with_vectors": self.chunks_with_vectors,
            "chunks": self.chunks,
            "complete": self.complete,
        }
        if self.embedding is not None:
            d["embedding"] = self.embedding
        if self.running is not None:
            d["running"] = self.running
        if self.note is not None:
            d["note"] = self.note
        if self.from_pack:
            d["from_pack"] = self.from_pack
            d["unchecked"] = self.unchecked
        return d


@dataclass(frozen=True, slots=True)
class ServeInfo(Result):
    """A running ``mdmem serve``."""

    pid: int
    port: int


@dataclass(frozen=True, slots=True)
class Pending(Result):
    """Note files the index has not caught up with."""

    new: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class GitInfo(Result):
    """The vault's git state."""

    repository: bool
    head: str | None
    last_indexed_commit: str | None
    hooks: list[str] = field(default_factory=list)  # those installed


@dataclass(frozen=True, slots=True)
class VaultStatus(Answer):
    """Counts, index freshness and the last indexed commit (``status``)."""

    vault: str
    notes: int
    types: dict[str, int]  # notes by type, most first
    statuses: dict[str, int]
    problems: int
    notes_with_problems: int
    index: IndexInfo
    vectors: VectorStatus
    serve: ServeInfo | None
    pending: Pending
    fresh: bool
    git: GitInfo
    catching_up: str | None = None  # a background job is indexing a big git change (why), or None
    conflicts: dict[str, str] = field(default_factory=dict)  # conflict copy → the note it is a version of (sync)
    vault_problems: int = 0  # of ``problems``, those of the vault's set-up (git hooks, .gitignore), in no note
    unwritten_links: int = 0  # links to notes not written yet (no problem: Obsidian's planned notes)


@dataclass(frozen=True, slots=True)
class VaultStatuses(Answer):
    """Each vault's status in a set of vaults (``status --vaults``, or a server of several), by name;
    ``skipped``: the vaults that could not be opened."""

    vaults: dict[str, VaultStatus]
    skipped: list[dict[str, str]] = field(default_factory=list)


# The kinds of problem the note graph finds (``graph_view.dangling_problems`` starts messages so).
DANGLING_LINK = "dangling link"
MISSING_ATTACHMENT = "missing attachment"


def problem_kind(p: Problem) -> str:
    """What kind of problem: a dangling link, a missing attachment, else the field at fault
    (``links[2]`` → ``links``; ``file``, ``encoding``, ``hooks`` …)."""
    for kind in (DANGLING_LINK, MISSING_ATTACHMENT):
        if p.message.startswith(kind):
            return kind
    return p.field.split("[", 1)[0] or "other"


@dataclass(frozen=True, slots=True)
class ProblemKind(Result):
    """Problems of one kind: how many, in how many files, and the first few."""

    kind: str
    count: int
    files: int
    examples: list[Problem] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Unwritten(Result):
    """Links in a note to a note not written yet (``[[Idea]]`` where no note is named Idea): Obsidian's
    way of planning a note, so no problem; ``field`` is ``body`` or the property the links are in."""

    path: str
    field: str
    target: str  # as written
    links: int = 1


@dataclass(frozen=True, slots=True)
class DoctorReport(Answer):
    """Every problem with the vault (``doctor``), and the same grouped by kind; apart from them, the
    links to notes not written yet (``unwritten``)."""

    problems: list[Problem] = field(default_factory=list)
    unwritten: list[Unwritten] = field(default_factory=list)

    def __iter__(self) -> Iterator[Problem]:  # type: ignore[override]  # Result is not a sequence; this report is a list of problems
        return iter(self.problems)

    def __len__(self) -> int:
        return len(self.problems)

    def kinds(self, examples: int = 3) -> list[ProblemKind]:
        """The problems grouped by ``problem_kind``, most first, with ``examples`` of each."""
        groups: dict[str, list[Problem]] = {}
        for p in self.problems:
            groups.setdefault(problem_kind(p), []).append(p)
        ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        return [ProblemKind(k, len(ps), len({p.path for p in ps}), ps[:examples]) for k, ps in ranked]

    def data(self) -> dict[str, Any]:
        kinds = [{"kind": k.kind, "count": k.count, "files": k.files} for k in self.kinds()]
        return {
            "count": len(self.problems),
            "kinds": kinds,
            **Result.data(self),
            "unwritten_links": self.links_unwritten,
        }

    @property
    def links_unwritten(self) -> int:
        """How many links name a note not written yet (each written link counted)."""
        return sum(u.links for u in self.unwritten)


@dataclass(frozen=True, slots=True)
class InitReport(Answer):
    """What ``init`` made or adopted."""

    vault: str  # absolute
    adopted: bool
    written: list[str] = field(default_factory=list)  # created + appended, relative to the vault
    git_repo_created: bool = False
    indexed: int = 0
    messages: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)  # files that did not exist before
    appended: list[str] = field(default_factory=list)  # existing files added to (.gitignore)
    commit: str | None = None  # the one commit of init's own files


@dataclass(frozen=True, slots=True)
class ImportReport(Answer):
    """What an import did (or, with ``dry_run``, would do)."""

    kind: str
    source: str
    written: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    skipped: int = 0
    errors: list[str] = field(default_factory=list)
    redacted: int = 0
    commit: str | None = None
    dry_run: bool = False
    adopted: InitReport | None = None  # an Obsidian vault adopted in place
    # a book (PDF, EPUB): its original's place in the vault, notes of parts the new version no longer
    # has (forgotten, never deleted), notes edited since the import (kept as they are), how it was split
    attachment: str | None = None
    forgotten: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    split: str | None = None
    # what the source held that no note keeps, each with how many times ("relation weight (12)")
    dropped: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FileChange(Result):
    """What setup did (or would do) to one settings file."""

    path: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    written: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


@dataclass(frozen=True, slots=True)
class SetupReport(Answer):
    """What ``setup claude-code`` did to each settings file."""

    vault: str
    dry_run: bool
    files: list[FileChange] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ExportReport(Answer):
    """A graph export written to a file."""

    output: str
    format: str
    bytes: int
