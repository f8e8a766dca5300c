"""The full build's lean whoosh writer (index/lexical_bulk.py) writes the index whoosh's own writer
writes: the same terms, postings, blocks, lengths and stored fields, read back by whoosh unchanged."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mdmem.index.lexical import FOREVER, LexicalDoc, LexicalIndex, term_counts

WORDS = [
    "payment",
    "retry",
    "timeout",
    "Kafka",
    "ERR_PAY_504",
    "deploy",
    "schema",
    "migration",
    "支付系统",
    "重试",
    "incident",
    "rollback",
    "postgres",
    "cache",
    "latency",
    "owner",
]


def make_docs(n: int, seed: int = 3) -> list[LexicalDoc]:
    rnd = random.Random(seed)
    docs = []
    for i in range(n):
        body = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 120)))
        body += " common" + f" uniq{i}" + (" rare" if i % 97 == 0 else "")  # "common": every doc, 3 blocks at 300
        tags = rnd.sample(["ops", "Billing", "infra", "team-a"], rnd.randint(0, 3))
        docs.append(
            LexicalDoc(
                path=f"notes/{i % 7}/n{i}.md",
                id=f"id{i}",
                title=" ".join(rnd.sample(WORDS, 3)) if i % 11 else "",
                aliases="alias " + rnd.choice(WORDS) if i % 5 == 0 else "",
                entities=" \n".join(rnd.sample(WORDS, 2)),
                tags=tags,
                headings=" \n".join(rnd.sample(WORDS, rnd.randint(0, 4))),
                body=body,
                type=rnd.choice(["note", "decision", "fact"]),
                scope=rnd.choice(["global", "project:x"]),
                status="forgotten" if i % 13 == 0 else "active",
                date=1.7e9 + i * 3600.5,
                hash=f"h{i}",
                hide_until=1.8e9 if i % 17 == 0 else 0.0,
                vfrom=0.0,
                vuntil=1.75e9 if i % 19 == 0 else FOREVER,
            )
        )
    return docs


def answer(fn: Any, *args: Any) -> Any:
    """What ``fn`` returns, or the type of what it raises (whoosh's min_field_length raises for a field
    no document has)."""
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__


def contents(directory: Path) -> dict[str, Any]:
    """Everything a reader can see of the index, per field, term, block and document."""
    lx = LexicalIndex(directory)
    out: dict[str, Any] = {}
    with lx.ix.searcher() as s:
        r = s.reader()
        out["docs"] = [s.stored_fields(d) for d in range(r.doc_count_all())]
        out["counts"] = (r.doc_count(), r.doc_count_all(), lx.ix.latest_generation())
        for field in sorted(r.indexed_field_names()):
            if s.schema[field].scorable:
                out[f"len:{field}"] = (
                    [r.doc_field_length(d, field) for d in range(r.doc_count_all())],
                    r.field_length(field),
                    answer(r.min_field_length, field),
                    answer(r.max_field_length, field),
                )
            for term in r.lexicon(field):
                ti = r.term_info(field, term)
                m = r.postings(field, term)
                blocks, postings = [], []
                while m.is_active():
                    blocks.append(
                        (
                            m.block_min_id(),
                            m.block_max_id(),
                            m.block_min_length(),
                            m.block_max_length(),
                            m.block_max_weight(),
                        )
                    )
                    postings.append((m.id(), m.weight(), m.value()))
                    m.next()
                out[f"{field}:{term!r}"] = (
                    ti.weight(),
                    ti.doc_frequency(),
                    ti.min_length(),
                    ti.max_length(),
                    ti.max_weight(),
                    ti.min_id(),
                    ti.max_id(),
                    blocks,
                    postings,
                )
    lx.close()
    return out


@pytest.mark.parametrize(("n", "counted"), [(0, False), (1, False), (300, False), (300, True)])
def test_lean_writer_writes_what_whooshs_writer_writes(tmp_path: Path, n: int, counted: bool) -> None:
    docs = make_docs(n)
    if counted:  # terms counted ahead, as the parse worker of a full build does
        docs = [replace(d, counts=term_counts(d)) for d in docs]
    lean = LexicalIndex.create(tmp_path / "lean")
    lean.write(docs, (), bulk=True)  # a new index: the lean writer
    lean.close()
    plain = LexicalIndex.create(tmp_path / "plain")
    plain.write(docs, ("nothing/here.md",), bulk=True)  # a delete: whoosh's own writer
    plain.close()
    got, want = contents(tmp_path / "lean"), contents(tmp_path / "plain")
    assert got.keys() == want.keys()
    for key in want:
        assert got[key] == want[key], key
    if n:  # "common" is in every document: at 300, three blocks of postings (128 each)
        blocks = {b[:2] for b in want["body:b'common'"][7]}
        assert len(want["body:b'common'"][8]) == n and len(blocks) == (n + 127) // 128
    files = [sorted(p.suffix or p.name for p in (tmp_path / d).iterdir()) for d in ("lean", "plain")]
    assert files[0] == files[1]  # the same files (a segment's name is random)
    if n:  # and inside the segment, byte for byte: postings, terms, lengths, stored fields
        assert segment_files(tmp_path / "lean") == segment_files(tmp_path / "plain")


def segment_files(directory: Path) -> dict[str, bytes]:
    lx = LexicalIndex(directory)
    (seg,) = lx.ix._segments()
    storage = seg.open_compound_file(lx.ix.storage)
    out = {name.replace(seg.segid, "S"): storage.open_file(name).read() for name in storage.list()}
    storage.close()
    lx.close()
    assert any(name.endswith(".pst") for name in out)
    return out


def test_a_lean_index_takes_later_updates_and_searches(tmp_path: Path) -> None:
    docs = make_docs(300)
    lx = LexicalIndex.create(tmp_path / "lx")
    lx.write(docs, (), bulk=True)
    before = [h.path for h in lx.search("payment retry", 10)]
    assert before and lx.doc_count() == 300
    lx.write([docs[0]], ["notes/1/n1.md"])  # an incremental update on top: whoosh's writer, a second segment
    assert lx.doc_count() == 299
    assert "notes/1/n1.md" not in [h.path for h in lx.search("uniq1", 10)]
    assert [h.path for h in lx.search("uniq0", 10)] == ["notes/0/n0.md"]
    lx.close()


def test_the_lean_writer_leaves_no_segment_when_a_document_fails(tmp_path: Path) -> None:
    lx = LexicalIndex.create(tmp_path / "lx")

    def docs() -> Any:
        yield from make_docs(5)
        raise RuntimeError("parse failed")

    with pytest.raises(RuntimeError):
        lx.write(docs(), (), bulk=True)
    assert lx.doc_count() == 0 and lx.ix.is_empty()
    assert sorted(p.name for p in (tmp_path / "lx").iterdir()) == ["_notes_0.toc", "notes_WRITELOCK"]
    lx.close()


def test_a_full_build_with_a_parse_worker_indexes_what_a_serial_one_does(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many notes: a worker process parses them and counts their terms ahead; the index is the same."""
    from mdmem.adapters.config import load_config
    from mdmem.index import lexical, parsing
    from mdmem.index.store import IndexStore

    store = IndexStore(vault_dir, load_config(vault_dir))
    store.reindex(full=True)  # serial: the fixture has fewer notes than PARALLEL_PARSE_MIN
    serial = contents(store.directory / "lexical")
    counted: list[bool] = []
    write = lexical.LexicalIndex.write

    def spy(self: Any, upserts: Any, deletes: Any, **kw: Any) -> None:
        write(self, (counted.append(d.counts is not None) or d for d in upserts), deletes, **kw)

    monkeypatch.setattr(lexical.LexicalIndex, "write", spy)
    monkeypatch.setattr(parsing, "PARALLEL_PARSE_MIN", 1)
    monkeypatch.setattr(parsing.os, "cpu_count", lambda: 2)
    store.reindex(full=True)
    assert counted and all(counted)  # the worker counted every note's terms
    parallel = contents(store.directory / "lexical")
    store.close()
    assert parallel.keys() == serial.keys()
    for key in serial:
        assert parallel[key] == serial[key], key
