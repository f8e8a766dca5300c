"""Pure: the records of a SurrealDB export (``surreal export``), read by a small bounded parser.

An export is SurrealQL text: ``OPTION``, ``BEGIN``/``COMMIT`` and ``DEFINE …`` statements, then each
table's records as ``INSERT [ {…}, … ];`` and its edges as ``INSERT RELATION [ {…}, … ];`` (older
versions: ``UPDATE table:id CONTENT {…};`` and ``RELATE a->edge:id->b CONTENT {…};``; versioned
exports add ``DELETE table:id;``). Only that subset is read: values are SurrealQL literals (objects,
arrays, strings with their ``d``/``r``/``u``/``s`` prefixes, numbers with ``f``/``dec`` suffixes,
durations, booleans, ``NONE``/``NULL``, record ids); nothing is evaluated. Every step moves forward
through the text (regular expressions without nested repetition), so reading is linear in its length;
nesting deeper than ``MAX_DEPTH`` and more than ``MAX_RECORDS`` records are refused. A statement or
value outside the subset is an error naming its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 32  # objects and arrays inside each other; exports nest two or three deep
MAX_RECORDS = 200_000
MAX_NUMBER = 64  # characters of one number literal (int() of a million digits is refused, and slow)
# Statements an export holds that carry no records: their text is passed over to the ``;`` that ends
# them (outside strings and brackets: a DEFINE FUNCTION or EVENT holds statements of its own).
SKIPPED = frozenset("OPTION BEGIN COMMIT CANCEL USE DEFINE REMOVE INFO ALTER REBUILD SLEEP LET RETURN THROW".split())

_SPACE = re.compile(r"(?:\s|--[^\n]*|//[^\n]*|#[^\n]*|/\*(?:[^*]|\*(?!/))*\*/)+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYPART = re.compile(r"[A-Za-z0-9_]+")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")
_DURATION = re.compile(r"(?:\d+(?:ns|us|µs|ms|s|m|h|d|w|y))+")
_SUFFIX = re.compile(r"dec|f(?![A-Za-z0-9_])")
_QUOTED = {"'": re.compile(r"'((?:[^'\\]|\\.)*)'", re.S), '"': re.compile(r'"((?:[^"\\]|\\.)*)"', re.S)}
_ANGLED = re.compile(r"⟨((?:[^⟩\\]|\\.)*)⟩", re.S)
_BACKTICK = re.compile(r"`((?:[^`\\]|\\.)*)`", re.S)
_ESCAPE = re.compile(r"\\(u\{[0-9a-fA-F]{1,6}\}|u[0-9a-fA-F]{4}|.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "0": "\0"}


class SurqlError(ValueError):
    """Text outside the subset of SurrealQL an export is written in; ``line`` is where."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Rid:
    """A record id: its table and key (``memory:abc`` → ``Rid("memory", "abc")``)."""

    table: str
    key: str

    def __str__(self) -> str:
        return f"{self.table}:{self.key}"


@dataclass(slots=True)
class Record:
    """One record of an export: its id, its fields and, for an edge, the records it joins."""

    id: Rid
    fields: dict[str, Any] = field(default_factory=dict)
    line: int = 0
    source: Rid | None = None  # an edge's ``in``
    target: Rid | None = None  # an edge's ``out``
    deleted: bool = False  # a ``DELETE`` of the record (a versioned export): it is gone from here on


