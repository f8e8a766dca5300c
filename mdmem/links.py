"""Pure markdown analysis of a note body: headings, sections, wikilinks, note links, #tags.

Built on markdown-it-py so that code spans and fenced code never yield links or tags.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import unquote

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline


@dataclass(frozen=True, slots=True)
class Link:
    """An edge from a note: target reference as written, its type, and optional label/heading."""

    target: str
    type: str = "mentions"
    label: str | None = None
    heading: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Heading:
    """A markdown heading: level, text and the 0-based source line it starts on."""

    level: int
    text: str
    line: int


@dataclass(slots=True)
class BodyInfo:
    """What markdown analysis finds in a body."""

    headings: list[Heading] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    text: str = ""  # plain text of the body (markup stripped) for indexing


_TAG = re.compile(r"(?<![\w/#&])#([^\W\d][\w/\-]*|\d+[^\W\d][\w/\-]*)", re.UNICODE)
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.\-]*:", re.IGNORECASE)


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """Inline rule for Obsidian links: [[target]], [[target|label]], [[target#heading]], ![[embed]]."""
    src, pos = state.src, state.pos
    if not src.startswith("[[", pos):
        return False
    end = src.find("]]", pos + 2)
    if end < 0 or "\n" in src[pos + 2 : end]:
        return False
    inner = src[pos + 2 : end]
    if not inner.strip():
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.content = inner
    state.pos = end + 2
    return True


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough")
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    return md


def split_wikilink(inner: str) -> Link:
    """``target#heading|label`` → Link (``\\|`` is the label bar inside a table cell)."""
    target, _, label = inner.replace("\\|", "|").partition("|")
    target, _, heading = target.partition("#")
    return Link(
        target=target.strip(), label=label.strip() or None, heading=heading.strip() or None
    )


def analyze_body(body: str) -> BodyInfo:
    """Headings, links, tags and plain text of a markdown body."""
    info = BodyInfo()
    tokens = _parser().parse(body)
    text_parts: list[str] = []
    tags: dict[str, None] = {}
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            inline = tokens[i + 1]
            line = tok.map[0] if tok.map else 0
            info.headings.append(Heading(int(tok.tag[1:]), _inline_text(inline), line))
        if tok.type in ("fence", "code_block"):
            text_parts.append(tok.content)
            continue
        if tok.type == "html_block":
            text_parts.append(tok.content)
            continue
        if tok.type != "inline" or not tok.children:
            continue
        for child in tok.children:
            if child.type == "wikilink":
                link = split_wikilink(child.content)
                if link.target:
                    info.links.append(link)
                text_parts.append(link.label or link.target)
            elif child.type in ("link_open", "image"):
                href = str(child.attrs.get("href" if child.type == "link_open" else "src", ""))
                target, heading = _file_href(href)
                if target:
                    info.links.append(Link(target=target, heading=heading))
            elif child.type == "text":
                text_parts.append(child.content)
                for m in _TAG.finditer(child.content):
                    tags.setdefault(m.group(1).lower(), None)
            elif child.type == "code_inline":
                text_parts.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                text_parts.append("\n")
        text_parts.append("\n")
    info.tags = list(tags)
    info.text = "".join(text_parts)
    return info


def _inline_text(inline) -> str:  # type: ignore[no-untyped-def]
    parts = []
    for child in inline.children or []:
        if child.type == "wikilink":
            link = split_wikilink(child.content)
            parts.append(link.label or link.target)
        elif child.type in ("text", "code_inline"):
            parts.append(child.content)
    return "".join(parts).strip()


def _file_href(href: str) -> tuple[str | None, str | None]:
    """A markdown link's (or image's) target and heading if it points at a file in the vault: a
    note (``x.md``) or an attachment (any other extension); else (None, None). URL-encoding is
    undone (``My%20Note.md``); web links, ``#anchors`` and extension-less paths are not files."""
    if not href or href.startswith("#") or _EXTERNAL.match(href) or href.startswith("//"):
        return None, None
    path, _, heading = href.partition("#")
    path = unquote(path.split("?", 1)[0])
    name = path.rsplit("/", 1)[-1]
    if not name or "." not in name.strip("."):
        return None, None
    return path, unquote(heading).strip() or None


def normalize_ref(ref: str) -> str:
    """Canonical form of a note reference for lookups: case-folded, no .md, / separators."""
    r = ref.strip().strip("[]").split("|", 1)[0].split("#", 1)[0].strip()
    r = r.replace("\\", "/")
    if r.startswith("./"):
        r = r[2:]
    if r.lower().endswith(".md"):
        r = r[:-3]
    # NFC: a file named in decomposed form (macOS, some zips) matches the composed text people type.
    return unicodedata.normalize("NFC", r.casefold())
