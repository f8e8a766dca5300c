"""The SurrealQL export reader: literal values as an export writes them, statements it reads and skips,
errors naming the line, and linear time on hostile text (each case under a CPU-time limit)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from mdmem.core.surql import Rid, SurqlError, looks_like_export, parse_export


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        ("'plain'", "plain"),
        ('"it\'s"', "it's"),
        ("'a\\nb\\u00e9\\u{1F600}'", "a\nbé\U0001f600"),
        ("d'2026-03-14T10:00:00Z'", "2026-03-14T10:00:00Z"),
        ("u'0190b3c2-7d4e-7000-8000-000000000000'", "0190b3c2-7d4e-7000-8000-000000000000"),
        ("0.9f", 0.9),
        ("3dec", 3.0),
        ("-2e3", -2000.0),
        ("42", 42),
        ("1h30m", "1h30m"),
        ("true", True),
        ("NONE", None),
        ("NULL", None),
        ("memory:mem001", Rid("memory", "mem001")),
        ("entity:⟨ent-railway⟩", Rid("entity", "ent-railway")),
        ("entity:`ent railway`", Rid("entity", "ent railway")),
        ("memory:123", Rid("memory", "123")),
        ("r'memory:abc'", Rid("memory", "abc")),
        ("[1, 'a', [true]]", [1, "a", [True]]),
        ("{ a: 1, 'b c': { d: NONE }, }", {"a": 1, "b c": {"d": None}}),
    ],
)
def test_literals_read_as_an_export_writes_them(literal: str, value: Any) -> None:
    (rec,) = parse_export(f"INSERT [ {{ id: t:x, v: {literal} }} ];")
    assert rec.fields["v"] == value


def test_statements_records_edges_and_deletions_in_order() -> None:
    text = """-- ------------------------------
-- OPTION
-- ------------------------------

OPTION IMPORT;
BEGIN TRANSACTION;
DEFINE TABLE memory TYPE NORMAL SCHEMAFULL PERMISSIONS NONE;
DEFINE FIELD scope ON memory TYPE string DEFAULT 'global; not a statement' PERMISSIONS FULL;
DEFINE FUNCTION fn::f($a: string) { LET $b = 1; RETURN $a; };
/* a block comment; with a semicolon */
INSERT [ { id: memory:a, content: 'x' },
  { id: memory:b, content: 'y' } ];
INSERT RELATION [ { id: relates:r1, in: memory:a, out: memory:b, type: 'supports' } ];
UPDATE memory:c CONTENT { content: 'z' };
RELATE memory:a->relates:r2->memory:c CONTENT { type: 'x' };
RELATE memory:b->relates->memory:c;
DELETE memory:c;
COMMIT TRANSACTION;
"""
    recs = parse_export(text)
    assert [(str(r.id), r.line, r.deleted) for r in recs] == [
        ("memory:a", 11, False),
        ("memory:b", 12, False),
        ("relates:r1", 13, False),
        ("memory:c", 14, False),
        ("relates:r2", 15, False),
        ("relates:@16", 16, False),
        ("memory:c", 17, True),
    ]
    assert (recs[2].source, recs[2].target, recs[2].fields) == (
        Rid("memory", "a"),
        Rid("memory", "b"),
        {"type": "supports"},
    )


def test_an_export_is_told_by_its_content() -> None:
    assert looks_like_export("-- ------------------------------\n-- OPTION\n\nOPTION IMPORT;\n")
    assert looks_like_export("DEFINE TABLE memory SCHEMAFULL;\n")
    assert not looks_like_export("# Memory\n\n- Use Postgres.\n")
    assert not looks_like_export('{"content": "INSERT [ into nothing"}\n')


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("INSERT [ { id: t:x, v: " + "9" * 100 + " } ];", "more than 64 characters"),
        ("INSERT [ { id: t:x, v: $param } ];", "unexpected '$'"),
        ("INSERT [ { id: t:x, v: 'a' 'b' } ];", "expected ',' or '}'"),
        ("UPDATE t:x SET a = 1;", "without CONTENT"),
        ("INSERT INTO t (a) VALUES (1);", "unexpected '('"),
        ("INSERT [ { id: t:x } ] LIMIT 1;", "expected ';'"),
    ],
)
def test_what_an_export_does_not_write_is_refused(text: str, says: str) -> None:
    with pytest.raises(SurqlError, match=says.replace("(", r"\(").replace("$", r"\$")):
        parse_export(text)


SIZE = 2_000_000
HOSTILE = {
    "unclosed block comment": "/*" + " ;" * (SIZE // 2),
    "unclosed string in a DEFINE": "DEFINE FIELD a ON t DEFAULT '" + "x" * SIZE,
    "many short strings": "DEFINE FIELD a ON t DEFAULT " + "'a' " * (SIZE // 4) + ";",
    "unclosed angle key": "INSERT [ { id: t:⟨" + "a" * SIZE,
    "escapes": "INSERT [ { id: t:x, v: '" + "\\'" * (SIZE // 2) + "' } ];",
    "brackets in a DEFINE": "DEFINE FUNCTION fn::f() " + "{}" * (SIZE // 2) + ";",
    "open brackets": "INSERT [ " + "[" * SIZE,
    "semicolons": ";" * SIZE,
    "comment lines": "--\n" * (SIZE // 3),
    "one record per line": "".join(f"UPDATE t:r{i} CONTENT {{ a: {i} }};\n" for i in range(SIZE // 30)),
    "a big INSERT": "INSERT [ " + ", ".join(f"{{ id: t:r{i}, a: 'x' }}" for i in range(SIZE // 25)) + " ];",
    "a number that never ends": "INSERT [ { id: t:x, v: " + "1" * SIZE + " } ];",
}

SCRIPT = r"""
import resource
resource.setrlimit(resource.RLIMIT_CPU, (60, 60))
from mdmem.core.surql import SurqlError, parse_export
from tests.core.test_surql import HOSTILE
for case, text in HOSTILE.items():
    print("case", case, flush=True)  # the last one printed is the one a kill stopped
    try:
        parse_export(text)
    except SurqlError:
        pass
print("done", flush=True)
"""


def test_hostile_exports_are_read_or_refused_in_linear_time() -> None:
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True)
    last = proc.stdout.strip().splitlines()[-1:] or [""]
    assert proc.returncode == 0 and last == ["done"], f"stopped at {last}: {proc.stderr[-2000:]}"