def _unescape(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        c = m.group(1)
        if c.startswith("u{"):
            return chr(min(int(c[2:-1], 16), 0x10FFFF))
        if c.startswith("u") and len(c) == 5:
            return chr(int(c[1:], 16))
        return _ESCAPES.get(c, c)

    return _ESCAPE.sub(one, body) if "\\" in body else body


class _Reader:
    """A cursor over the export's text; every method moves it forward or raises."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.end = len(text)
        self.counted = (0, 1)  # (position, its line): lines are counted forward from the last one asked

    def line(self, pos: int | None = None) -> int:
        at = self.pos if pos is None else pos
        done, line = self.counted
        if at < done:
            done, line = 0, 1
        line += self.text.count("\n", done, at)
        self.counted = (at, line)
        return line

    def fail(self, reason: str, pos: int | None = None) -> SurqlError:
        return SurqlError(self.line(pos), reason)

    def space(self) -> None:
        m = _SPACE.match(self.text, self.pos)
        if m:
            self.pos = m.end()

    def peek(self) -> str:
        self.space()
        return self.text[self.pos] if self.pos < self.end else ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            found = self.text[self.pos : self.pos + 12].split("\n")[0] or "the end of the file"
            raise self.fail(f"expected {char!r}, found {found!r}")
        self.pos += 1

    def word(self) -> str | None:
        self.space()
        m = _WORD.match(self.text, self.pos)
        if not m:
            return None
        self.pos = m.end()
        return m.group()

    def keyword(self, *words: str) -> str | None:
        """The next word if it is one of ``words`` (any case), consumed; else None, nothing consumed."""
        start = self.pos
        w = self.word()
        if w is not None and w.upper() in words:
            return w.upper()
        self.pos = start
        return None

    def quoted(self) -> str:
        q = self.text[self.pos]
        m = _QUOTED[q].match(self.text, self.pos)
        if not m:
            raise self.fail("a string that never ends")
        self.pos = m.end()
        return _unescape(m.group(1))

    def skip_statement(self) -> None:
        """Pass over a statement's text to its ``;`` (strings and brackets kept whole)."""
        depth = 0
        while True:
            c = self.peek()
            if not c:
                return
            if c in "'\"":
                self.quoted()
            elif c == "`":
                self.escaped(_BACKTICK)
            elif c == "⟨":
                self.escaped(_ANGLED)
            elif c in "{[(":
                depth += 1
                if depth > MAX_DEPTH:
                    raise self.fail(f"nested more than {MAX_DEPTH} deep")
                self.pos += 1
            elif c in "}])":
                depth -= 1
                self.pos += 1
            elif c == ";" and depth <= 0:
                self.pos += 1
                return
            else:
                m = _WORD.match(self.text, self.pos) or _NUMBER.match(self.text, self.pos)
                self.pos = m.end() if m else self.pos + 1

    def escaped(self, pattern: re.Pattern[str]) -> str:
        m = pattern.match(self.text, self.pos)
        if not m:
            raise self.fail("an identifier that never ends")
        self.pos = m.end()
        return _unescape(m.group(1))

    def ident(self) -> str:
        c = self.peek()
        if c == "`":
            return self.escaped(_BACKTICK)
        if c == "⟨":
            return self.escaped(_ANGLED)
        w = self.word()
        if w is None:
            raise self.fail("expected a name")
        return w

    def rid(self) -> Rid:
        """A record id: ``table:key`` (the key plain, ``⟨…⟩``, backquoted, a number or a string)."""
        start = self.pos
        if self.peek() in ("r",) and self.text[self.pos + 1 : self.pos + 2] in ("'", '"'):
            self.pos += 1
            return self.rid_text(self.quoted(), start)
        table = self.ident()
        if self.text[self.pos : self.pos + 1] != ":":
            raise self.fail(f"expected a record id (table:key) after {table!r}", start)
        self.pos += 1
        return Rid(table, self.rid_key())

    def rid_text(self, text: str, start: int) -> Rid:
        table, sep, key = text.partition(":")
        if not sep or not table or not key:
            raise self.fail(f"not a record id: {text[:40]!r}", start)
        return Rid(table, key.strip("⟨⟩`"))

    def rid_key(self) -> str:
        c = self.text[self.pos : self.pos + 1]
        if c == "⟨":
            return self.escaped(_ANGLED)
        if c == "`":
            return self.escaped(_BACKTICK)
        if c in ("'", '"'):
            return self.quoted()
        if c == "u" and self.text[self.pos + 1 : self.pos + 2] in ("'", '"'):
            self.pos += 1
            return self.quoted()
        if c in "[{":  # a complex key (an array or an object): its text is the key
            start = self.pos
            self.value(1)
            return self.text[start : self.pos]
        m = _KEYPART.match(self.text, self.pos) or _NUMBER.match(self.text, self.pos)
        if not m:
            raise self.fail("a record id without a key")
        self.pos = m.end()
        return m.group()

    def value(self, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise self.fail(f"nested more than {MAX_DEPTH} deep")
        c = self.peek()
        if not c:
            raise self.fail("the file ends inside a value")
        if c == "{":
            return self.object(depth + 1)
        if c == "[":
            return self.array(depth + 1)
        if c in "'\"":
            return self.quoted()
        nxt = self.text[self.pos + 1 : self.pos + 2]
        if c in "dusb" and nxt in ("'", '"'):  # datetime, uuid, string, bytes: kept as their text
            self.pos += 1
            return self.quoted()
        if c == "r" and nxt in ("'", '"'):
            return self.rid()
        if c.isdigit() or (c in "-+" and nxt.isdigit()):
            return self.number()
        start = self.pos
        w = self.word()
        if w is not None:
            low = w.lower()
            if self.text[self.pos : self.pos + 1] == ":" and self.text[self.pos + 1 : self.pos + 2] != ":":
                self.pos = start
                return self.rid()
            if low in ("true", "false"):
                return low == "true"
            if low in ("none", "null"):
                return None
            if low in ("nan", "infinity"):
                return float(low)
            if self.text[self.pos : self.pos + 2] == "::" or self.peek() == "(":
                raise self.fail(f"a function call ({w}…) where a value belongs: exports hold values only", start)
            raise self.fail(f"unexpected word {w!r} where a value belongs", start)
        if c in "`⟨":
            return self.rid()
        raise self.fail(f"unexpected {c!r} where a value belongs")

    def number(self) -> Any:
        m = _NUMBER.match(self.text, self.pos)
        if m is None:
            raise self.fail("a sign without a number")
        s = _SUFFIX.match(self.text, m.end())
        d = None if s else _DURATION.match(self.text, self.pos)
        if d and d.end() > m.end():
            self.pos = d.end()
            return d.group()
        self.pos = s.end() if s else m.end()
        text = m.group()
        if len(text) > MAX_NUMBER:
            raise self.fail(f"a number of more than {MAX_NUMBER} characters")
        return float(text) if (s or any(ch in text for ch in ".eE")) else int(text)

    def object(self, depth: int) -> dict[str, Any]:
        self.expect("{")
        out: dict[str, Any] = {}
        while self.peek() != "}":
            c = self.peek()
            if c in "'\"":
                key = self.quoted()
            elif not c:
                raise self.fail("the file ends inside an object")
            else:
                key = self.ident()
            self.expect(":")
            out[key] = self.value(depth)
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "}":
                raise self.fail(f"expected ',' or '}}' after the value of {key!r}")
        self.pos += 1
        return out

    def array(self, depth: int) -> list[Any]:
        self.expect("[")
        out: list[Any] = []
        while self.peek() != "]":
            if not self.peek():
                raise self.fail("the file ends inside a list")
            out.append(self.value(depth))
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "]":
                raise self.fail("expected ',' or ']' in a list")
        self.pos += 1
        return out

    def end_statement(self) -> None:
        if self.keyword("VERSION"):
            self.value()
        c = self.peek()
        if c == ";":
            self.pos += 1
        elif c:
            raise self.fail(f"expected ';' at the end of the statement, found {self.text[self.pos : self.pos + 12]!r}")


def _record(obj: Any, line: int, relation: bool) -> Record:
    if not isinstance(obj, dict):
        raise SurqlError(line, "an INSERT of something that is not a record")
    rid = obj.pop("id", None)
    if not isinstance(rid, Rid):
        raise SurqlError(line, "a record without an id (table:key)")
    src, dst = obj.pop("in", None), obj.pop("out", None)
    if relation and not (isinstance(src, Rid) and isinstance(dst, Rid)):
        raise SurqlError(line, f"the edge {rid} has no in and out records")
    return Record(rid, obj, line, src if relation else None, dst if relation else None)


def parse_export(text: str) -> list[Record]:
    """The records, edges and deletions of an export, in order. Raises ``SurqlError`` (with the line)
    for anything outside the subset an export is written in."""
    r = _Reader(text)
    records: list[Record] = []

    def add(rec: Record) -> None:
        if len(records) >= MAX_RECORDS:
            raise SurqlError(rec.line, f"more than {MAX_RECORDS:,} records: split the export by table")
        records.append(rec)

    while True:
        r.space()
        if r.pos >= r.end:
            return records
        if r.text[r.pos] == ";":
            r.pos += 1
            continue
        start = r.pos
        word = r.word()
        if word is None:
            raise r.fail(f"expected a statement, found {r.text[r.pos : r.pos + 12]!r}")
        kw = word.upper()
        line = r.line(start)
        if kw in SKIPPED:
            r.skip_statement()
        elif kw == "INSERT":
            relation = r.keyword("RELATION") is not None
            r.keyword("IGNORE")
            if r.keyword("INTO"):
                r.ident()
            if r.peek() == "[":  # one record at a time, each with its own line
                r.pos += 1
                while r.peek() != "]":
                    at = r.line()
                    add(_record(r.value(1), at, relation))
                    if r.peek() == ",":
                        r.pos += 1
                    elif r.peek() != "]":
                        raise r.fail("expected ',' or ']' between the records of an INSERT")
                r.pos += 1
            else:
                add(_record(r.value(), line, relation))
            r.end_statement()
        elif kw in ("CREATE", "UPDATE", "UPSERT"):
            rid = r.rid()
            if r.keyword("CONTENT", "MERGE", "REPLACE") is None:
                raise r.fail(f"{kw} {rid} without CONTENT {{…}}: only the form exports write is read")
            obj = r.value()
            if not isinstance(obj, dict):
                raise SurqlError(line, f"{kw} {rid} CONTENT is not an object")
            obj["id"] = rid
            add(_record(obj, line, False))
            r.end_statement()
        elif kw == "RELATE":
            src = r.rid()
            r.expect("-")
            r.expect(">")
            edge = r.rid() if r.text[r.pos : r.pos + 40].split("->")[0].count(":") else Rid(r.ident(), f"@{line}")
            r.expect("-")
            r.expect(">")
            dst = r.rid()
            obj = r.value() if r.keyword("CONTENT") else {}
            if not isinstance(obj, dict):
                raise SurqlError(line, "RELATE … CONTENT is not an object")
            obj.update(id=edge, **{"in": src, "out": dst})
            add(_record(obj, line, True))
            r.end_statement()
        elif kw == "DELETE":
            add(Record(r.rid(), line=line, deleted=True))
            r.end_statement()
        else:
            raise SurqlError(line, f"unsupported statement {word!r}: an export holds DEFINE, INSERT and RELATE")


def looks_like_export(head: str) -> bool:
    """Whether the start of a file reads as a SurrealDB export (its banner or its statements)."""
    if "-- TABLE DATA:" in head or "OPTION IMPORT" in head:
        return True
    return bool(re.search(r"(?m)^\s*(DEFINE (TABLE|FIELD|NAMESPACE|DATABASE)|INSERT (RELATION )?\[)", head))
