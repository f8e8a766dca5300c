"""The catalogue's rows around a few notes: what ``graph_near`` needs to build those notes'
edges exactly as the whole graph has them, without reading every link, note and reference. A part
of ``catalog`` in a module of its own (``Catalog.near``, on the catalogue's connection).

The link and entity queries are supersets: rows that may name one of the notes. The caller
resolves them as ``graph.build_graph`` does and keeps what does.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

NOTE_COLUMNS = (
    "path, id, title, type, status, entities, aliases, date, created, authored, snoozed_until, "
    "valid_from, valid_until"
)  # as ``Catalog.graph_rows`` reads them
PERSON_REF_KINDS = ("email", "handle", "id", "url")  # the kinds of reference a person's identity resolves
_CHUNK = 400  # parameters per IN (...)
# the characters outside ASCII whose str.casefold() has an ASCII letter or digit (ß → ss, ﬁ → fi, K → k)
FOLDING = (
    "\xdf\u0130\u0149\u017f\u01f0\u1e96\u1e97\u1e98\u1e99\u1e9a\u1e9e\u212a\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06"
)
# a file name that starts with white space or is ".md", in paths joined by new lines (Python's \\s is
# str.isspace(); one search over them all takes a tenth of the time SQL's GLOB takes over each)
_ODD_NAME = re.compile(r"/\s|/\.[mM][dD](?:\n|$)")


def _chunks(items: Sequence[Any]) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), _CHUNK):
        yield items[i : i + _CHUNK]


def _marks(n: int) -> str:
    return ",".join("?" * n)


def glob_literal(text: str) -> str:
    """``text`` as a GLOB pattern matching only itself."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def texts_with(column: str, words: Sequence[str], *, json: bool = False) -> tuple[str, list[str]]:
    """SQL that is true of every text in ``column`` whose case-folded form (after percent-decoding)
    contains one of ``words`` (runs of ASCII letters and digits; "" stands for any character
    outside ASCII): it contains the word in some case, or a percent sign, or a character whose
    case-folded form has an ASCII letter (ß → ss, ﬁ → fi, K → k: ``FOLDING``), or ("") any character
    outside ASCII. ``json``: the column holds JSON, which writes those characters as ``\\uXXXX``."""
    cond = ["instr({c}, '%') > 0"]
    args: list[str] = []
    for word in sorted(set(words)):
        if word:
            cond.append("{c} LIKE ?")
            args.append(f"%{word}%")
    if "" in words:
        cond.append("instr({c}, '\\u') > 0" if json else "{c} GLOB '*[^ -~]*'")
    elif json:
        cond += ["instr({c}, ?) > 0"] * len(FOLDING)
        args += [f"\\u{ord(ch):04x}" for ch in FOLDING]
    else:
        cond.append("{c} GLOB ?")
        args.append(f"*[{FOLDING}]*")
    return " OR ".join(x.format(c=column) for x in cond), args


