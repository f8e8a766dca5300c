"""Chunk vectors in usearch, and the content-hash embedding cache — the only module importing usearch.

The usearch file belongs to an index generation; the cache (``.mdmem/embeddings.sqlite``) lives
beside the generations, keyed by (model fingerprint, chunk hash), so a rebuild or a moved file
never re-embeds an unchanged chunk and two models' vectors never mix.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

EXACT_BELOW = 20_000  # below this many vectors brute force is as fast as HNSW and exact
EXPANSION_SEARCH = 256  # the default 64 gives poor recall on embedding-like data


class EmbeddingCache:
    """(model fingerprint, chunk hash) → float16 vector, in SQLite."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS vec (model TEXT NOT NULL, hash TEXT NOT NULL, v BLOB NOT NULL,"
            " PRIMARY KEY (model, hash)) WITHOUT ROWID"
        )

    def missing(self, model: str, hashes: Iterable[str]) -> list[str]:
        """The hashes that have no vector for ``model`` yet."""
        wanted = list(dict.fromkeys(hashes))
        have: set[str] = set()
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            q = f"SELECT hash FROM vec WHERE model=? AND hash IN ({','.join('?' * len(part))})"
            have.update(r[0] for r in self.db.execute(q, (model, *part)))
        return [h for h in wanted if h not in have]

    def get_many(self, model: str, hashes: Sequence[str], dim: int) -> dict[str, np.ndarray]:
        import numpy as np

        out: dict[str, np.ndarray] = {}
        uniq = list(dict.fromkeys(hashes))
        for i in range(0, len(uniq), 500):
            part = uniq[i : i + 500]
            q = f"SELECT hash, v FROM vec WHERE model=? AND hash IN ({','.join('?' * len(part))})"
            for h, blob in self.db.execute(q, (model, *part)):
                v = np.frombuffer(blob, dtype=np.float16)
                if v.shape[0] == dim:
                    out[h] = v.astype(np.float32)
        return out

    def put_many(self, model: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        """Store vectors in one transaction (a batch survives an interrupt of the next one)."""
        import numpy as np

        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany(
                "INSERT OR REPLACE INTO vec VALUES (?,?,?)",
                [(model, h, np.asarray(v, dtype=np.float16).tobytes()) for h, v in items],
            )

    def close(self) -> None:
        self.db.close()


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
            if writable:
                index.load(str(path))
            else:
                index.view(str(path))
            index.expansion_search = EXPANSION_SEARCH
        return cls(index, path)

    def __len__(self) -> int:
        return len(self._index)  # type: ignore[arg-type]

    def add(self, keys: Sequence[int], vectors: np.ndarray) -> None:
        import numpy as np

        if len(keys):
            self._index.add(np.asarray(keys, dtype=np.uint64), vectors)  # type: ignore[attr-defined]

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
        self._index.save(str(tmp))  # type: ignore[attr-defined]
        os.replace(tmp, self.path)
