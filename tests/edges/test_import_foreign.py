"""`mdmem import` of a ClawMem store and a Qmemory export (real schemas), and of JSONL with its lifecycle
fields: every pin, snooze, validity, status and edge kept; a re-run adds nothing; hostile files refused."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from mdmem import Vault
from mdmem.core.surql import MAX_DEPTH, SurqlError, parse_export
from mdmem.edges.import_entries import entry_id

from ..conftest import git, mdmem_in_process
from .foreign_stores import clawmem_store, qmemory_export


def import_(vault: Path, src: Path, check: bool = True):  # type: ignore[no-untyped-def]
    return mdmem_in_process("--vault", str(vault), "import", str(src), "--json", check=check)


def folder_state(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def out_edges(v: Vault, note_id: str) -> set[tuple[str, str, str | None]]:
    return {(e.to.id if e.to else e.written, e.type, e.reason) for e in v.links(note_id).links}


def in_edges(v: Vault, note_id: str) -> set[tuple[str, str]]:
    return {(e.from_.id, e.type) for e in v.backlinks(note_id).backlinks}


def test_a_clawmem_store_imports_with_every_pin_snooze_status_validity_and_edge(
    git_vault: Path, tmp_path: Path
) -> None:
    src = tmp_path / "claw"
    src.mkdir()
    store = src / "index.sqlite"  # found by its header and tables, not its name
    spec = clawmem_store(store)
    assert len(spec.docs) >= 50
    before = folder_state(src)

    r = json.loads(import_(git_vault, store).stdout)
    assert r["kind"] == "clawmem" and len(r["written"]) == len(spec.docs) and r["errors"] == []
    assert folder_state(src) == before  # the store is read, never written (nor a -wal or -shm left)
    assert "import 60 new" in git(git_vault, "log", "-1", "--format=%s")  # one commit
    assert git(git_vault, "status", "--porcelain") == ""
    assert any("relation weight" in d for d in r["dropped"]) and any("entity_triples" in d for d in r["dropped"])

    v = Vault.open(git_vault)
    ids = {i: entry_id(f"clawmem:notes/{e['path']}") for i, e in spec.docs.items()}
    counts = {"pinned": 0, "snoozed": 0, "archived": 0, "forgotten": 0, "valid_until": 0, "supersedes": 0}
    for i, e in spec.docs.items():
        note = v.get(ids[i])
        assert note.title == e["title"] and note.type == e["type"] and e["marker"] in note.body, i
        assert note.pinned is e["pinned"] and note.confidence == pytest.approx(e["confidence"]), i
        assert (note.snoozed_until or "")[:10] == (e["snoozed_until"] or ""), i
        assert note.status == e["status"], i
        assert (note.valid_until or "")[:10] == (e["valid_until"] or "")[:10], i
        assert note.supersedes == (ids[e["supersedes"]] if e["supersedes"] else None), i
        assert note.entities == e["entities"], i
        assert not note.body.startswith("---")  # ClawMem's own frontmatter is not kept in the body
        counts["pinned"] += note.pinned
        counts["snoozed"] += bool(note.snoozed_until)
        counts["archived"] += note.status == "archived"
        counts["forgotten"] += note.status == "forgotten"
        counts["valid_until"] += bool(note.valid_until)
        counts["supersedes"] += bool(note.supersedes)
    assert all(counts.values()), counts  # the store covers each of them
    assert len(spec.edges) >= 50
    for src_i, dst_i, typ, reason in spec.edges:
        assert (ids[dst_i], typ, reason) in out_edges(v, ids[src_i]), (src_i, dst_i, typ)
        assert (ids[src_i], typ) in in_edges(v, ids[dst_i]), (src_i, dst_i, typ)
    v.close()

    again = json.loads(import_(git_vault, store).stdout)
    assert again["written"] == [] and again["updated"] == [] and again["skipped"] == len(spec.docs)
    assert again["commit"] is None and folder_state(src) == before


def test_a_qmemory_export_imports_memories_entities_and_relates_edges(git_vault: Path, tmp_path: Path) -> None:
    export = tmp_path / "backup.surql"
    spec = qmemory_export(export)
    memories = {k: e for k, e in spec.docs.items() if isinstance(k, int)}
    assert len(memories) >= 50
    before = export.read_bytes()

    r = json.loads(import_(git_vault, export).stdout)
    assert r["kind"] == "qmemory" and r["errors"] == [] and len(r["written"]) == len(spec.docs)
    assert export.read_bytes() == before
    assert git(git_vault, "status", "--porcelain") == ""
    dropped = " ".join(r["dropped"])
    assert "table session" in dropped and "relates edge to a session" in dropped and "memory.embedding" in dropped

    def nid(key: Any) -> str:
        return entry_id(f"qmemory:memory:mem{key:03d}" if isinstance(key, int) else f"qmemory:{key}")

    v = Vault.open(git_vault)
    counts = {"valid_from": 0, "expired": 0, "archived": 0, "forgotten": 0, "supersedes": 0, "scoped": 0}
    for i, e in memories.items():
        note = v.get(nid(i))
        assert e["marker"] in note.body and note.type == e["type"], i
        assert note.salience == pytest.approx(e["salience"]) and note.scope == e["scope"], i
        assert note.valid_from == e["valid_from"] and note.valid_until == e["valid_until"], i
        assert note.status == e["status"], i
        assert note.supersedes == (nid(e["supersedes"]) if e["supersedes"] else None), i
        assert sorted(note.entities) == sorted(e["entities"]), i
        counts["valid_from"] += bool(note.valid_from)
        counts["expired"] += bool(note.valid_until and note.valid_until < "2026")
        counts["archived"] += note.status == "archived"
        counts["forgotten"] += note.status == "forgotten"
        counts["supersedes"] += bool(note.supersedes)
        counts["scoped"] += note.scope != "global"
    assert all(counts.values()), counts
    for key, e in spec.docs.items():
        if not isinstance(key, int):
            note = v.get(nid(key))
            assert (note.title, note.type) == (e["title"], e["type"]), key
    ahmed = v.get(nid("entity:ent_ahmed"))
    assert "ahmed@example.com" in ahmed.identities and "+966501234567" in ahmed.identities
    assert ahmed.aliases == ["Ahmed S."] and v.get(nid("entity:ent_ahmed_wa")).refs == ["+966501234567"]
    assert len(spec.edges) >= 50
    for src, dst, typ, reason in spec.edges:
        assert (nid(dst), typ, reason) in out_edges(v, nid(src)), (src, dst, typ)
        assert (nid(src), typ) in in_edges(v, nid(dst)), (src, dst, typ)
    v.close()

    again = json.loads(import_(git_vault, export).stdout)
    assert again["written"] == [] and again["skipped"] == len(spec.docs) and again["commit"] is None


def test_the_cli_and_mcp_name_what_was_not_kept(git_vault: Path, tmp_path: Path) -> None:
    from .test_mcp import run, stdio_session, text

    export = tmp_path / "backup.surql"
    qmemory_export(export, n=8)
    out = mdmem_in_process("--vault", str(git_vault), "import", str(export), "--dry-run").stdout
    assert "would import" in out and "not kept" in out and "table session records (1)" in out

    async def main() -> None:
        async with stdio_session(git_vault, tmp_path / "err.log") as s:
            await s.initialize()
            r = await s.call_tool("import_memories", {"path": str(export)})
            assert not r.is_error and len(r.structured_content["written"]) == 8 + 6, text(r)
            assert "not kept" in text(r) and "relates edge to a session (1)" in text(r)
            assert any("relates edge to a session" in d for d in r.structured_content["dropped"])
            again = await s.call_tool("import_memories", {"path": str(export)})
            assert again.structured_content["written"] == [] and again.structured_content["skipped"] == 14

    run(main)


def test_jsonl_keeps_validity_confidence_status_and_links_and_names_what_it_drops(
    git_vault: Path, tmp_path: Path
) -> None:
    lines = [
        {
            "id": "a",
            "content": "Staging runs on Railway.",
            "type": "fact",
            "valid_from": "2026-01-01",
            "valid_until": "2026-06-30",
            "confidence": 0.7,
            "links": [{"to": "b", "type": "depends_on", "reason": "needs the db"}],
        },
        {
            "id": "b",
            "content": "The staging database is Postgres 16.",
            "is_active": False,
            "mood": "calm",
            "relates": [{"target": "a", "relation": "supports"}],
        },
        {
            "id": "c",
            "content": "Old retry policy: three attempts.",
            "status": "archived",
            "snoozed_until": "2027-01-01",
        },
        {"id": "d", "content": "Retry policy: five attempts with backoff.", "supersedes": "c", "embedding": [0.1]},
    ]
    src = tmp_path / "memories.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = json.loads(import_(git_vault, src).stdout)
    assert len(r["written"]) == 4 and r["errors"] == []
    assert r["dropped"] == ["field 'embedding' (1)", "field 'mood' (1)"]
    v = Vault.open(git_vault)
    a, b, c, d = (v.get(entry_id(f"jsonl-id:{k}")) for k in "abcd")
    assert (a.valid_from, a.valid_until, a.confidence) == ("2026-01-01", "2026-06-30", 0.7)
    assert b.status == "forgotten" and c.status == "archived" and c.snoozed_until == "2027-01-01"
    assert d.supersedes == c.id
    assert (b.id, "depends_on", "needs the db") in out_edges(v, a.id)
    assert (a.id, "supports", None) in out_edges(v, b.id)
    v.close()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"content": "x", "status": "deleted"}\n{"content": "y", "links": "a"}\n')
    r = json.loads(import_(git_vault, bad, check=False).stdout)
    assert "line 1: status must be one of" in r["errors"][0] and "line 2: links must be a list" in r["errors"][1]


# -- hostile and damaged files ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000), "cannot be read"),
        (lambda p: _sqlite(p, "CREATE TABLE notes (id INTEGER, body TEXT)"), "not a ClawMem store"),
        (
            lambda p: _sqlite(p, "CREATE TABLE documents (x TEXT)", "CREATE TABLE content (hash TEXT)"),
            "lacks hash, id, path, title",
        ),
    ],
    ids=["garbled", "other-schema", "damaged-schema"],
)
def test_a_damaged_or_foreign_sqlite_file_is_refused_in_one_line(git_vault: Path, tmp_path: Path, make, says) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "clawmem.sqlite"
    make(store)
    before = store.read_bytes()
    proc = import_(git_vault, store, check=False)
    assert proc.returncode == 1 and says in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert store.read_bytes() == before and not (git_vault / "notes" / "imported").exists()


def _sqlite(path: Path, *ddl: str) -> None:
    db = sqlite3.connect(path)
    for d in ddl:
        db.execute(d)
    db.commit()
    db.close()


HOSTILE_SURQL = {
    "function": ("INSERT [ { id: memory:a, content: fn::exec('rm -rf /') } ];", 1, "function call"),
    "select": ("OPTION IMPORT;\n\nSELECT * FROM memory;", 3, "unsupported statement 'SELECT'"),
    "unterminated": ("DEFINE TABLE memory;\nINSERT [ { id: memory:a, content: 'never ends } ];", 2, "never ends"),
    "deep": ("INSERT [ " + "[" * 200_000, 1, f"nested more than {MAX_DEPTH} deep"),
    "deep-define": ("DEFINE FUNCTION fn::f() " + "{" * 200_000, 1, f"nested more than {MAX_DEPTH} deep"),
    "no-id": ("\n\n\nINSERT [ { content: 'x' } ];", 4, "without an id"),
    "edge-without-ends": ("INSERT RELATION [ { id: relates:r1, type: 'x' } ];", 1, "no in and out"),
    "garbage": ("-- TABLE DATA: memory\n\x00\x01\x02 ]]]", 2, "expected a statement"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_SURQL))
def test_hostile_surql_is_refused_naming_its_line(case: str) -> None:
    text, line, says = HOSTILE_SURQL[case]
    with pytest.raises(SurqlError) as err:
        parse_export(text)
    assert err.value.line == line and says in str(err.value)


def test_a_hostile_export_imports_nothing_and_says_where(git_vault: Path, tmp_path: Path) -> None:
    export = tmp_path / "qmemory.surql"
    good = "INSERT [ { id: memory:a, content: 'fine', category: 'decision' } ];\n"
    export.write_text("OPTION IMPORT;\n" + good + "INSERT [ { id: memory:b, content: $secret } ];\n")
    proc = import_(git_vault, export, check=False)
    assert proc.returncode == 1 and "qmemory.surql line 3:" in proc.stderr and "Traceback" not in proc.stderr
    assert not (git_vault / "notes" / "imported").exists() and git(git_vault, "status", "--porcelain") == ""


def test_hostile_values_in_a_store_stay_values_in_the_notes(git_vault: Path, tmp_path: Path) -> None:
    store = tmp_path / "claw.sqlite"
    clawmem_store(store, n=6)
    db = sqlite3.connect(store)
    evil = "Use X\n---\nstatus: forgotten\npinned: true\n---"
    db.execute("UPDATE documents SET title = ?, tags = ? WHERE id = 1", (evil, '["a\\nstatus: archived", "#ok"]'))
    db.execute("UPDATE entity_nodes SET name = ? WHERE entity_id = 'ent-1'", ("]: {status: archived}",))
    db.execute(
        "UPDATE memory_relations SET relation_type = ?, metadata = ? WHERE source_id = 3",
        (
            "causal'); DROP TABLE documents; --",
            json.dumps({"reasoning": "}\nstatus: archived\nkey AKIA" + "IOSFODNN7EXAMPLE"}),
        ),
    )
    db.commit()
    db.close()
    import_(git_vault, store)
    v = Vault.open(git_vault)
    one, two, three = (
        v.get(entry_id(f"clawmem:notes/mem/0{i}-{w}.md")) for i, w in ((1, "ledger"), (2, "invoices"), (3, "retries"))
    )
    assert one.title.startswith("Use X") and one.status == "active" and not one.pinned
    assert two.entities == ["]: {status: archived}"] and two.status == "active"
    (edge,) = v.links(three.id).links
    assert edge.type == "causal_drop_table_documents" and "AKIA" not in (edge.reason or "") and three.status == "active"
    assert [p for p in v.doctor().problems if "imported" in p.path] == []
    v.close()


@pytest.mark.parametrize(
    ("module", "bound", "value", "says"),
    [
        ("mdmem.edges.importer", "MAX_EXPORT_BYTES", 1000, "more than 0 MB"),
        ("mdmem.core.surql", "MAX_RECORDS", 10, "more than 10 records"),
    ],
)
def test_an_export_beyond_a_bound_is_refused_in_one_line(  # type: ignore[no-untyped-def]
    git_vault: Path, tmp_path: Path, monkeypatch, module, bound, value, says
) -> None:
    import importlib

    monkeypatch.setattr(importlib.import_module(module), bound, value)
    export = tmp_path / "q.surql"
    qmemory_export(export, n=12)
    proc = import_(git_vault, export, check=False)
    assert proc.returncode == 1 and says in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (git_vault / "notes" / "imported").exists()


@pytest.mark.parametrize(
    ("bound", "value", "says"), [("MAX_DOCUMENTS", 5, "more than 5"), ("MAX_TEXT", 500, "MB of text")]
)
def test_a_store_beyond_a_bound_is_refused_in_one_line(  # type: ignore[no-untyped-def]
    git_vault: Path, tmp_path: Path, monkeypatch, bound, value, says
) -> None:
    from mdmem.adapters import clawmem

    monkeypatch.setattr(clawmem, bound, value)
    store = tmp_path / "claw.sqlite"
    clawmem_store(store, n=12)
    proc = import_(git_vault, store, check=False)
    assert proc.returncode == 1 and says in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (git_vault / "notes" / "imported").exists()
