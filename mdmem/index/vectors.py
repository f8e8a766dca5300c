"""Chunk vectors in usearch, and the content-hash embedding cache — the only module importing usearch.

The usearch file belongs to an index generation; the cache (``.mdmem/embeddings.sqlite``) lives
beside the generations, keyed by (model fingerprint, chunk hash), so a rebuild or a moved file
never re-embeds an unchanged chunk and two models' vectors never mix.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import numpy as np

T = TypeVar("T")
EXACT_BELOW = 20_000  # below this many vectors brute force is as fast as HNSW and exact
EXPANSION_SEARCH = 256  # the default 64 gives poor recall on embedding-like data


class EmbeddingCache:
    """(model fingerprint, chunk hash) → float16 vector, in SQLite.

    A damaged file (truncated, garbage) is dropped and started afresh: it only saves model time,
    and the vectors already in the usearch index stay.
    """

    db: sqlite3.Connection

    def __init__(self, path: Path) -> None:
        self.path = path
        self._retry(self._connect)

    def _connect(self) -> None:
        self.db = sqlite3.connect(str(self.path), timeout=30, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS vec (model TEXT NOT NULL, hash TEXT NOT NULL, v BLOB NOT NULL,"
            " PRIMARY KEY (model, hash)) WITHOUT ROWID"
        )

    def _retry(self, fn: Callable[[], T]) -> T:
        """Run ``fn``; if SQLite says the file is damaged, drop the file and run it once more."""
        try:
            return fn()
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorname", "") not in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
                raise
            print(f"mdmem: embedding cache unreadable ({exc}); starting a new one "
                  "(chunks without a vector are embedded again).", file=sys.stderr)
            if hasattr(self, "db"):
                self.db.close()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            self._connect()
            return fn()

    def missing(self, model: str, hashes: Iterable[str]) -> list[str]:
        """The hashes that have no vector for ``model`` yet."""
        wanted = list(dict.fromkeys(hashes))

        def read() -> list[str]:
            have: set[str] = set()
            for i in range(0, len(wanted), 500):
                part = wanted[i : i + 500]
                q = f"SELECT hash FROM vec WHERE model=? AND hash IN ({','.join('?' * len(part))})"
                have.update(r[0] for r in self.db.execute(q, (model, *part)))
            return [h for h in wanted if h not in have]

        return self._retry(read)

    def get_many(self, model: str, hashes: Sequence[str], dim: int) -> dict[str, np.ndarray]:
        import numpy as np

        uniq = list(dict.fromkeys(hashes))

        def read() -> dict[str, np.ndarray]:
            out: dict[str, np.ndarray] = {}
            for i in range(0, len(uniq), 500):
                part = uniq[i : i + 500]
                q = f"SELECT hash, v FROM vec WHERE model=? AND hash IN ({','.join('?' * len(part))})"
                for h, blob in self.db.execute(q, (model, *part)):
                    v = np.frombuffer(blob, dtype=np.float16)
                    if v.shape[0] == dim:
                        out[h] = v.astype(np.float32)
            return out

        return self._retry(read)

    def put_many(self, model: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        """Store vectors in one transaction (a batch survives an interrupt of the next one)."""
        import numpy as np

        rows = [(model, h, np.asarray(v, dtype=np.float16).tobytes()) for h, v in items]

        def write() -> None:
            with self.db:
                self.db.execute("BEGIN")
                self.db.executemany("INSERT OR REPLACE INTO vec VALUES (?,?,?)", rows)

        self._retry(write)

    def close(self) -> None:
        self.db.close()


class DamagedVectorFile(Exception):
    """usearch refused the file (truncated, garbage); it is derived data, rebuilt from the cache."""


class VectorIndex:
    """A usearch index of chunk vectors keyed by integer chunk keys (cosine, f16)."""

    def __init__(self, index: object, path: Path) -> None:
        self._index = index
        self.path = path

    @classmethod
    def open(cls, path: Path, dim: int, *, writable: bool = False) -> VectorIndex:
        """Open (memory-mapped for readers) or create an index at ``path``."""
        from usearch.index import Index

        index = Index(ndim=dim, metric="cos", dtype="f16", expansion_search=EXPANSION_SEARCH)
        if path.exists():
            # Writers must load, never view: adding to a viewed index crashes the interpreter.
            try:
                if writable:
                    index.load(str(path))
                else:
                    index.view(str(path))
            except (RuntimeError, ValueError) as exc:  # usearch: "File is corrupted: …"
                raise DamagedVectorFile(f"{path.name}: {exc}") from exc
            index.expansion_search = EXPANSION_SEARCH
        return cls(index, path)

    def __len__(self) -> int:
        return len(self._index)  # type: ignore[arg-type]

    def add(self, keys: Sequence[int], vectors: np.ndarray) -> None:
        """Add (or replace) vectors: a key already present is replaced, not refused as a duplicate
        (a writer killed after saving the file but before the catalogue recorded it)."""
        import numpy as np

        if len(keys):
            arr = np.asarray(keys, dtype=np.uint64)
            present = arr[np.asarray(self._index.contains(arr), dtype=bool)]  # type: ignore[attr-defined]
            if len(present):
                self._index.remove(present)  # type: ignore[attr-defined]
            self._index.add(arr, vectors)  # type: ignore[attr-defined]

    def remove(self, keys: Sequence[int]) -> None:
        import numpy as np

        if len(keys):
            self._index.remove(np.asarray(keys, dtype=np.uint64))  # type: ignore[attr-defined]

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(key, cosine similarity) of the ``k`` nearest chunks; exact on small indexes."""
        n = len(self)
        if n == 0 or k <= 0:
            return []
        matches = self._index.search(query, min(k, n), exact=n < EXACT_BELOW)  # type: ignore[attr-defined]
        return [(int(key), 1.0 - float(dist)) for key, dist in zip(matches.keys, matches.distances)]

    def vectors(self, keys: Sequence[int]) -> np.ndarray:
        import numpy as np

        got = self._index.get(np.asarray(keys, dtype=np.uint64))  # type: ignore[attr-defined]
        return np.asarray(got, dtype=np.float32)

    def save(self) -> None:
        """Write atomically: a reader never maps a half-written file."""
        tmp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.tmp")
        try:
            self._index.save(str(tmp))  # type: ignore[attr-defined]
            os.replace(tmp, self.path)
        finally:
            tmp.unlink(missing_ok=True)
