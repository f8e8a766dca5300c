"""A PDF's text, outline and metadata as a ``books.Book``. The only module that imports pypdf.

Parts come from the outline (bookmarks) when there is one; else from pages that open with a chapter
heading ("Chapter 3", "CHAPTER III", "Prologue"), when at least two do; else from runs of
``PAGES_PER_PART`` pages. pypdf's text carries no font sizes, so a heading is told by its words, not its
look: a page's first line is where books put them, and a wrong guess costs only a note boundary.
Sub-entries of the outline become ``##`` headings inside their part, so its sections chunk apart.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.books import (
    HEADING_MARK,
    IMPORT_SECONDS,
    PAGES_PER_PART,
    Book,
    Budget,
    TocEntry,
    chapter_heading,
    clean_title,
    page_lines,
    plan_parts,
    reflow,
    strip_furniture,
)
from ..core.errors import BookUnreadable

if TYPE_CHECKING:
    from pypdf import PdfReader

MIN_PAGE_CHARS = 25  # a page with less text than this has no text layer to speak of
MIN_TEXT_SHARE = 0.1  # fewer pages with text than this share: a scan
# What a page may make pypdf read, its forms counted each time it draws them: text-showing operators
# (a book's page draws a few thousand; pypdf's time grows with the bytes of them) and bytes of content
# (pypdf parses a form again each time it is drawn, so a form drawn thousands of times took over a minute;
# the bound keeps a page to a few seconds at worst, and far more than a real page draws). What the
# hostile cases cost before and after: docs/benchmarks.md, Hostile input.
MAX_PAGE_TEXT_OPS = 20_000
MAX_PAGE_CONTENT = 2_000_000
_TEXT_OPS = re.compile(rb"(?:Tj|TJ)(?![A-Za-z0-9])|\)\s*['\"]")
_DO = re.compile(rb"/([^\s/\[\]()<>{}%]+)\s*Do(?![A-Za-z0-9])")


@contextmanager
def _quiet() -> Iterator[None]:
    """pypdf logs every repaired oddity of a file at WARNING; an import reports problems itself."""
    log = logging.getLogger("pypdf")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def read_pdf(
    path: Path, progress: Callable[[int, int], None] | None = None, *, seconds: float = IMPORT_SECONDS
) -> Book:
    """The book in a PDF; raises ``BookUnreadable`` (one line: the file and why) for an encrypted,
    broken or scanned one, or one beyond the bounds (``MAX_PAGE_TEXT_OPS``, ``books.Budget``)."""
    with _quiet():
        reader = _open(path)
        total = len(reader.pages)
        if total == 0:
            raise BookUnreadable(f"{path.name}: the PDF has no pages.")
        raw: list[list[str]] = []
        budget = Budget(path.name, total, "page", seconds)
        for i, page in enumerate(reader.pages):
            try:
                ops, size = _drawn(page, {}, 0)
                if ops > MAX_PAGE_TEXT_OPS:
                    raise BookUnreadable(
                        f"{path.name}: page {i + 1} draws more than {MAX_PAGE_TEXT_OPS} pieces of "
                        "text (a book's page draws a few thousand); not imported."
                    )
                if size > MAX_PAGE_CONTENT:
                    raise BookUnreadable(
                        f"{path.name}: page {i + 1} draws more than {MAX_PAGE_CONTENT // 10**6} MB of "
                        "content, its forms counted as often as drawn; not imported."
                    )
                raw.append(page_lines(page.extract_text() or ""))
            except BookUnreadable:
                raise
            except Exception as exc:  # a damaged content stream: the whole file is suspect
                raise BookUnreadable(
                    f"{path.name}: page {i + 1} cannot be read ({_why(exc)}); the file looks damaged."
                ) from None
            budget.spend(i, sum(map(len, raw[-1])))
            if progress is not None and ((i + 1) % 10 == 0 or i + 1 == total):
                progress(i + 1, total)
        with_text = sum(1 for lines in raw if sum(map(len, lines)) >= MIN_PAGE_CHARS)
        if with_text < max(1, MIN_TEXT_SHARE * total):
            raise BookUnreadable(
                f"{path.name}: {with_text} of its {total} pages hold text — a scan without a text "
                "layer; run OCR on it first (e.g. ocrmypdf) and import the result."
            )
        toc = _outline(reader)
        meta = _metadata(reader)
    pages = strip_furniture(raw)
    split = "outline"
    if not toc:
        toc, split = _headings(pages), "headings"
    if len(toc) < 2 and not (toc and toc[0].children):
        toc = [TocEntry(f"Pages {a + 1}–{min(a + PAGES_PER_PART, total)}", a) for a in range(0, total, PAGES_PER_PART)]
        split = "pages"
    units, page_of = _cut_at_headings(pages, toc, headings=split != "pages")
    planned = plan_parts(units, toc, join=lambda texts: reflow([ln for t in texts for ln in t.split("\n") if ln]))
    parts = [replace(p, first=page_of[p.first], last=page_of[p.last]) for p in planned]  # units → pages
    if not parts:
        raise BookUnreadable(f"{path.name}: no text found in the PDF.")
    title = clean_title(meta.get("title") or "") or path.stem
    return Book(
        kind="pdf", title=title, authors=tuple(meta.get("authors") or ()), parts=tuple(parts), split=split, units=total
    )


def _cut_at_headings(pages: list[list[str]], toc: list[TocEntry], *, headings: bool) -> tuple[list[str], list[int]]:
    """Pages as units cut where an entry's heading stands (a chapter that starts mid-page starts there,
    not with the tail of the one before), each entry's unit opening with its heading (``#`` for the top
    level, ``##`` for its children …; the page's own line for it is dropped by ``reflow``). Returns the
    units and each unit's page; the entries are moved to their units."""
    from ..core.books import norm

    starts: dict[int, dict[int, list[tuple[TocEntry, int]]]] = {}  # page → line → entries (and depth)

    def find(entries: list[TocEntry], depth: int) -> None:
        for e in entries:
            t, line = norm(e.title), 0
            for i, text in enumerate(pages[e.unit] if 0 <= e.unit < len(pages) else []):
                n = norm(text)
                if n and (n == t or (t.startswith(n) and len(n) >= min(len(t), 12))):
                    line = i
                    break
            starts.setdefault(e.unit, {}).setdefault(line, []).append((e, depth))
            find(e.children, depth + 1)

    find(toc, 1)
    units: list[str] = []
    page_of: list[int] = []
    for p, lines in enumerate(pages):
        cuts = starts.get(p, {})
        bounds = sorted({0, *cuts})
        for a, b in zip(bounds, bounds[1:] + [len(lines)]):
            marks = ""
            for e, depth in cuts.get(a, []):
                e.unit = len(units)
                if headings:
                    marks += f"{HEADING_MARK}{'#' * min(depth, 6)} {clean_title(e.title)}\n"
            units.append(marks + "\n".join(lines[a:b]))
            page_of.append(p)
    return units, page_of


