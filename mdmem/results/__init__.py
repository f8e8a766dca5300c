"""One result model: a frozen dataclass for every answer mdmem gives.

Each ``to_dict()`` is the JSON of today's CLI ``--json`` (same keys, order, nesting and left-out
``None`` fields), and the Python API, serve and MCP give the same shapes (MCP picks fewer fields in
``render``, from ``to_dict()``). ``render`` turns the same objects into CLI and MCP text. A result
that is a node plus fields of its own holds a ``GraphNode`` and writes it out with ``flat()``.
``from_dict()`` rebuilds a result from its ``to_dict()`` (e.g. the hits of a warm server). Pure: no I/O.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        Result,
    )
    from .changes import (
        AddReport,
        AddResult,
        Change,
        Correction,
        DuplicateCheck,
        DuplicateMatch,
        History,
        LinkSuggestion,
        LogEntry,
        SweepCandidate,
        SweepReport,
        SweepRule,
        Version,
    )
    from .graph import (
        BacklinksAnswer,
        EntityAnswer,
        EntityLink,
        EntityMention,
        GraphEdge,
        GraphNode,
        LinksAnswer,
        Neighbor,
        NeighborsAnswer,
        PathAnswer,
        TimelineAnswer,
        TimelineItem,
        WhyAnswer,
        WhyItem,
        flat,
    )
    from .indexing import EmbedReport, ReindexReport
    from .notes import (
        MissingNote,
        NoteBatch,
        NoteDoc,
        NoteLink,
        NoteText,
        note_doc,
    )
    from .reports import (
        DANGLING_LINK,
        MISSING_ATTACHMENT,
        DoctorReport,
        ExportReport,
        FileChange,
        GitInfo,
        ImportReport,
        IndexInfo,
        InitReport,
        Pending,
        ProblemKind,
        ServeInfo,
        SetupReport,
        VaultStatus,
        VectorStatus,
        problem_kind,
    )
    from .search import (
        ContextItem,
        Hit,
        Hits,
        LinkHint,
        MemoryContext,
    )

# name → the module that defines it: a command imports only the results it makes (all of them
# cost ~25 ms of a cold start).
_HOME = {
    "Result": "base",
    "BacklinksAnswer": "graph",
    "EntityAnswer": "graph",
    "EntityLink": "graph",
    "EntityMention": "graph",
    "GraphEdge": "graph",
    "GraphNode": "graph",
    "LinksAnswer": "graph",
    "Neighbor": "graph",
    "NeighborsAnswer": "graph",
    "PathAnswer": "graph",
    "TimelineAnswer": "graph",
    "TimelineItem": "graph",
    "WhyAnswer": "graph",
    "WhyItem": "graph",
    "flat": "graph",
    "AddReport": "changes",
    "AddResult": "changes",
    "Change": "changes",
    "Correction": "changes",
    "DuplicateCheck": "changes",
    "DuplicateMatch": "changes",
    "History": "changes",
    "LinkSuggestion": "changes",
    "LogEntry": "changes",
    "MissingNote": "notes",
    "NoteBatch": "notes",
    "NoteDoc": "notes",
    "NoteLink": "notes",
    "NoteText": "notes",
    "SweepCandidate": "changes",
    "SweepReport": "changes",
    "SweepRule": "changes",
    "Version": "changes",
    "note_doc": "notes",
    "DANGLING_LINK": "reports",
    "DoctorReport": "reports",
    "MISSING_ATTACHMENT": "reports",
    "ProblemKind": "reports",
    "problem_kind": "reports",
    "EmbedReport": "indexing",
    "ExportReport": "reports",
    "FileChange": "reports",
    "GitInfo": "reports",
    "ImportReport": "reports",
    "IndexInfo": "reports",
    "InitReport": "reports",
    "Pending": "reports",
    "ReindexReport": "indexing",
    "ServeInfo": "reports",
    "SetupReport": "reports",
    "VaultStatus": "reports",
    "VectorStatus": "reports",
    "ContextItem": "search",
    "Hit": "search",
    "Hits": "search",
    "LinkHint": "search",
    "MemoryContext": "search",
}

__all__ = [
    "DANGLING_LINK",
    "MISSING_ATTACHMENT",
    "AddReport",
    "AddResult",
    "BacklinksAnswer",
    "Change",
    "ContextItem",
    "Correction",
    "DoctorReport",
    "DuplicateCheck",
    "DuplicateMatch",
    "EmbedReport",
    "EntityAnswer",
    "EntityLink",
    "EntityMention",
    "ExportReport",
    "FileChange",
    "GitInfo",
    "GraphEdge",
    "GraphNode",
    "History",
    "Hit",
    "Hits",
    "ImportReport",
    "IndexInfo",
    "InitReport",
    "LinkHint",
    "LinkSuggestion",
    "LinksAnswer",
    "LogEntry",
    "MemoryContext",
    "MissingNote",
    "Neighbor",
    "NeighborsAnswer",
    "NoteBatch",
    "NoteDoc",
    "ProblemKind",
    "NoteLink",
    "NoteText",
    "PathAnswer",
    "Pending",
    "ReindexReport",
    "Result",
    "ServeInfo",
    "SetupReport",
    "SweepCandidate",
    "SweepReport",
    "SweepRule",
    "TimelineAnswer",
    "TimelineItem",
    "VaultStatus",
    "VectorStatus",
    "Version",
    "WhyAnswer",
    "WhyItem",
    "flat",
    "note_doc",
    "problem_kind",
]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'mdmem.results' has no attribute {name!r}")
    value = getattr(import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value
    return value
