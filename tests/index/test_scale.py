"""A big vault (50k notes): the work a commit, a cold search and a full build do stays with what
they need, not with the size of the vault. Behaviour, not time: which rows a one-note catch-up reads,
how many parsed notes a full build holds, what a cold search copies, what a hook reads while the
embedding job works. ``benchmarks/bench_spine.py --sizes 50000`` has the figures.
"""

from __future__ import annotations

import fcntl
import io
import os
import pickle
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest

from mdmem import Vault

from ..conftest import git


def _note(i: int) -> str:
    return f"---\ntitle: Note {i}\ntags: [t{i % 7}]\n---\n# Note {i}\n\nword{i} shared text about [[Note {i + 1}]]\n"


@pytest.fixture
def many(tmp_path: Path) -> Path:
    """A git vault of 450 notes (enough for the full build's parse worker), committed, hooks off."""
    root = tmp_path / "many"
    for i in range(450):
        p = root / "notes" / f"f{i % 5}" / f"n{i:04d}.md"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(_note(i))
    (root / ".gitignore").write_text(".mdmem/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "notes")
    return root


def _spy(monkeypatch: pytest.MonkeyPatch, cls: type, name: str) -> list[tuple[object, ...]]:
    """Record the arguments of every call of ``cls.name`` (still called)."""
    calls: list[tuple[object, ...]] = []
    real = getattr(cls, name)

    def spy(self: object, *args: object, **kwargs: object) -> object:
        calls.append((*args, *kwargs.values()))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, spy)
    return calls


# -- a commit's catch-up ------------------------------------------------------------------------------