def _drawn(obj: Any, seen: dict[int, tuple[int, int]], depth: int) -> tuple[int, int]:
    """(text-showing operators, bytes of content) that drawing ``obj`` (a page or a form) makes pypdf
    read: its own, and each form it draws ("/Name Do") as often as it draws it, forms within forms too.
    Each form is measured once; the sums stop growing once past the bounds."""
    key = id(obj)
    if key in seen:
        return seen[key]
    seen[key] = (0, 0)  # a form that draws itself counts once
    contents = obj.get_contents() if hasattr(obj, "get_contents") else obj  # a page, or a form's stream
    data = contents.get_data() if contents is not None else b""
    ops, size = len(_TEXT_OPS.findall(data)), len(data)
    resources = obj.get("/Resources")
    forms = resources.get_object().get("/XObject") if resources is not None else None
    if forms is not None and depth < 8:
        forms = forms.get_object()
        for name in _DO.findall(data):
            form = forms.get("/" + name.decode("latin-1"))
            form = form.get_object() if form is not None else None
            if form is not None and form.get("/Subtype") == "/Form":
                more, bigger = _drawn(form, seen, depth + 1)
                ops, size = ops + more, size + bigger
            if ops > MAX_PAGE_TEXT_OPS or size > MAX_PAGE_CONTENT:
                break
    seen[key] = (ops, size)
    return ops, size


