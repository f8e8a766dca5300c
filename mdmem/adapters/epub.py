"""An EPUB's chapters and metadata as a ``books.Book``, with the standard library alone:
zipfile, ElementTree for the container, the package document (OPF) and the NCX, html.parser for XHTML.

Parts come from the table of contents — the EPUB 3 nav document, else the EPUB 2 NCX — and, when
neither gives entries, from the spine (one part per document). A table-of-contents entry may point
into a document (``ch1.xhtml#sec2``): documents are cut at the anchors the entries name, so two
chapters in one file are two parts. XHTML becomes markdown: headings stay headings (sections chunk
apart), paragraphs, lists, quotes, preformatted text and tables keep their shape.
"""

from __future__ import annotations

import html
import posixpath
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import unquote

from ..core.books import IMPORT_SECONDS, Book, Budget, TocEntry, clean_title, escape_markdown, plan_parts
from ..core.errors import BookUnreadable

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

MAX_UNPACKED = 512 * 1024 * 1024  # an EPUB's files add up to less; more is a zip bomb
# Bounds on what a book may become (a tiny chapter nesting <ul><li> 20,000 deep, or a small EPUB with
# one huge chapter, made notes of hundreds of megabytes: docs/benchmarks.md, Hostile input). Beyond
# them the import is refused in one line.
MAX_DOCUMENT = 32 * 1024 * 1024  # bytes of one XHTML document, unpacked
MAX_LIST_INDENT = 8  # list levels shown by indentation; deeper items stay at this depth
# Fonts are "obfuscated" through encryption.xml without any DRM (IDPF and Adobe font mangling).
FONT_OBFUSCATION = {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
NavItem = tuple[str, str, list["NavItem"]]  # a table-of-contents entry: title, document#anchor, children
_MARK = "\x02"  # an anchor in converted text: \x02id\x02 on a line of its own


def read_epub(
    path: Path, progress: Callable[[int, int], None] | None = None, *, seconds: float = IMPORT_SECONDS
) -> Book:
    """The book in an EPUB; raises ``BookUnreadable`` (one line: the file and why) for DRM, a broken
    file, or one beyond the bounds (``MAX_DOCUMENT``, ``books.MAX_BOOK_CHARS``, ``books.time_budget``)."""
    try:
        with zipfile.ZipFile(path) as z:
            return _read(z, path.name, progress, seconds)
    except BookUnreadable:
        raise
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        OSError,
        EOFError,
        UnicodeDecodeError,
        ValueError,
        RuntimeError,
    ) as exc:
        why = " ".join(str(exc).split())[:120] or type(exc).__name__
        raise BookUnreadable(f"{path.name}: not a readable EPUB ({why}).") from None


