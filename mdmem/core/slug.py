"""File-name slugs of titles, in a module of their own: the prompt hook needs one and nothing else of ``text``."""

from __future__ import annotations

import re


def slugify(title: str) -> str:
    """A file-name slug that keeps letters of every script: 'Use Hotwire!' → 'use-hotwire'."""
    s = re.sub(r"[^\w\s-]", "", title.casefold(), flags=re.UNICODE)
    s = re.sub(r"[\s_-]+", "-", s).strip("-")
    s = s[:80]
    while len(s.encode()) > 200:  # file names are at most 255 bytes; 80 CJK extension chars are 320
        s = s[:-1]
    return s.rstrip("-") or "note"