class CatalogNear:
    """Reads of the rows around a few notes: ``Catalog.near``, on the catalogue's connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read inside sees one state of the catalogue (a read transaction)."""
        if self.db.in_transaction:
            yield
            return
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            self.db.execute("COMMIT")

    def note_rows_of(self, paths: Iterable[str]) -> list[tuple[Any, ...]]:
        """The ``graph_rows`` note rows of ``paths`` (those indexed), in the catalogue's order."""
        wanted = sorted(set(paths))
        out: list[tuple[int, tuple[Any, ...]]] = []
        for part in _chunks(wanted):
            out += [
                (r[0], r[1:])
                for r in self.db.execute(
                    f"SELECT rowid, {NOTE_COLUMNS} FROM notes WHERE path IN ({_marks(len(part))})", part
                )
            ]
        return [r for _, r in sorted(out)]

    def names_of(self, paths: Sequence[str]) -> list[tuple[str, str, str]]:
        """(norm, path, kind) of every name of ``paths``."""
        return self.db.execute(
            f"SELECT norm, path, kind FROM names WHERE path IN ({_marks(len(paths))}) ORDER BY rowid", list(paths)
        ).fetchall()

    def link_names(self) -> list[tuple[str, str, str]]:
        """(norm, path, kind) of every name a link target resolves by (path, id, title), in order."""
        return self.db.execute(
            "SELECT norm, path, kind FROM names WHERE kind IN ('path','id','title') ORDER BY rowid"
        ).fetchall()

    def link_names_for(self, norms: Iterable[str], files: Iterable[str]) -> list[tuple[str, str, str]]:
        """The ``link_names`` rows a lookup of ``norms`` and of the file names ``files`` reads: the path,
        id and title names that are one of ``norms``, and the paths of files named one of ``files``
        (found by their stem: see ``odd_paths``), in order."""
        found: dict[int, tuple[str, str, str]] = {}
        for sql, items in (
            ("kind IN ('path','id','title') AND norm IN ({})", sorted(set(norms))),
            (
                "kind = 'path' AND path IN (SELECT path FROM names WHERE kind = 'stem' AND norm IN ({}))",
                sorted(set(files)),
            ),
        ):
            for part in _chunks(items):
                where = sql.format(_marks(len(part)))
                for r in self.db.execute(f"SELECT rowid, norm, path, kind FROM names WHERE {where}", part):
                    found[r[0]] = r[1:]
        return [found[k] for k in sorted(found)]

    def odd_paths(self) -> bool:
        """Whether a note's file name may normalise otherwise than the last part of its normalised path
        (so that its stem would not find it): a path with one of ``#|\\[]``, a file name that starts
        with white space (``str.strip`` strips it from the stem), or one that is just ``.md``."""
        paths = "\n".join(r[0] for r in self.db.execute("SELECT path FROM notes"))
        return any(c in paths for c in "[]#|\\") or _ODD_NAME.search(paths) is not None

    def display_names(self, norms: Iterable[str]) -> list[tuple[str, str, str]]:
        """(norm, path, kind) of the headings and aliases named ``norms`` (entities resolve by them)."""
        wanted = sorted(set(norms))
        rows: list[tuple[str, str, str]] = []
        for part in _chunks(wanted):
            rows += self.db.execute(
                f"SELECT norm, path, kind FROM names WHERE kind IN ('heading','alias') "
                f"AND norm IN ({_marks(len(part))}) ORDER BY rowid",
                part,
            ).fetchall()
        return rows

    def attachment_paths(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT path FROM attachments")]

    def links_near(
        self, srcs: Sequence[str], exact: Sequence[str], names: Sequence[str], words: Sequence[str]
    ) -> list[tuple[Any, ...]]:
        """``graph_rows`` link rows that are written in ``srcs`` or may name a note of them: the target
        (without leading slashes) is one of ``exact``, or its last part one of ``names``, or it may be
        a person's identity that has one of ``words`` (``texts_with``), or it is a relative path whose
        text and the file it names may differ otherwise (``#|\\[]`` in it or its note's path, a last
        part ``.``, ``..`` or empty). Relative paths and paths to files have a dot."""
        cond = [f"src IN ({_marks(len(srcs))})"]
        args: list[Any] = list(srcs)
        if exact:
            cond.append(f"ltrim(target_norm, '/') IN ({_marks(len(exact))})")
            args += exact
        for name in names:
            cond.append("target_norm = ? OR target_norm GLOB ?")
            args += [name, "*/" + glob_literal(name)]
        if words:
            like, more = texts_with("target", words)
            cond.append(like)
            args += more
        cond.append(
            "instr(target, '.') > 0 AND (target GLOB ? OR src GLOB ? OR target_norm GLOB '*[./]' OR target_norm = '')"
        )
        args += ["*[][#|\\]*"] * 2
        return self.db.execute(
            "SELECT src, target, type, label, heading, reason, target_norm, property FROM links WHERE "
            + " OR ".join(f"({c})" for c in cond)
            + " ORDER BY rowid",
            args,
        ).fetchall()

    def entity_paths(self, words: Sequence[str] | None) -> set[str]:
        """Notes with entities, each stored as JSON (``\\u`` escapes), that may have one of ``words``
        (``texts_with``); every note with entities when ``words`` is None."""
        sql = "SELECT path FROM notes WHERE entities IS NOT NULL AND entities != '[]'"
        args: list[Any] = []
        if words is not None:
            like, args = texts_with("entities", words, json=True)
            sql += f" AND ({like})"
        return {r[0] for r in self.db.execute(sql, args)}

    def refs_near(self, srcs: Sequence[str], values: Sequence[str]) -> list[tuple[str, str, str, str, str]]:
        """``refs_rows`` rows written in ``srcs`` or citing one of ``values`` as a person is cited."""
        sql = f"SELECT src, kind, value, written, origin FROM refs WHERE src IN ({_marks(len(srcs))})"
        args = list(srcs)
        if values:
            sql += f" OR (value IN ({_marks(len(values))}) AND kind IN ({_marks(len(PERSON_REF_KINDS))}))"
            args += [*values, *PERSON_REF_KINDS]
        return self.db.execute(sql + " ORDER BY rowid", args).fetchall()

    def identity_rows_of(self, paths: Sequence[str] = (), keys: Iterable[str] = ()) -> list[tuple[str, str, int]]:
        """``identity_rows`` rows of the person notes ``paths`` and of the ``keys``."""
        rows: list[tuple[int, tuple[str, str, int]]] = []
        seen: set[int] = set()
        for col, items in (("path", sorted(set(paths))), ("key", sorted(set(keys)))):
            for part in _chunks(items):
                for r in self.db.execute(
                    f"SELECT rowid, path, key, strength FROM identities WHERE {col} IN ({_marks(len(part))})", part
                ):
                    if r[0] not in seen:
                        seen.add(r[0])
                        rows.append((r[0], r[1:]))
        return [r for _, r in sorted(rows)]