def _read(z: zipfile.ZipFile, name: str, progress: Callable[[int, int], None] | None, seconds: float) -> Book:
    names = set(z.namelist())
    if sum(i.file_size for i in z.infolist()) > MAX_UNPACKED:
        raise BookUnreadable(f"{name}: unpacks to more than {MAX_UNPACKED >> 20} MB; not imported.")
    _refuse_drm(z, names, name)
    if "META-INF/container.xml" not in names:
        raise BookUnreadable(f"{name}: not an EPUB (no META-INF/container.xml).")
    root = _xml(z, "META-INF/container.xml", name)
    rootfile = next(
        (e.get("full-path") for e in root.iter() if _local(e.tag) == "rootfile" and e.get("full-path")), None
    )
    if not rootfile or rootfile not in names:
        raise BookUnreadable(f"{name}: its container names no package document that the file holds.")
    opf = _xml(z, rootfile, name)
    base = posixpath.dirname(rootfile)
    manifest: dict[str, tuple[str, str, str]] = {}  # id → (zip path, media type, properties)
    for e in opf.iter():
        if _local(e.tag) == "item" and e.get("id") and e.get("href"):
            manifest[e.get("id") or ""] = (
                _join(base, e.get("href") or ""),
                e.get("media-type") or "",
                e.get("properties") or "",
            )
    spine_el = next((e for e in opf.iter() if _local(e.tag) == "spine"), None)
    spine = [
        manifest[ref][0]
        for e in (spine_el if spine_el is not None else [])
        if _local(e.tag) == "itemref"
        and (ref := e.get("idref") or "") in manifest
        and e.get("linear", "yes") != "no"
        and "html" in manifest[ref][1]
    ]
    nav = next((p for p, _, props in manifest.values() if "nav" in props.split()), None)
    spine = [p for p in dict.fromkeys(spine) if p in names and p != nav]  # a "Contents" page is no chapter
    if not spine:
        raise BookUnreadable(f"{name}: the package lists no readable document in its spine.")
    title = next(
        (clean_title(e.text or "") for e in opf.iter() if _local(e.tag) == "title" and (e.text or "").strip()), ""
    )
    authors = tuple(
        dict.fromkeys(
            clean_title(e.text or "", 120) for e in opf.iter() if _local(e.tag) == "creator" and (e.text or "").strip()
        )
    )

    if nav and nav in names:
        toc_raw, split = _nav_entries(_text(z, nav, name), nav), "nav"
    else:
        ncx_id = spine_el.get("toc") if spine_el is not None else None
        ncx = manifest.get(ncx_id or "", ("", "", ""))[0] or next(
            (p for p, mt, _ in manifest.values() if mt == "application/x-dtbncx+xml"), ""
        )
        toc_raw = _ncx_entries(_xml(z, ncx, name), ncx) if ncx in names else []
        split = "ncx"
    if not toc_raw:
        split = "spine"

    anchors: dict[str, set[str]] = {}
    for _, href, _ in _flatten(toc_raw):
        doc, _, frag = href.partition("#")
        if frag:
            anchors.setdefault(doc, set()).add(frag)
    units: list[str] = []
    where: dict[tuple[str, str], int] = {}  # (document, anchor or "") → unit
    doc_titles: list[str] = []
    budget = Budget(name, len(spine), "document", seconds)
    for i, doc in enumerate(spine):
        size = z.getinfo(doc).file_size
        if size > MAX_DOCUMENT:
            raise BookUnreadable(
                f"{name}: {doc} unpacks to {size >> 20} MB of XHTML, more than a book's chapter "
                f"({MAX_DOCUMENT >> 20} MB); not imported."
            )
        md, first_heading = to_markdown(_text(z, doc, name), anchors.get(doc, set()))
        budget.spend(i, len(md))
        where[(doc, "")] = len(units)
        doc_titles.append(first_heading)
        for k, piece in enumerate(md.split(_MARK)):  # text, anchor, text, anchor, text …
            if k % 2 == 1:
                where[(doc, piece)] = len(units)  # the anchor starts the next unit
            else:
                units.append(piece.strip())
        if progress is not None:
            progress(i + 1, len(spine))

    def build(raw: list[NavItem]) -> list[TocEntry]:
        out = []
        for t, href, kids in raw:
            doc, _, frag = href.partition("#")
            unit = where.get((doc, frag), where.get((doc, "")))
            entry = TocEntry(t, unit if unit is not None else -1, build(kids))
            if unit is None and entry.children:  # an entry without a page of its own: its first child's
                entry.unit = min(c.unit for c in entry.children)
            out.append(entry)
        return out

    toc: list[TocEntry] = build(toc_raw) if toc_raw else []
    if not any(e.unit >= 0 for e in toc):
        toc = [TocEntry(doc_titles[i] or f"Section {i + 1}", where[(doc, "")]) for i, doc in enumerate(spine)]
        split = "spine"
    parts = plan_parts(units, toc, join=lambda texts: "\n\n".join(t for t in texts if t))
    if not parts:
        raise BookUnreadable(f"{name}: no text found in the EPUB.")
    return Book(kind="epub", title=title, authors=authors, parts=tuple(parts), split=split, units=len(spine))


def _refuse_drm(z: zipfile.ZipFile, names: set[str], name: str) -> None:
    """DRM (Adobe ADEPT, Apple FairPlay, Readium LCP…) encrypts the content: refuse, say so."""
    if {"META-INF/rights.xml", "META-INF/sinf.xml", "META-INF/license.lcpl"} & names:
        raise BookUnreadable(f"{name}: the EPUB is protected by DRM; import a copy without DRM.")
    if "META-INF/encryption.xml" in names:
        root = _xml(z, "META-INF/encryption.xml", name)
        methods = {e.get("Algorithm") or "" for e in root.iter() if _local(e.tag) == "EncryptionMethod"}
        if methods - FONT_OBFUSCATION:
            raise BookUnreadable(f"{name}: the EPUB's content is encrypted (DRM); import a copy without DRM.")


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _join(base: str, href: str) -> str:
    return posixpath.normpath(posixpath.join(base, unquote(href.split("#", 1)[0]))).lstrip("/") + (
        "#" + href.split("#", 1)[1] if "#" in href else ""
    )


def _text(z: zipfile.ZipFile, member: str, name: str) -> str:
    try:
        raw = z.read(member)
    except KeyError:
        raise BookUnreadable(f"{name}: {member} is named by the book but missing from the file.") from None
    return raw.decode("utf-8-sig", errors="replace")


def _xml(z: zipfile.ZipFile, member: str, name: str) -> Element:
    from xml.etree.ElementTree import ParseError, fromstring

    text = _text(z, member, name)
    if re.search(r"<!ENTITY", text[:4096]):
        raise BookUnreadable(f"{name}: {member} declares XML entities; not read.")
    try:
        return fromstring(text.encode("utf-8"))
    except ParseError as exc:
        raise BookUnreadable(f"{name}: {member} is not well-formed XML ({exc}).") from None


