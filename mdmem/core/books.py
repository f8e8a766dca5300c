"""Pure: a book as mdmem imports it — its parts (one note each), found from a table of
contents over a run of content units (a PDF's pages, an EPUB's documents cut at their anchors).

The readers (``pdf.py``: pypdf, ``epub.py``: zipfile and the stdlib parsers) turn a file into units and
a table of contents; ``plan_parts`` decides the notes:

- the top level of the table of contents (through single wrappers: a lone "Book" entry holding the
  chapters), each entry a part from its unit to the next entry's;
- a part longer than ``MAX_PART_CHARS`` is cut at its children (a "Part I" into its chapters), else into
  pieces of whole units: ``chunk.MAX_CHUNKS`` (64 pieces of ≤ 1,000 characters) would otherwise leave
  the end of a long chapter without vectors;
- the text before the first entry (cover, title page, copyright) is a part only if it says something.

A part's ``key`` (its title, normalised, and its rank among parts of that title) is what keeps its note's
id when a new version of the book is imported.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .errors import BookUnreadable

# ~40 chunks of chunk.py's 1,000 characters (sections cut smaller): every piece of a part gets a vector.
MAX_PART_CHARS = 40_000
# What one import may cost. War and Peace is ~3.2 M characters; a book's text beyond MAX_BOOK_CHARS, or
# reading beyond IMPORT_SECONDS (far beyond what a real book takes), is refused in one line, nothing written.
MAX_BOOK_CHARS = 16 * 1024 * 1024
IMPORT_SECONDS = 120.0
FRONT_MIN_CHARS = 300  # front matter shorter than this (a cover, a title page) is no note
HEADING_MARK = "\x01"  # before a line of units: a heading put there by the reader, not the book's text
PAGES_PER_PART = 10  # a PDF with neither outline nor chapter headings: notes of this many pages


@dataclass(slots=True)
class TocEntry:
    """An entry of a table of contents: its title, the unit it starts at, its children."""

    title: str
    unit: int
    children: list[TocEntry] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Part:
    """One note's worth of a book."""

    title: str
    key: str  # stable across versions of the book: the note's id comes from it
    body: str  # markdown
    first: int  # units [first, last] (PDF: 0-based pages)
    last: int


@dataclass(frozen=True, slots=True)
class Book:
    """What a reader found in a file: metadata, parts in order, and how the parts were found."""

    kind: str  # "pdf" | "epub"
    title: str
    authors: tuple[str, ...]
    parts: tuple[Part, ...]
    split: str  # "outline", "headings", "pages" (PDF); "nav", "ncx", "spine" (EPUB)
    units: int  # pages (PDF) or spine documents (EPUB)
    redacted: int = 0  # secrets replaced in its text


class Budget:
    """The bounds of reading one book: its text so far (``MAX_BOOK_CHARS``) and the time since it began
    (``seconds``); ``spend`` after each page or document raises ``BookUnreadable`` beyond either."""

    def __init__(
        self, name: str, total: int, unit: str, seconds: float = IMPORT_SECONDS, max_chars: int | None = None
    ) -> None:
        self.name, self.total, self.unit, self.seconds = name, total, unit, seconds
        self.max_chars = MAX_BOOK_CHARS if max_chars is None else max_chars
        self.chars = 0
        self.start = time.monotonic()

    def spend(self, index: int, chars: int) -> None:
        """Count ``chars`` more characters of text, read up to (0-based) ``index`` of ``total`` units."""
        self.chars += chars
        where = f"at {self.unit} {index + 1} of {self.total}"
        if self.chars > self.max_chars:
            size = f"{self.max_chars >> 20} MB" if self.max_chars >= 1 << 20 else f"{self.max_chars >> 10} KB"
            raise BookUnreadable(
                f"{self.name}: its text comes to more than {size} ({where}); "
                "a book that large is not imported: split the file."
            )
        if time.monotonic() - self.start > self.seconds:
            raise BookUnreadable(
                f"{self.name}: reading it took more than {self.seconds:g} s ({where}); not "
                "imported (MDMEM_IMPORT_SECONDS allows longer)."
            )


