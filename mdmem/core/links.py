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

from .refs import is_external_href, text_refs

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
    refs: list[str] = field(default_factory=list)  # web and mail links, bare URLs and e-mail addresses (issue 17)


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
                elif child.type == "link_open" and is_external_href(href):
                    info.refs.append(href)
            elif child.type == "text":
                text_parts.append(child.content)
                for m in _TAG.finditer(child.content):
                    tags.setdefault(m.group(1).lower(), None)
                if "@" in child.content or "://" in child.content or "www." in child.content:
                    info.refs += text_refs(child.content)
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


# -- the body as a reader sees it (snippets, key lines) ----------------------------------------------
# Regular expressions, not markdown-it: a cold "mdmem search" would load markdown-it (~35 ms) and
# parse every hit's body just to show ~200 characters of it. What the index holds is unchanged
# (``analyze_body``): only what a reader is shown.

_FENCE_LINE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)|%%.*?(?:%%|\Z)", re.DOTALL)  # HTML and Obsidian comments
_HEADING_LINE = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]+|$)(.*?)(?:[ \t]+#+)?[ \t]*$")
_RULE = re.compile(r"^[ \t]{0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,}|=+)$")
_TABLE_SEP = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+")
_CALLOUT = re.compile(r"^\[![\w-]+\][+-]?[ \t]*")
_LIST = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_EMBED = re.compile(r"!\[\[[^\]\n]*\]\]|!\[[^\]\n]*\]\([^)\n]*\)")  # ![[image.png]], ![alt](img.png)
_WIKILINK = re.compile(r"\[\[([^\]\n]+)\]\]")
_MD_LINK = re.compile(r"\[([^\]\n]*)\](?:\([^)\n]*\)|\[[^\]\n]*\])")  # [text](url), [text][ref]
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]+)>", re.IGNORECASE)
_TAG_HTML = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_FOOTNOTE = re.compile(r"\[\^[^\]\s]+\]")
_BLOCK_ID = re.compile(r"[ \t]\^[A-Za-z0-9-]+[ \t]*$")
_EMPHASIS = (
    re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"),
    re.compile(r"(~~|==)(?=\S)(.+?)(?<=\S)\1"),
    re.compile(r"(?<![*\w])(\*)(?=[^\s*])(.+?)(?<=[^\s*])\*(?![*\w])"),
    re.compile(r"(?<![_\w])(_)(?=[^\s_])(.+?)(?<=[^\s_])_(?![_\w])"),  # snake_case stays
)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_ESCAPED = 0xF0000  # escaped characters wait in a private-use plane (U+F0021…U+F007E)
_UNESCAPE = re.compile("[\U000F0021-\U000F007E]")


def display_text(body: str) -> str:
    """A markdown body as the text a reader sees: no HTML tags, comments or markdown syntax
    (emphasis, heading #s, link targets, embeds, table pipes, list and quote markers); a link shows
    its label. Code keeps its text; paragraphs stay apart (blank lines), so snippets can pick one."""
    out: list[str] = []
    prose: list[str] = []
    fence = ""
    for line in body.splitlines():
        m = _FENCE_LINE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            else:
                out.append(line)
            continue
        if m:
            out.extend(_prose(prose))
            prose.clear()
            fence = m.group(1)
            continue
        prose.append(line)
    out.extend(_prose(prose))
    return "\n".join(out).strip("\n")


def _prose(lines: list[str]) -> list[str]:
    """Lines of markdown outside code fences as plain text lines."""
    lines = _COMMENT.sub("", "\n".join(lines)).split("\n")
    out = []
    in_table = False
    for i, line in enumerate(lines):
        line = _QUOTE.sub("", line)
        line = _CALLOUT.sub("", line)
        if _TABLE_SEP.match(line) and "-" in line and (in_table or (i and "|" in lines[i - 1])):
            in_table = True
            continue
        next_sep = i + 1 < len(lines) and "|" in lines[i + 1] and _TABLE_SEP.match(_QUOTE.sub("", lines[i + 1]))
        in_table = (in_table and "|" in line) or bool(next_sep and "|" in line)
        if _RULE.match(line):
            out.append("")
            continue
        h = _HEADING_LINE.match(line)
        if h:
            line = h.group(1)
        else:
            line = _LIST.sub("", line)
        text = _inline(line, table=in_table)
        out.append(text)
    return out


def _inline(line: str, *, table: bool = False) -> str:
    """One line's inline markdown as text; code spans keep their text, without backticks."""
    parts = []
    pos = 0
    for m in _CODE_SPAN.finditer(line):
        parts.append(_inline_prose(line[pos:m.start()], table))
        parts.append(m.group(2).strip() if m.group(2).strip() else m.group(2))
        pos = m.end()
    parts.append(_inline_prose(line[pos:], table))
    return "".join(parts).strip()


def _inline_prose(s: str, table: bool) -> str:
    import html

    # A backslash-escaped character is text: hidden from the rules below, shown bare at the end.
    s = _ESCAPE.sub(lambda m: chr(_ESCAPED + ord(m.group(1))), s)
    s = _EMBED.sub("", s)
    s = _WIKILINK.sub(lambda m: _link_text(m.group(1)), s)
    s = _MD_LINK.sub(lambda m: m.group(1), s)
    s = _AUTOLINK.sub(lambda m: m.group(1), s)
    s = _TAG_HTML.sub(lambda m: " " if m.group(0).lower().startswith("<br") else "", s)
    s = _FOOTNOTE.sub("", s)
    s = _BLOCK_ID.sub("", s)
    for rx in _EMPHASIS:
        for _ in range(3):  # nested emphasis: ***x***, **_x_**
            s2 = rx.sub(lambda m: m.group(2), s)
            if s2 == s:
                break
            s = s2
    if table:
        s = " · ".join(c.strip() for c in s.strip().strip("|").split("|"))
    return html.unescape(_UNESCAPE.sub(lambda m: chr(ord(m.group()) - _ESCAPED), s))


def _link_text(inner: str) -> str:
    """What Obsidian shows for ``[[inner]]``: the label, else the target (› heading)."""
    link = split_wikilink(inner.replace(chr(_ESCAPED + ord("|")), "|"))
    if link.label:
        return link.label
    if link.heading:
        return f"{link.target} › {link.heading.lstrip('^')}" if link.target else link.heading.lstrip("^")
    return link.target