def _why(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:120]}" if text else type(exc).__name__


def _open(path: Path) -> PdfReader:
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError, PdfReadError

    try:
        with open(path, "rb") as fh:
            head = fh.read(1024)
        if b"%PDF-" not in head:
            raise BookUnreadable(f"{path.name}: not a PDF (no %PDF header).")
        reader = PdfReader(path, strict=False)
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")  # an owner password only restricts printing: readers open it
            except (DependencyError, NotImplementedError) as exc:
                raise BookUnreadable(
                    f"{path.name}: the PDF is encrypted in a way pypdf cannot open here "
                    f"({_why(exc)}); save an unencrypted copy and import that."
                ) from None
            if not opened:
                raise BookUnreadable(
                    f"{path.name}: the PDF is encrypted with a password; save an unencrypted copy "
                    "(e.g. qpdf --decrypt --password=PW in.pdf out.pdf) and import that."
                )
        len(reader.pages)  # reading the page tree is where a truncated file fails
        return reader
    except BookUnreadable:
        raise
    except FileNotDecryptedError:
        raise BookUnreadable(
            f"{path.name}: the PDF is encrypted with a password; save an unencrypted copy and import that."
        ) from None
    except (PdfReadError, OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise BookUnreadable(f"{path.name}: the PDF is broken or truncated ({_why(exc)}).") from None


def _outline(reader: PdfReader) -> list[TocEntry]:
    """The outline as entries pointing at 0-based pages; entries that point nowhere are dropped."""
    try:
        outline = reader.outline
    except Exception:  # a damaged outline: fall back to headings, as if there were none
        return []

    def walk(items: list[Any]) -> list[TocEntry]:
        out: list[TocEntry] = []
        for item in items:
            if isinstance(item, list):  # the children of the entry before it
                if out:
                    out[-1].children.extend(walk(item))
                continue
            try:
                page = reader.get_destination_page_number(item)
                title = clean_title(str(item.title or ""))
            except Exception:
                continue
            if page is not None and page >= 0 and title:
                out.append(TocEntry(title, page))
        return out

    return walk(list(outline or []))


def _headings(pages: list[list[str]]) -> list[TocEntry]:
    """Pages that open with a chapter heading, when at least two do."""
    found: list[TocEntry] = []
    previous = None
    for i, lines in enumerate(pages):
        h = chapter_heading(lines)
        if h and h != previous:  # the same line atop the next page is a running head, not a new chapter
            found.append(TocEntry(h, i))
        previous = h
    return found if len(found) >= 2 else []


def _metadata(reader: PdfReader) -> dict[str, Any]:
    """Title and authors from the document information (the XMP stream is not read)."""
    import re

    try:
        info: Any = reader.metadata or {}
        title = str(info.get("/Title") or "").strip()
        author = str(info.get("/Author") or "").strip()
    except Exception:
        return {}
    if re.match(r"^(microsoft word|untitled|document\d*$)", title, re.IGNORECASE) or title.lower().endswith(
        (".doc", ".docx", ".tex", ".dvi", ".pdf")
    ):
        title = ""  # a tool's placeholder, not the book's title
    authors = [clean_title(a, 120) for a in re.split(r"\s*(?:;|&|\band\b)\s*", author) if a.strip()]
    return {"title": title, "authors": authors}