def _ncx_entries(root: Element, ncx: str) -> list[NavItem]:
    """The NCX's navMap as (title, document#anchor, children)."""
    base = posixpath.dirname(ncx)

    def walk(el: Element) -> list[NavItem]:
        out = []
        for p in el:
            if _local(p.tag) != "navPoint":
                continue
            label = next((t.text or "" for t in p.iter() if _local(t.tag) == "text"), "")
            src = next((c.get("src") or "" for c in p if _local(c.tag) == "content"), "")
            out.append((clean_title(label), _join(base, src) if src else "", walk(p)))
        return out

    nav_map = next((e for e in root.iter() if _local(e.tag) == "navMap"), None)
    return walk(nav_map) if nav_map is not None else []


class _NavParser:
    """The ``<nav epub:type="toc">`` list of an EPUB 3 nav document as nested (title, href, children)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.depth = 0  # inside the toc nav
        self.stack: list[list[NavItem]] = [[]]
        self.label: list[str] | None = None
        self.href = ""
        self.done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if self.done:
            return
        if tag == "nav" and not self.depth:
            if "toc" in (a.get("epub:type") or "").split() or a.get("role") == "doc-toc":
                self.depth = 1
            return
        if not self.depth:
            return
        if tag == "nav":
            self.depth += 1
        elif tag in ("ol", "ul") and self.stack[-1]:
            self.stack.append(self.stack[-1][-1][2])
        elif tag in ("a", "span") and self.label is None:
            self.label, self.href = [], _join(self.base, a.get("href") or "") if a.get("href") else ""

    def handle_endtag(self, tag: str) -> None:
        if not self.depth or self.done:
            return
        if tag == "nav":
            self.depth -= 1
            self.done = self.depth == 0
        elif tag in ("ol", "ul") and len(self.stack) > 1:
            self.stack.pop()
        elif tag in ("a", "span") and self.label is not None:
            self.stack[-1].append((clean_title("".join(self.label)), self.href, []))
            self.label = None

    def handle_data(self, data: str) -> None:
        if self.label is not None:
            self.label.append(data)


def _nav_entries(text: str, nav: str) -> list[NavItem]:
    p = _NavParser(posixpath.dirname(nav))
    walk_html(text, p)
    return p.stack[0]


def _flatten(entries: list[NavItem]) -> list[NavItem]:
    out = []
    for e in entries:
        out.append(e)
        out += _flatten(e[2])
    return out


# -- XHTML → markdown ------------------------------------------------------------------------------

_BLOCKS = {
    "p",
    "div",
    "section",
    "article",
    "aside",
    "header",
    "footer",
    "main",
    "figure",
    "figcaption",
    "li",
    "dd",
    "dt",
    "tr",
    "table",
    "ul",
    "ol",
    "dl",
    "blockquote",
    "pre",
    "hr",
    "br",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "body",
    "nav",
    "caption",
    "td",
    "th",
}
_SKIP = {"head", "script", "style", "svg", "math", "template"}


class _Markdown:
    """XHTML as markdown blocks; ``anchors``: ids at which an ``_MARK``ed line is left in the text."""

    def __init__(self, anchors: set[str]) -> None:
        self.anchors = anchors
        self.blocks: list[str] = []
        self.inline: list[str] = []
        self.skip = 0
        self.pre = 0
        self.heading = 0
        self.quote = 0
        self.lists: list[int] = []
        self.cell = False
        self.first_heading = ""

    def flush(self) -> None:
        raw = "".join(self.inline)
        self.inline = []
        if self.pre:
            return
        text = " ".join(raw.split())
        if not text:
            return
        if self.heading:
            self.blocks.append(f"{'#' * self.heading} {text.replace('[[', '[ [')}")
            self.first_heading = self.first_heading or text
            return
        text = escape_markdown(text)
        if self.lists:  # indentation capped: 20,000 nested lists indented each item by 20,000 levels
            text = "  " * min(len(self.lists) - 1, MAX_LIST_INDENT) + "- " + text
        if self.quote:
            text = "> " + text
        self.blocks.append(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skip += 1
            return
        a = dict(attrs)
        if self.skip:
            return
        anchor = a.get("id")
        if anchor and anchor in self.anchors:
            self.flush()
            self.blocks.append(f"{_MARK}{anchor}{_MARK}")
        if tag in _BLOCKS and tag not in ("td", "th"):
            self.flush()
        if tag in ("td", "th"):
            if self.cell:
                self.inline.append(" | ")
            self.cell = True
        elif tag == "tr":
            self.cell = False
        if re.fullmatch(r"h[1-6]", tag):
            self.heading = int(tag[1])
        elif tag == "blockquote":
            self.quote += 1
        elif tag in ("ul", "ol"):
            self.lists.append(0)
        elif tag == "pre":
            self.pre += 1
            self.inline = []
        elif tag == "img" and a.get("alt"):
            self.inline.append(f" {a['alt']} ")
        elif tag == "br" and self.pre:
            self.inline.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
            return
        if self.skip:
            return
        if tag == "pre" and self.pre:
            code = "".join(self.inline).strip("\n")
            self.inline = []
            self.pre -= 1
            if code.strip():
                self.blocks.append("```\n" + code.replace("```", "ʼʼʼ") + "\n```")
            return
        if tag in _BLOCKS and tag not in ("td", "th"):
            self.flush()
        if re.fullmatch(r"h[1-6]", tag):
            self.heading = 0
        elif tag == "blockquote":
            self.quote = max(0, self.quote - 1)
        elif tag in ("ul", "ol") and self.lists:
            self.lists.pop()

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.inline.append(data.replace(_MARK, " "))  # the book's own \x02 is no anchor mark


def to_markdown(xhtml: str, anchors: set[str] | frozenset[str] = frozenset()) -> tuple[str, str]:
    """(markdown of an XHTML document, its first heading); each id in ``anchors`` leaves a
    ``\\x02id\\x02`` line where its element starts."""
    p = _Markdown(set(anchors))
    walk_html(xhtml, p)
    p.flush()
    return "\n\n".join(p.blocks), p.first_heading


# -- a linear HTML walk ----------------------------------------------------------------------------
# The standard library's html.parser rescans the rest of the text from every "<" that does not close
# ("<!--" repeated 80,000 times without ">": tens of seconds in CPython 3.11.7, CVE-2025-6069). This walk looks
# at each character a bounded number of times: a tag ends at its ">" and holds no "<", so a failed tag
# costs only the way to the next "<"; a comment, declaration or raw-text element that never closes
# ends the document.


class Handler(Protocol):
    """What ``walk_html`` calls, as ``html.parser.HTMLParser`` would (tags lower-cased, entities decoded)."""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None: ...
    def handle_endtag(self, tag: str) -> None: ...
    def handle_data(self, data: str) -> None: ...


# Possessive: after a failed match the name must not give letters back to the attributes, or an
# unclosed "<a" followed by N letters costs O(N²) (seconds for a line of letters).
_TAG = re.compile(r"""<(/?)([A-Za-z][^\s/<>]*+)((?:[^<>"']|"[^"<]*"|'[^'<]*')*+)>""")
_ATTR = re.compile(r"""([^\s=/<>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?""")
_RAW = {"script", "style", "textarea", "title"}  # their text is not markup, up to their end tag
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def walk_html(text: str, handler: Handler) -> None:
    """Call ``handler`` for each tag and run of text of an (X)HTML document, in one linear pass."""
    pos, n = 0, len(text)
    data: list[str] = []

    def flush() -> None:
        joined = "".join(data)
        data.clear()
        if joined:
            handler.handle_data(html.unescape(joined))

    while pos < n:
        lt = text.find("<", pos)
        if lt < 0:
            data.append(text[pos:])
            break
        data.append(text[pos:lt])
        if text.startswith("<!--", lt):
            end = text.find("-->", lt + 4)
            if end < 0:
                break  # an unclosed comment runs to the end of the document
            pos = end + 3
            continue
        if text.startswith("<![CDATA[", lt):
            end = text.find("]]>", lt + 9)
            flush()
            handler.handle_data(text[lt + 9 :] if end < 0 else text[lt + 9 : end])
            if end < 0:
                break
            pos = end + 3
            continue
        if text.startswith(("<!", "<?"), lt):  # a declaration or processing instruction
            end = text.find(">", lt + 2)
            if end < 0:
                break
            pos = end + 1
            continue
        m = _TAG.match(text, lt)
        if m is None:
            data.append("<")
            pos = lt + 1
            continue
        flush()
        pos = m.end()
        tag = m.group(2).lower()
        if m.group(1):
            handler.handle_endtag(tag)
            continue
        inner = m.group(3)
        attrs = [
            (
                a.group(1).lower(),
                html.unescape(next((v for v in a.group(2, 3, 4) if v is not None), ""))
                if a.group(2) is not None or a.group(3) is not None or a.group(4) is not None
                else None,
            )
            for a in _ATTR.finditer(inner)
        ]
        handler.handle_starttag(tag, attrs)
        if inner.rstrip().endswith("/") or tag in _VOID:
            handler.handle_endtag(tag)
        elif tag in _RAW:
            close = re.compile(rf"</{re.escape(tag)}\s*>", re.IGNORECASE).search(text, pos)
            raw_end = close.start() if close else n
            if tag in ("textarea", "title"):
                handler.handle_data(html.unescape(text[pos:raw_end]))
            pos = close.end() if close else n
            handler.handle_endtag(tag)
    flush()
