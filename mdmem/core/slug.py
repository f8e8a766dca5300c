"""File-name slugs of titles, in a module of their own: the prompt hook needs one and nothing else of ``text``.

Written without ``re`` (the served prompt hook loads none): ``\\w`` is ``str.isalnum()`` or "_", and
``\\s`` is ``str.isspace()``, character by character as the regular expressions read them.
"""

from __future__ import annotations


def slugify(title: str) -> str:
    """A file-name slug that keeps letters of every script: 'Use Hotwire!' → 'use-hotwire'."""
    out: list[str] = []
    gap = False
    for ch in title.casefold():
        if ch.isalnum():
            out.append(ch)
            gap = False
        elif ch in "_-" or ch.isspace():  # a run of spaces, "_" and "-" is one "-"
            if not gap:
                out.append("-")
                gap = True
    s = "".join(out).strip("-")[:80]
    while len(s.encode()) > 200:  # file names are at most 255 bytes; 80 CJK extension chars are 320
        s = s[:-1]
    return s.rstrip("-") or "note"
