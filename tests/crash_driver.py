"""Run one ``mdmem`` command and SIGKILL it at a chosen point (for tests/test_crashes.py).

Points named ``enospc-*`` do not kill: they make one write fail as on a full disk.

    python -m tests.crash_driver POINT [mdmem arguments...]

POINT names a function this script wraps so that the process sends itself SIGKILL there: a real
kill -9, no cleanup, no ``finally``, no atexit. Exit status -9 means the point was reached.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _die_after_first(items: Iterable[Any]) -> Iterator[Any]:
    """Yield the first item, then die while the consumer is half-way through."""
    for i, item in enumerate(items):
        if i == 1:
            die()
        yield item
    die()  # fewer than two items: die at the end of the stream, still inside the consumer


def _after(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*a: Any, **k: Any) -> Any:
        fn(*a, **k)
        die()

    return wrapped


def _instead(*a: Any, **k: Any) -> Any:
    die()


def install(point: str) -> None:
    import shutil

    from mdmem.adapters.embed import HashEmbedder
    from mdmem.index import catalog, catalog_embeddings, lexical, store, vectors

    if point == "lexical-inside":  # documents added, whoosh writer open, nothing committed
        orig_write = lexical.LexicalIndex.write
        lexical.LexicalIndex.write = lambda self, ups, dels, **k: orig_write(  # type: ignore[method-assign]
            self, _die_after_first(ups), dels, **k
        )
    elif point == "lexical-toc":  # whoosh segment files written, the TOC not yet
        from whoosh import writing

        from mdmem.index import lexical_bulk

        writing.SegmentWriter._commit_toc = _instead  # type: ignore[method-assign]
        lexical_bulk.commit_toc = _instead  # a full build's segment (the lean writer)
    elif point == "after-lexical":  # lexical committed, catalogue not yet
        lexical.LexicalIndex.write = _after(lexical.LexicalIndex.write)  # type: ignore[method-assign]
    elif point == "catalog-inside":  # inside the catalogue transaction
        orig_apply = catalog.Catalog.apply
        catalog.Catalog.apply = lambda self, notes, *a: orig_apply(  # type: ignore[method-assign]
            self, _die_after_first(notes), *a
        )
    elif point == "after-catalog":  # catalogue committed, meta not yet
        catalog.Catalog.apply = _after(catalog.Catalog.apply)  # type: ignore[method-assign]
    elif point == "manifest":  # full rebuild: new generation complete, the manifest not switched
        orig_replace = os.replace

        def replace(src: Any, dst: Any, *a: Any, **k: Any) -> None:
            if str(dst).endswith("manifest.json"):
                die()
            orig_replace(src, dst, *a, **k)

        os.replace = replace
    elif point == "old-generations":  # full rebuild: manifest switched, old generation not removed
        shutil.rmtree = _instead
    elif point == "embed-batch2":  # the second embedding batch
        calls = {"n": 0}
        orig_embed = HashEmbedder.embed

        def embed(self: Any, texts: Any, *, query: bool = False) -> Any:
            if not query:
                calls["n"] += 1
                if calls["n"] == 2:
                    die()
            return orig_embed(self, texts, query=query)

        HashEmbedder.embed = embed  # type: ignore[method-assign]
    elif point in ("usearch-tmp", "usearch-half"):  # inside VectorIndex.save: temp file (half) written
        from usearch.index import Index

        orig_save = Index.save

        def save(self: Any, path: Any, *a: Any, **k: Any) -> None:
            orig_save(self, path, *a, **k)
            if point == "usearch-half":
                os.truncate(path, os.path.getsize(path) // 2)
            die()

        Index.save = save  # type: ignore[method-assign]
    elif point == "after-vector-save":  # usearch file replaced, catalogue not told
        vectors.VectorIndex.save = _after(vectors.VectorIndex.save)  # type: ignore[method-assign]
    elif point == "add-before-link":  # the note's temp file written, not linked into place
        os.link = _instead
    elif point == "add-after-link":  # linked into place, temp file not removed, not indexed
        os.link = _after(os.link)
    elif point == "add-before-commit":  # written and indexed, not committed
        store.IndexStore.commit = _instead  # type: ignore[method-assign]
    elif point == "enospc-note":  # the disk fills while a note is written: no kill, an error
        import errno

        def fsync(fd: int) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        os.fsync = fsync
    elif point == "enospc-cache":  # the disk fills while the embedding cache is written
        import sqlite3

        def put_many(self: Any, *a: Any, **k: Any) -> None:
            exc = sqlite3.OperationalError("database or disk is full")
            exc.sqlite_errorname = "SQLITE_FULL"  # type: ignore[attr-defined]
            raise exc

        catalog_embeddings.EmbeddingCache.put_many = put_many  # type: ignore[method-assign]
    elif point == "enospc-catalog":  # every catalogue write finds the disk full (reads still work)
        import sqlite3

        def apply(self: Any, *a: Any, **k: Any) -> None:
            exc = sqlite3.OperationalError("database or disk is full")
            exc.sqlite_errorname = "SQLITE_FULL"  # type: ignore[attr-defined]
            raise exc

        catalog.Catalog.apply = apply  # type: ignore[method-assign]
    else:
        raise SystemExit(f"unknown kill point {point!r}")


if __name__ == "__main__":
    install(sys.argv[1])
    sys.argv = ["mdmem", *sys.argv[2:]]
    from mdmem.cli import main

    main()  # exits; a clean exit status means the kill point was never reached
