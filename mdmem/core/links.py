"""Pure markdown analysis of a note body: headings, sections, wikilinks, note links, #tags.

Built on markdown-it-py so that code spans and fenced code never yield links or tags.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from .refs import is_external_href, text_refs

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline
    from markdown_it.token import Token


@dataclass(frozen=True, slots=True)
class Link:
    """An edge from a note: target reference as written, its type, and optional label/heading."""

    target: str
    type: str = "mentions"
    label: str | None = None
    heading: str | None = None
    reason: str | None = None
    property: str | None = None  # the frontmatter property it was written in (``parent: "[[X]]"``)


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
    refs: list[str] = field(default_factory=list)  # web and mail links, bare URLs and e-mail addresses


_TAG = re.compile(r"(?<![\w/#&])#([^\W\d][\w/\-]*|\d+[^\W\d][\w/\-]*)", re.UNICODE)
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.\-]*:", re.IGNORECASE)


def _next(state: StateInline, needle: str, start: int) -> int:
    """``state.src.find(needle, start)``, remembered for the parse: a long line of ``[[`` asked for
    the next ``]]`` from every one of them (quadratic: seconds to index). The first occurrence at or after
    an earlier start is also the first after a later start that does not pass it."""
    memo = state.env.setdefault("mdmem_next", {})
    src = state.src
    seen = memo.get(needle)
    if seen is not None and seen[0] is src and seen[1] <= start and (seen[2] < 0 or seen[2] >= start):
        return int(seen[2])
    found = src.find(needle, start)
    memo[needle] = (src, start, found)
    return found


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """Inline rule for Obsidian links: [[target]], [[target|label]], [[target#heading]], ![[embed]]."""
    src, pos = state.src, state.pos
    if not src.startswith("[[", pos):
        return False
    end = _next(state, "]]", pos + 2)
    if end < 0 or 0 <= _next(state, "\n", pos + 2) < end:
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
    return Link(target=target.strip(), label=label.strip() or None, heading=heading.strip() or None)


# markdown-it reads the first MARKDOWN_MAX characters of a body; the rest is read as plain text (its
# [[links]], markdown links to files, #tags, headings and references found by linear expressions). The
# parser is linear but costs many times more per character on text dense with brackets than on prose
# (docs/benchmarks.md, Hostile input), so a huge note of "[" would take long. 64 K characters is ~20
# pages, more than a book's part (≤ 40 K) and than nearly every note.
MARKDOWN_MAX = 64 * 1024


def analyze_body(body: str) -> BodyInfo:
    """Headings, links, tags and plain text of a markdown body (beyond ``MARKDOWN_MAX``: as plain text)."""
    info = BodyInfo()
    tail = ""
    if len(body) > MARKDOWN_MAX:
        cut = body.rfind("\n\n", 0, MARKDOWN_MAX)  # between paragraphs: no link or span is cut in two
        if cut < MARKDOWN_MAX // 2:
            cut = body.rfind("\n", 0, MARKDOWN_MAX)
        cut = cut if cut > 0 else MARKDOWN_MAX
        body, tail = body[:cut], body[cut:]
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
        labelled: tuple[int, list[str]] | None = None  # a note link's place in info.links, its words so far
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
                    if child.type == "link_open":
                        labelled = (len(info.links) - 1, [])
                elif child.type == "link_open" and is_external_href(href):
                    info.refs.append(href)
            elif child.type == "link_close" and labelled is not None:
                at, words = labelled
                label = "".join(words).strip()
                if label:  # ``[the deploy runbook](ops/deploy.md)``: the words it is linked with
                    info.links[at] = replace(info.links[at], label=label)
                labelled = None
            elif child.type == "text":
                if labelled is not None:
                    labelled[1].append(child.content)
                text_parts.append(child.content)
                for m in _TAG.finditer(child.content):
                    tags.setdefault(m.group(1).lower(), None)
                if "@" in child.content or "://" in child.content or "www." in child.content:
                    info.refs += text_refs(child.content)
            elif child.type == "code_inline":
                if labelled is not None:
                    labelled[1].append(child.content)
                text_parts.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                text_parts.append("\n")
        text_parts.append("\n")
    if tail:
        _plain_tail(info, tail, tags, body.count("\n"))
        text_parts.append(tail)
    info.tags = list(tags)
    info.text = "".join(text_parts)
    return info


_PLAIN_WIKILINK = re.compile(r"\[\[([^\[\]\n]{1,1000})\]\]")
_PLAIN_LINK = re.compile(r"\[([^\[\]\n]{0,1000})\]\(([^()\s]{1,2000})\)")
_PLAIN_HEADING = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+([^\n]+)$", re.MULTILINE)


def _plain_tail(info: BodyInfo, tail: str, tags: dict[str, None], line0: int) -> None:
    """What ``analyze_body`` finds in text past ``MARKDOWN_MAX``, by linear expressions (code spans and
    fences are not told apart there)."""
    for m in _PLAIN_HEADING.finditer(tail):
        text = _strip_closing_hashes(m.group(2))
        if text:
            info.headings.append(Heading(len(m.group(1)), text, line0 + tail.count("\n", 0, m.start())))
    for m in _PLAIN_WIKILINK.finditer(tail):
        link = split_wikilink(m.group(1))
        if link.target:
            info.links.append(link)
    for m in _PLAIN_LINK.finditer(tail):
        target, heading = _file_href(m.group(2))
        if target:
            info.links.append(Link(target=target, label=m.group(1).strip() or None, heading=heading))
        elif is_external_href(m.group(2)):
            info.refs.append(m.group(2))
    for m in _TAG.finditer(tail):
        tags.setdefault(m.group(1).lower(), None)
    if "@" in tail or "://" in tail or "www." in tail:
        info.refs += text_refs(tail)


def _strip_closing_hashes(text: str) -> str:
    """A heading's text without its closing ``#``s and trailing blanks (``## Risks ##`` → Risks), by
    string methods: the expression for it backtracked over long runs of blanks (quadratic)."""
    text = text.rstrip(" \t")
    bare = text.rstrip("#")
    if bare != text and (not bare or bare[-1] in " \t"):
        text = bare.rstrip(" \t")
    return text


def _inline_text(inline: Token) -> str:
    """A heading's inline text as read: wikilinks by their label (else target), code as written."""
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


# Properties whose links are not property links: mdmem's own link fields (``links``, ``supersedes``) are
# edges already, and Obsidian's tags and aliases are types of their own (a tag or another name of this
# note), not text or list properties.
NOT_LINK_PROPERTIES = frozenset({"links", "supersedes", "tags", "aliases"})


def property_links(meta: dict[str, Any]) -> list[Link]:
    """The ``[[links]]`` in a note's text and list properties, as Obsidian counts them, each typed by
    its property's name: ``parent: "[[A]]"``, ``related: "[[A]], [[B]]"``, ``up: ["[[A|x]]", "[[B#h]]"]``,
    and the unquoted ``up: [[A]]`` YAML reads as a list in a list (also as a list's item). Nested
    mappings are no property Obsidian reads; numbers, dates and booleans hold no link."""
    out: list[Link] = []
    for key, value in meta.items():
        if key.casefold() in NOT_LINK_PROPERTIES or not key.strip():
            continue
        if _unquoted(value):
            inners = [value[0][0]]
        elif isinstance(value, str):
            inners = _PLAIN_WIKILINK.findall(value)
        elif isinstance(value, list):
            inners = []
            for item in value:
                if isinstance(item, str):
                    inners += _PLAIN_WIKILINK.findall(item)
                elif _unquoted(item):
                    inners.append(item[0][0])
        else:
            continue
        for inner in inners:
            wl = split_wikilink(inner)
            if wl.target:
                out.append(Link(wl.target, key, wl.label, wl.heading, property=key))
    return out


def _unquoted(value: Any) -> bool:
    """Whether YAML read this value from an unquoted ``[[X]]``: a list holding one list of one text."""
    return (
        isinstance(value, list)
        and len(value) == 1
        and isinstance(value[0], list)
        and len(value[0]) == 1
        and isinstance(value[0][0], str)
        and bool(value[0][0].strip())
    )


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
# Regular expressions, not markdown-it: a cold "mdmem search" would load markdown-it (slow to import) and
# parse every hit's body just to show ~200 characters of it. What the index holds is unchanged
# (``analyze_body``): only what a reader is shown.

_FENCE_LINE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)|%%.*?(?:%%|\Z)", re.DOTALL)  # HTML and Obsidian comments
_HEADING_LINE = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]+(.*)|$)")
_RULE = re.compile(r"^[ \t]{0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,}|=+)$")
_TABLE_SEP = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+")
_CALLOUT = re.compile(r"^\[![\w-]+\][+-]?[ \t]*")
_LIST = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")
_TICKS = re.compile(r"`+")
# Each bracket class leaves out the bracket that opens the construct, so a failed match stops at the
# next opening: "[[" or "[a](" repeated on one long line cost a scan to the line's end per opening.
_EMBED = re.compile(r"!\[\[[^\[\]\n]*\]\]|!\[[^\[\]\n]*\]\([^()\n]*\)")  # ![[image.png]], ![alt](img.png)
_WIKILINK = re.compile(r"\[\[([^\[\]\n]+)\]\]")
_MD_LINK = re.compile(r"\[([^\[\]\n]*)\](?:\([^()\n]*\)|\[[^\[\]\n]*\])")  # [text](url), [text][ref]
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^<>\s]+)>", re.IGNORECASE)
_TAG_HTML = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_FOOTNOTE = re.compile(r"\[\^[^\[\]\s]+\]")
_BLOCK_ID = re.compile(r"[ \t]\^[A-Za-z0-9-]+[ \t]*$")
# The text inside an emphasis holds no character of its marker: "**a " repeated scanned to the line's
# end from each "**" (quadratic); an emphasis with its own marker inside (**a*b**) keeps its marks.
_EMPHASIS = (
    re.compile(r"(\*\*)(?=\S)([^*]+?)(?<=\S)\*\*"),
    re.compile(r"(__)(?=\S)([^_]+?)(?<=\S)__"),
    re.compile(r"(~~)(?=\S)([^~]+?)(?<=\S)~~"),
    re.compile(r"(==)(?=\S)([^=]+?)(?<=\S)=="),
    re.compile(r"(?<![*\w])(\*)(?=[^\s*])([^*]+?)(?<=[^\s*])\*(?![*\w])"),
    re.compile(r"(?<![_\w])(_)(?=[^\s_])([^_]+?)(?<=[^\s_])_(?![_\w])"),  # snake_case stays
)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_ESCAPED = 0xF0000  # escaped characters wait in a private-use plane (U+F0021…U+F007E)
_UNESCAPE = re.compile("[\U000f0021-\U000f007e]")