def norm(text: str) -> str:
    """Case, accents' composition and whitespace folded: how titles are compared."""
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


def clean_title(text: str, limit: int = 200) -> str:
    """A title on one line, without control characters, at most ``limit`` characters."""
    t = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return t if len(t) <= limit else t[: limit - 1].rstrip() + "…"


def top_level(entries: list[TocEntry]) -> list[TocEntry]:
    """The level parts come from: down through lone entries that only wrap the rest."""
    while len(entries) == 1 and entries[0].children:
        entries = entries[0].children
    return entries


def plan_parts(
    units: Sequence[str], toc: list[TocEntry], *, join: Callable[[Sequence[str]], str], max_chars: int = MAX_PART_CHARS
) -> list[Part]:
    """The parts of a book: ``units`` (text each), ``toc`` (entries pointing at units, in reading order),
    ``join`` (units → a body)."""
    n = len(units)
    sizes = [len(u) for u in units]
    spans: list[tuple[str, int, int]] = []  # (title, first, end)

    def place(entries: list[TocEntry], end: int) -> None:
        entries = sorted((e for e in entries if 0 <= e.unit < n), key=lambda e: e.unit)
        for i, e in enumerate(entries):
            stop = entries[i + 1].unit if i + 1 < len(entries) else end
            if stop <= e.unit:
                continue  # two entries on one unit: the later one takes it
            size = sum(sizes[e.unit : stop])
            kids = [c for c in e.children if e.unit <= c.unit < stop]
            if size > max_chars and kids:
                first_kid = min(c.unit for c in kids)
                if first_kid > e.unit:
                    spans.append((e.title, e.unit, first_kid))
                place(kids, stop)
            else:
                spans.append((e.title, e.unit, stop))

    top = top_level(toc)
    start = min((e.unit for e in top if 0 <= e.unit < n), default=n)
    if start > 0 and sum(sizes[:start]) >= FRONT_MIN_CHARS:
        spans.append(("Front matter", 0, start))
    place(top, n)
    spans.sort(key=lambda s: s[1])

    parts: list[Part] = []
    seen: dict[str, int] = {}
    for title, first, end in spans:
        pieces = [
            (a, b, body)
            for a, b in _pieces(sizes, first, end, max_chars)
            for body in split_text(join(units[a:b]).strip(), max_chars)
        ]
        for k, (a, b, body) in enumerate(pieces, 1):
            label = title if len(pieces) == 1 else f"{title} ({k}/{len(pieces)})"
            if not body:
                continue
            base = norm(label) or "part"
            seen[base] = seen.get(base, 0) + 1
            key = base if seen[base] == 1 else f"{base}#{seen[base]}"
            parts.append(
                Part(title=clean_title(label) or f"Part {len(parts) + 1}", key=key, body=body, first=a, last=b - 1)
            )
    return parts


def split_text(text: str, max_chars: int) -> list[str]:
    """``text`` in pieces of at most about ``max_chars``, cut between paragraphs (else lines, else
    anywhere): one long chapter was one part, and only its first 64 chunks got vectors."""
    if len(text) <= max_chars:
        return [text]
    out: list[str] = []
    start = 0
    while len(text) - start > max_chars:
        cut = text.rfind("\n\n", start, start + max_chars)
        if cut <= start + max_chars // 2:
            cut = text.rfind("\n", start, start + max_chars)
        if cut <= start + max_chars // 2:
            cut = start + max_chars
        out.append(text[start:cut].strip())
        start = cut
    out.append(text[start:].strip())
    return [p for p in out if p]