def test_a_one_note_commit_reads_only_that_notes_rows(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mdmem.index.catalog import Catalog

    with Vault.open(many) as v:
        v.reindex()
    rel = "notes/f3/n0123.md"
    with open(many / rel, "a") as fh:
        fh.write("\nA new word: zebrafinch.\n")
    git(many, "commit", "-qam", "one note")
    stamps = _spy(monkeypatch, Catalog, "stamps")
    with Vault.open(many) as v:
        report = v.after_git("post-commit")
        # the catch-up asked for its note's stamp, never for the whole table (~75 ms at 50k notes)
        assert stamps and all(args and args[0] is not None and set(args[0]) == {rel} for args in stamps)
        assert not isinstance(report, str) and report.updated == [rel] and report.unchanged == 0
        assert [h.path for h in v.search("zebrafinch")] == [rel]


# -- a full build -------------------------------------------------------------------------------------


def test_a_full_build_writes_the_catalogue_as_it_goes(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The catalogue gets its rows a batch at a time while the BM25 segment is built, so the build never
    holds every parsed note (at 50k notes that was ~0.3 GB of a 1 GB peak)."""
    from mdmem.index import indexer
    from mdmem.index.catalog import Catalog

    monkeypatch.setattr(indexer, "CATALOG_BATCH", 100)
    sizes: list[int] = []
    real = Catalog.apply

    def apply(self: Catalog, notes: object, *args: object) -> None:
        items = list(notes)  # type: ignore[call-overload]
        sizes.append(len(items))
        real(self, items, *args)

    monkeypatch.setattr(Catalog, "apply", apply)
    with Vault.open(many) as v:
        report = v.reindex(full=True)
        assert report.full and len(report.added) == 450
        assert max(sizes) <= 100 and sum(sizes) == 450
        assert v.store.catalog.count() == 450
        assert [h.path for h in v.search("word321")] == ["notes/f1/n0321.md"]
        assert v.backlinks("Note 322")  # links resolve across batches (n0321 links Note 322)


def test_the_parse_worker_runs_only_a_few_batches_ahead() -> None:
    """``parsing.ahead``: at most ``window`` batches submitted and not yet consumed; submitting them all
    let the worker outrun the index build and keep every parsed note in memory."""
    from mdmem.index.parsing import ahead

    submitted: list[int] = []

    def submit(part: list[str]) -> Future[list[tuple[str, None, str, None]]]:
        submitted.append(len(part))
        fut: Future[list[tuple[str, None, str, None]]] = Future()
        fut.set_result([(p, None, "", None) for p in part])
        return fut

    parts = [[f"{b}-{i}" for i in range(3)] for b in range(10)]
    out = ahead(submit, iter(parts), window=4)
    seen: list[str] = []
    for rel, *_ in out:
        seen.append(rel)
        consumed_batches = (len(seen) + 2) // 3
        assert len(submitted) <= consumed_batches + 3  # the one being read and three more
    assert seen == [p for part in parts for p in part] and len(submitted) == 10


# -- a cold search --------------------------------------------------------------------------------------


def test_segment_files_are_read_in_place_not_copied(many: Path) -> None:
    """whoosh wrapped each mapped part of a compound segment in BytesIO (a copy of the whole index, made
    by every cold search: 0.2 s and 0.2 GB at 50k notes); it reads them through ``SegmentView`` now."""
    from mdmem.index.lexical_files import SegmentView

    with Vault.open(many) as v:
        v.reindex()
        assert [h.path for h in v.search("word17")] == ["notes/f2/n0017.md"]
        reader = v.store.lexical._current_searcher().reader()
        storage = reader.storage()
        compound = getattr(storage, "a", storage)  # whoosh's overlay of the compound file on the folder
        names = compound.list()
        assert any(n.endswith(".pst") for n in names)  # a compound segment, as every full build writes
        for name in names:
            f = compound.open_file(name)
            assert isinstance(f.file, SegmentView)
            offset, length = compound.range(name)
            assert f.read() == bytes(compound._source[offset : offset + length])


@pytest.mark.parametrize(
    "ops",
    [
        [("read", 3), ("read", -1)],
        [("seek", 5, 0), ("read", 4), ("tell",), ("seek", -2, 1), ("read", 10), ("seek", -3, 2), ("read", None)],
        [("readline", -1), ("readline", 3), ("readline", -1), ("readline", -1), ("read", 1)],
        [("seek", 100, 0), ("read", 5), ("tell",)],
        [("readinto", 4), ("readinto", 50)],
    ],
)
def test_segment_view_reads_as_bytesio_does(ops: list[tuple[object, ...]]) -> None:
    from mdmem.index.lexical_files import SegmentView

    data = b"first line\nsecond\n\nlast bytes \x00\x01"
    ours, theirs = SegmentView(memoryview(data)), io.BytesIO(data)
    for op, *args in ops:
        if op == "readinto":
            a, b = bytearray(args[0]), bytearray(args[0])  # type: ignore[call-overload]
            assert ours.readinto(a) == theirs.readinto(b) and a == b
        else:
            assert getattr(ours, str(op))(*args) == getattr(theirs, str(op))(*args), (op, args)


def test_segment_view_unpickles() -> None:
    from mdmem.index.lexical_files import SegmentView

    for proto in (0, 2, 5):
        blob = pickle.dumps({"terms": [1, 2.5, "x\ny"], "n": None}, proto) + b"tail"
        view = SegmentView(memoryview(blob))
        assert pickle.load(view) == {"terms": [1, 2.5, "x\ny"], "n": None}  # noqa: S301 (our own bytes)
        assert view.read() == b"tail"


def test_a_cold_search_loads_no_graph(many: Path) -> None:
    with Vault.open(many) as v:
        v.reindex()
    with Vault.open(many) as v:
        assert v.search("word42")
        assert "graph" not in v.store.memo


# -- vectors at scale --------------------------------------------------------------------------------


@pytest.fixture
def embedding_job_at_work(many: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``many`` indexed with the automatic embedding on, every model too slow for a hook (so the hook asks
    the background job), the job waiting behind a held running lock: as during a long first embedding."""
    monkeypatch.setenv("MDMEM_AUTO_EMBED", "1")
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    monkeypatch.setenv("MDMEM_EMBED_INLINE", "0")
    monkeypatch.setenv("MDMEM_NO_SERVE", "1")
    (many / ".mdmem").mkdir()
    fd = os.open(many / ".mdmem" / "embed.running", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with Vault.open(many) as v:
            v.reindex()  # asks for the job, which waits for the lock
            assert v.semantic.embedding() == "in the background"
        yield many
    finally:
        os.close(fd)
        from .test_keepup import wait_for_jobs

        wait_for_jobs(many)


def test_while_the_embedding_job_works_a_hook_reads_no_pending_chunks(
    embedding_job_at_work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit in a big vault without vectors yet: the hook indexes its note and asks the job for one more
    pass, without reading every chunk still to embed and asking the cache about each (~0.3 s at 50k)."""
    from mdmem.index.catalog import Catalog
    from mdmem.index.catalog_embeddings import EmbeddingCache
    from mdmem.index.state import EMBED_HOOK

    root = embedding_job_at_work
    with open(root / "notes/f0/n0005.md", "a") as fh:
        fh.write("\nkingfisher\n")
    git(root, "commit", "-qam", "one note")
    reads = _spy(monkeypatch, Catalog, "pending_hashes")
    asked = _spy(monkeypatch, EmbeddingCache, "missing")
    with Vault.open(root) as v:
        token = v.store.state.job_request(EMBED_HOOK)["token"]  # type: ignore[index]
        report = v.after_git("post-commit")
        assert not isinstance(report, str) and report.updated == ["notes/f0/n0005.md"]
        assert v.store.state.job_request(EMBED_HOOK)["token"] != token  # type: ignore[index]  # one more pass
        assert [h.path for h in v.search("kingfisher")] == ["notes/f0/n0005.md"]
        v.vsearch("kingfisher")  # a vector read leaves the chunks to the job too
    assert reads == [] and asked == []


def test_an_embedding_round_reads_the_text_of_its_own_chunks_only(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The job embeds a vault in rounds (``max_new``); each round read the text of every chunk still without
    a vector (~1 s a round at 50k notes), now only that of the chunks it embeds."""
    from mdmem.index.catalog import Catalog

    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    with Vault.open(many) as v:
        v.reindex()
        texts = _spy(monkeypatch, Catalog, "chunks_by_key")
        report = v.semantic.embed(max_new=5)
        assert report.embedded == 5 and report.done == 5 and report.total >= 450
        assert [len(list(args[0])) for args in texts] == [5]  # type: ignore[call-overload]
        assert v.embed().done == report.total  # the rest, later


def test_with_auto_embedding_off_a_hook_opens_no_vector_file_for_an_empty_cache(
    many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``[embed] auto = false`` in a vault whose embedding cache holds none of its pending chunks (an embed
    run once and stopped): a hook has nothing to restore and takes no writer lock or vector file for it
    (it read every pending chunk's text and asked the cache for each vector: ~1 s a hook at 50k notes)."""
    from mdmem.index.semantic import Semantic

    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    with Vault.open(many) as v:
        v.reindex()
        v.semantic.embed(max_new=3)  # the cache exists and holds 3 vectors (of the first notes)
    with open(many / "notes/f4/n0449.md", "a") as fh:
        fh.write("\nkingfisher\n")
    git(many, "commit", "-qam", "one note")
    syncs = _spy(monkeypatch, Semantic, "_sync")
    with Vault.open(many) as v:
        assert not v.semantic.auto
        report = v.after_git("post-commit")
        assert not isinstance(report, str) and report.updated == ["notes/f4/n0449.md"]
        assert v.semantic.keep_up() == "nothing in the cache"
    assert syncs == []
