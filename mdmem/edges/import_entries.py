"""What every importer makes: the ``Entry`` a note is written from, its stable id, title, type and typed links."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

TITLE_CHARS = 80
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
TYPE_ALIASES = {
    "style": "preference",
    "preferences": "preference",
    "decisions": "decision",
    "facts": "fact",
    "lesson": "antipattern",
    "lessons": "antipattern",
    "todo": "progress",
    "task": "progress",
    "episode": "conversation",
    "observation": "fact",
    "knowledge": "fact",
    "deductive": "fact",
}
LINK_TYPE_CHARS = 64


@dataclass(slots=True)
class Entry:
    """One memory to import: what it says, its metadata and the key that makes re-runs idempotent.
    ``extra`` holds the other frontmatter keys it keeps (status, confidence, validity, links, …)."""

    key: str
    title: str  # whole: cut to ``title_chars`` only after its secrets are redacted (``importer``)
    body: str
    type: str = "note"
    created: str | None = None
    tags: list[str] = field(default_factory=list)
    salience: float | None = None
    scope: str | None = None
    entities: list[str] = field(default_factory=list)
    pinned: bool = False
    source: str = ""
    replaceable: bool = False  # a day file: its note follows the file's text on re-import
    extra: dict[str, Any] = field(default_factory=dict)
    title_chars: int = TITLE_CHARS
    dropped: list[str] = field(default_factory=list)  # what its source said that the note does not keep


class Dropped:
    """What an import could not keep, counted by what it was ("relation weight", "table session")."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def add(self, what: str, n: int = 1) -> None:
        if n:
            self.counts[what] += n

    def lines(self) -> list[str]:
        return [f"{what} ({n})" for what, n in sorted(self.counts.items())]


def norm(text: str) -> str:
    """Text with its whitespace collapsed and its case folded (the key of an entry's text)."""
    return " ".join(text.split()).casefold()


def entry_id(key: str) -> str:
    """A stable note id for an import key (same shape as mdmem's own ids)."""
    from ..core.note import key_id

    return key_id(key)


def title_of(text: str) -> str:
    """A title from the first sentence or line of an entry, without markdown; whole (the importer cuts
    it once its secrets are redacted)."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = HEADING.sub(r"\2", line)
    line = re.sub(r"\[\[([^\]|]+)\|([^\]]+)\]\]", r"\2", line)
    line = re.sub(r"\[\[([^\]]+)\]\]", r"\1", line)
    line = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", line)
    line = re.sub(r"[*_`]+", "", line).strip()
    first = re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0].rstrip(".")
    return first or "Imported memory"


def map_type(raw: Any, default: str = "note") -> tuple[str, str | None]:
    """mdmem's note type for another system's type or category, and the original when it is not one."""
    from ..core.schema import TYPES

    name = str(raw or default).strip().lower()
    typ = TYPE_ALIASES.get(name, name)
    return (typ, None if typ == name else name) if typ in TYPES else (default, name)


def link_type(raw: Any) -> str:
    """An edge type as a frontmatter link holds it: lower case, words joined by ``_``, bounded."""
    s = re.sub(r"[^\w]+", "_", str(raw or "").strip()).strip("_").casefold()
    return s[:LINK_TYPE_CHARS] or "related"


def link(to: str, typ: Any, reason: Any = None) -> dict[str, Any]:
    """A frontmatter ``links`` entry (``{to, type, reason}``); a secret in the reason is redacted."""
    from ..core.redact import redact_text

    out: dict[str, Any] = {"to": to, "type": link_type(typ)}
    if isinstance(reason, str) and reason.strip():
        out["reason"] = redact_text(" ".join(reason.split()))[:500]
    return out


def iso(value: Any) -> str | None:
    """A date or datetime in mdmem's form, or None for what is not one."""
    from ..core.note import to_iso

    if value is None or value == "":
        return None
    return to_iso(value if not isinstance(value, str) else value.strip())


def unit(value: Any) -> float | None:
    """A number from 0 to 1 (salience, confidence), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 <= value <= 1 else None