def _pieces(sizes: Sequence[int], first: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """[first, end) cut into runs of whole units of at most ``max_chars`` (a unit longer stands alone)."""
    out: list[tuple[int, int]] = []
    a, size = first, 0
    for u in range(first, end):
        if size and size + sizes[u] > max_chars:
            out.append((a, u))
            a, size = u, 0
        size += sizes[u]
    out.append((a, end))
    return out


# -- text as PDF pages give it -------------------------------------------------------------------------

_CHAPTER_LINE = re.compile(
    r"^(?:(?:chapter|part|book|section|appendix)\s+(?:[0-9]{1,3}|[ivxlcdm]{1,7}|[a-z]|one|two|three|four|five|six|"
    r"seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty)\b"
    r"|(?:prologue|epilogue|introduction|preface|foreword|afterword|conclusion|acknowledg(?:e)?ments|"
    r"bibliography|index|glossary)$)",
    re.IGNORECASE,
)
_PAGE_NUMBER = re.compile(r"^(?:page\s+)?[\divxlcdm]{1,6}(?:\s*(?:/|of)\s*\d+)?$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?:;\"'”’)\]]$")


def chapter_heading(lines: Sequence[str]) -> str | None:
    """A chapter's title when a page opens with one ("Chapter 3", "CHAPTER III", "Prologue"), with the
    short line under it ("Chapter 3 — Loomings"); else None."""
    if not lines or len(lines[0]) > 60 or not _CHAPTER_LINE.match(lines[0]):
        return None
    title = lines[0]
    if len(lines) > 1 and 0 < len(lines[1]) <= 60 and not _SENTENCE_END.search(lines[1]):
        title = f"{title} — {lines[1]}"
    return clean_title(title)


def page_lines(text: str) -> list[str]:
    """A page's text as stripped, non-empty lines."""
    return [ln for ln in (" ".join(x.split()) for x in text.splitlines()) if ln]


def strip_furniture(pages: list[list[str]]) -> list[list[str]]:
    """Pages without their running heads and page numbers: a first or last line that is a bare number,
    or a short one that (digits aside) opens or closes at least a third of the pages."""

    def shape(line: str) -> str:
        return re.sub(r"\d+", "#", line.casefold())

    counts: dict[str, int] = {}
    for lines in pages:
        for line in {lines[0], lines[-1]} if lines else ():
            if not _CHAPTER_LINE.match(line):  # a chapter's heading opens its page, in short chapters often
                counts[shape(line)] = counts.get(shape(line), 0) + 1
    common = {s for s, c in counts.items() if len(pages) >= 6 and c >= max(4, len(pages) / 3) and len(s) <= 80}
    out = []
    for lines in pages:
        lines = list(lines)
        for end in (0, -1):
            if lines and (_PAGE_NUMBER.match(lines[end]) or shape(lines[end]) in common):
                lines.pop(end)
        out.append(lines)
    return out


def reflow(lines: Sequence[str]) -> str:
    """PDF lines as markdown paragraphs: hyphenated words joined, a line well short of the usual line
    length ends its paragraph, and nothing read as markdown syntax by accident."""
    if not lines:
        return ""
    widths = sorted(len(ln) for ln in lines)
    usual = widths[len(widths) * 3 // 4]
    paras: list[str] = []
    current = ""
    heading = ""
    for line in lines:
        if line.startswith(HEADING_MARK):  # a heading the reader put there (a sub-entry of the outline)
            if current:
                paras.append(escape_markdown(current))
                current = ""
            paras.append(line[1:])
            heading = norm(line[1:].lstrip("#"))
            continue
        if heading and norm(line) == heading:
            heading = ""
            continue  # the page's own line for that heading
        heading = ""
        if current.endswith("-") and len(current) > 1 and current[-2].isalpha() and line[:1].islower():
            current = current[:-1] + line
        else:
            current = f"{current} {line}" if current else line
        # a short line ends its paragraph: the last of one that ends a sentence, or a heading, a title
        if len(line) < usual * (0.8 if _SENTENCE_END.search(line) else 0.5):
            paras.append(escape_markdown(current))
            current = ""
    if current:
        paras.append(escape_markdown(current))
    return "\n\n".join(paras)


def escape_markdown(text: str) -> str:
    """Text that stays text in a note: no heading, list, quote or wikilink made of a book's characters."""
    text = text.replace("[[", "[\\[").replace("]]", "]\\]")
    if re.match(r"^(#{1,6}\s|[-*+>]\s|\d+[.)]\s|---|```|~~~)", text):
        text = "\\" + text
    return text