DISPLAY_MAX = 256 * 1024  # display_text shows at most this many characters of a body (snippets, key lines)


def shown_part(body: str) -> str:
    """The part of a body readers are shown (``display_text``): its first ``DISPLAY_MAX`` characters,
    in whole lines. What each stage that reads a hit's text reads at most."""
    if len(body) <= DISPLAY_MAX:
        return body
    cut = body.rfind("\n", 0, DISPLAY_MAX)
    return body[: cut if cut > 0 else DISPLAY_MAX]


@lru_cache(maxsize=4)
def display_text(body: str) -> str:
    """A markdown body as the text a reader sees: no HTML tags, comments or markdown syntax
    (emphasis, heading #s, link targets, embeds, table pipes, list and quote markers); a link shows
    its label. Code keeps its text; paragraphs stay apart (blank lines), so snippets can pick one.
    Only the first ``DISPLAY_MAX`` characters (whole lines) are shown: a snippet of a huge note is
    taken from its beginning (search still finds every word of it). Kept for the last few bodies: one
    answer shows a hit's text in several stages (candidates, snippets, names in prose)."""
    body = shown_part(body)
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
            line = _strip_closing_hashes(h.group(1) or "")
        else:
            line = _LIST.sub("", line)
        text = _inline(line, table=in_table)
        out.append(text)
    return out


def _inline(line: str, *, table: bool = False) -> str:
    """One line's inline markdown as text; code spans keep their text, without backticks."""
    parts = []
    pos = 0
    for start, end, code in code_spans(line):
        parts.append(_inline_prose(line[pos:start], table))
        parts.append(code.strip() if code.strip() else code)
        pos = end
    parts.append(_inline_prose(line[pos:], table))
    return "".join(parts).strip()


def code_spans(line: str) -> list[tuple[int, int, str]]:
    """(start, end, code) of each code span: a run of backticks closed by the next run of the same
    length. In one pass over the runs (an expression with a back-reference took cubic time on a
    line of backticks)."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(line)]
    by_length: dict[int, list[int]] = {}
    for i, (a, b) in enumerate(runs):
        by_length.setdefault(b - a, []).append(i)
    cursor: dict[int, int] = {}
    spans = []
    i = 0
    while i < len(runs):
        a, b = runs[i]
        same = by_length[b - a]
        k = cursor.get(b - a, 0)
        while k < len(same) and same[k] <= i:
            k += 1
        cursor[b - a] = k
        if k == len(same):
            i += 1
            continue
        c, d = runs[same[k]]
        spans.append((a, d, line[b:c]))
        i = same[k] + 1
    return spans


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
