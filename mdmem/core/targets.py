"""Pure: link targets resolved as Obsidian resolves them, to notes and attachments."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .links import normalize_ref

_EXTENSION = re.compile(r"\.(?=[0-9]*[A-Za-z])[A-Za-z0-9]{1,8}$")


def names_attachment(target: str) -> bool:
    """Whether a link target names a file that is not a note: its name ends in an extension
    (``image.png``, ``doc.pdf``, ``board.canvas``) other than .md."""
    name = target.rsplit("/", 1)[-1].strip()
    return bool(_EXTENSION.search(name)) and name[:-3].strip(".") != "" and not name.lower().endswith(".md")


class LinkResolver:
    """Link targets resolved as Obsidian resolves them.

    In order: a path relative to the linking note (``./x``, ``../x``, and markdown links to a file,
    which are relative first); an exact vault path; an ``id`` (mdmem's own typed links); a partial
    path by path suffix (``[[Sync/Security]]``); a bare name by file name (``[[Canvas]]``; an
    attachment by its name with extension); last, a ``title`` the frontmatter gives (mdmem's notes
    are named by slug). When several files match, the one nearest the linking note wins: its own
    folder, then the folder sharing the longest path with it, then the shortest path, then the
    first by path. Aliases and H1 titles are display names, never link targets, so a renamed note's
    old links dangle instead of finding a stranger.
    """

    __slots__ = ("paths", "ids", "titles", "files", "nodes", "_cache", "_near")

    def __init__(
        self, names: Iterable[tuple[str, str, str]], attachments: Iterable[str], nodes: Mapping[str, Any]
    ) -> None:
        self.paths: dict[str, str] = {}  # normalised vault path → file (notes without .md)
        self.ids: dict[str, list[str]] = {}
        self.titles: dict[str, list[str]] = {}
        self.files: dict[str, list[tuple[str, str]]] = {}  # file name → [(normalised path, file)]
        self.nodes = nodes
        self._cache: dict[str, tuple[str | None, str, tuple[str, ...]]] = {}
        self._near: dict[tuple[str, str], tuple[str, str, tuple[str, ...]]] = {}
        for norm, path, kind in names:
            if kind == "path":
                self.paths[norm] = path
                self.files.setdefault(norm.rpartition("/")[2], []).append((norm, path))
            elif kind == "id":
                self.ids.setdefault(norm, []).append(path)
            elif kind == "title":
                self.titles.setdefault(norm, []).append(path)
        for path in attachments:
            # keep the extension (normalize_ref drops a .md), except of markdown files that are not
            # notes (README.md when excluded), which links name without it as they name notes
            norm = normalize_ref(path if path[-3:].lower() == ".md" else path + ".md")
            self.paths[norm] = path
            self.files.setdefault(norm.rpartition("/")[2], []).append((norm, path))

    def resolve(self, raw: str, norm: str, src: str | None) -> tuple[str | None, str, tuple[str, ...]]:
        """(file or None, how it was found, every candidate when several matched)."""
        raw = raw.strip()
        relative = raw.startswith(("./", "../"))
        file_path = "." in raw.rpartition("/")[2] and ("/" in raw or raw[-3:].lower() == ".md")
        if src is not None and (relative or file_path):
            rel = posixpath.normpath(posixpath.join(posixpath.dirname(src), raw))
            hit = self.paths.get(normalize_ref(rel)) if not rel.startswith("../") else None
            if hit is not None or relative:
                return hit, "relative", ()
        found = self._cache.get(norm)
        if found is None:
            found = self._cache[norm] = self._lookup(norm)
        dst, how, cands = found
        if dst is None and cands:
            # the choice depends only on the linking note's folder: links from one folder share it
            here = src.rpartition("/")[0] if src else ""
            near = self._near.get((norm, here))
            if near is None:
                near = self._near[(norm, here)] = self._nearest(cands, here, how)
            return near
        return found

    def _lookup(self, norm: str) -> tuple[str | None, str, tuple[str, ...]]:
        norm = norm.lstrip("/")  # "/x" is the vault root's x
        if not norm:
            return None, "", ()
        hit = self.paths.get(norm)
        if hit is not None:
            return hit, "path", ()
        ids = self.ids.get(norm)
        if ids:
            return (ids[0], "id", ()) if len(ids) == 1 else (None, "id", tuple(sorted(ids)))
        head, _, name = norm.rpartition("/")
        named = self.files.get(name, ())
        how = "suffix" if head else "name"
        if head:
            tail = "/" + norm
            named = [(n, p) for n, p in named if n.endswith(tail)]
        if not named:
            titled = self.titles.get(norm)
            if not titled:
                return None, "", ()
            # Versions of one note share a title: the active one is meant.
            active = [p for p in titled if p in self.nodes and self.nodes[p].status == "active"]
            named = [(p, p) for p in (active if len(active) == 1 else titled)]
            how = "title"
        if len(named) == 1:
            return named[0][1], how, ()
        return None, how, tuple(sorted(p for _, p in named))

    @staticmethod
    def _nearest(cands: tuple[str, ...], folder: str, how: str) -> tuple[str, str, tuple[str, ...]]:
        """Of several files sharing a name, the one nearest a note in ``folder`` (see the class docstring)."""
        here = folder.split("/")

        def key(path: str) -> tuple[bool, int, int, str]:
            there = path.rpartition("/")[0].split("/")
            shared = 0
            for a, b in zip(here, there, strict=False):
                if a != b or not a:
                    break
                shared += 1
            return there != here, -shared, len(path), path

        ranked = sorted(cands, key=key)
        first, second = key(ranked[0]), key(ranked[1])
        why = "same folder" if not first[0] else "nearest folder" if first[1] < second[1] else "shortest path"
        return ranked[0], f"{how}, {why}", cands
