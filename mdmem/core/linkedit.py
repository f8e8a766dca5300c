"""Pure text edits of a note's frontmatter ``links`` list (``mdmem link`` / ``unlink``).

Only the ``links`` block changes; other keys, comments and the body stay byte for byte. A block
list gains or loses whole item lines (its other items keep their formatting); any other shape of
``links`` is rewritten in flow style by ``note.set_fields``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .note import set_fields

_FM = re.compile(r"\A(\ufeff?---[ \t]*\r?\n)(.*?)(^(?:---|\.\.\.)[ \t]*\r?$)", re.S | re.M)
_KEY = re.compile(r"^(['\"]?)links\1\s*:(.*)$")


def _fm_lines(m: re.Match[str]) -> tuple[str, list[str], bool]:
    """The frontmatter's newline, its lines, and whether it ended with a newline (line dropped)."""
    fm = m.group(2)
    nl = "\r\n" if "\r\n" in fm else "\n"
    lines = fm.split(nl)
    trailing = bool(lines) and lines[-1] == ""
    if trailing:
        lines.pop()
    return nl, lines, trailing


def _links_block(lines: list[str]) -> tuple[int, int] | None:
    """(key line, end) of the top-level ``links`` key, like ``note.set_fields`` finds keys."""
    for i, line in enumerate(lines):
        if _KEY.match(line):
            end = i + 1
            while end < len(lines) and lines[end][:1] in (" ", "\t", "-"):
                end += 1
            return i, end
    return None


def _value_part(key_line: str) -> str:
    m = _KEY.match(key_line)
    value = m.group(2) if m else ""
    return re.sub(r"(^|\s)#.*$", "", value).strip()


def add_link_entry(text: str, entry: str) -> str:
    """``text`` with ``- ENTRY`` appended to its frontmatter ``links`` list."""
    m = _FM.match(text)
    if m is None:
        return f"---\nlinks:\n  - {entry}\n---\n" + text
    nl, lines, trailing = _fm_lines(m)
    found = _links_block(lines)
    if found is None:
        lines += ["links:", f"  - {entry}"]
    else:
        start, end = found
        value = _value_part(lines[start])
        if value in ("", "[]", "null", "~"):
            items = [ln for ln in lines[start + 1 : end] if ln.lstrip().startswith("- ")]
            indent = items[0][: len(items[0]) - len(items[0].lstrip())] if items else "  "
            if value:
                lines[start] = lines[start].replace(value, "", 1).rstrip()
            while end > start + 1 and lines[end - 1].lstrip().startswith("#"):
                end -= 1  # a trailing comment stays after the list
            lines.insert(end, f"{indent}- {entry}")
        else:
            current = _load_value(lines[start:end])
            current = current if isinstance(current, list) else [current] if current is not None else []
            import yaml

            return set_fields(text, {"links": [*current, yaml.safe_load(entry)]})
    new_fm = nl.join(lines) + (nl if trailing or lines else "")
    return text[: m.start(2)] + new_fm + text[m.end(2) :]


def remove_link_entries(text: str, match: Callable[[Any], bool]) -> tuple[str, int, list[Any]]:
    """``text`` without the ``links`` entries ``match(item)`` accepts; (text, removed, kept items)."""
    m = _FM.match(text)
    if m is None:
        return text, 0, []
    nl, lines, trailing = _fm_lines(m)
    found = _links_block(lines)
    if found is None:
        return text, 0, []
    start, end = found
    value = _value_part(lines[start])
    if value not in ("", "null", "~"):  # flow style or a scalar: rewrite the value
        current = _load_value(lines[start:end])
        if not isinstance(current, list):
            return text, 0, [current]
        kept = [it for it in current if not match(it)]
        if len(kept) == len(current):
            return text, 0, kept
        return set_fields(text, {"links": kept or None}), len(current) - len(kept), kept
    # Block list: split into items (an item runs until the next "- " at the items' indent).
    body = lines[start + 1 : end]
    starts = [i for i, ln in enumerate(body) if ln.lstrip().startswith("- ")]
    if not starts:
        return text, 0, []
    indent = len(body[starts[0]]) - len(body[starts[0]].lstrip())
    starts = [i for i in starts if len(body[i]) - len(body[i].lstrip()) == indent]
    drop: set[int] = set()
    kept_items: list[Any] = []
    removed = 0
    for n, i in enumerate(starts):
        j = starts[n + 1] if n + 1 < len(starts) else len(body)
        while j > i + 1 and body[j - 1].lstrip().startswith("#"):
            j -= 1  # comment lines after an item belong to no item
        item = _load_value(["x:", *body[i:j]])
        item = item[0] if isinstance(item, list) and item else item
        if match(item):
            drop.update(range(i, j))
            removed += 1
        else:
            kept_items.append(item)
    if not removed:
        return text, 0, kept_items
    new_body = [ln for i, ln in enumerate(body) if i not in drop]
    if kept_items:
        lines[start + 1 : end] = new_body
    else:
        lines[start:end] = [ln for ln in new_body if ln.strip()]  # comments stay; the empty key goes
    new_fm = nl.join(lines) + (nl if lines else "")
    return text[: m.start(2)] + new_fm + text[m.end(2) :], removed, kept_items


def _load_value(lines: list[str]) -> Any:
    import yaml

    try:
        doc = yaml.safe_load("\n".join(lines))
    except yaml.YAMLError:
        return None
    return next(iter(doc.values())) if isinstance(doc, dict) and doc else None
