"""The embedding cache (``.mdmem/embeddings.sqlite``, beside the index generations): chunk vectors keyed
by (model fingerprint, chunk hash), so a rebuild or a moved file never re-embeds an unchanged chunk and
two models' vectors never mix. Part of the catalogue (``catalog``): SQLite, run here only."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import numpy as np

T = TypeVar("T")


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
        # Vectors taken from a fetched pack that the local model has not checked yet (see vector_pack).
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS unchecked (model TEXT NOT NULL, hash TEXT NOT NULL, source TEXT NOT NULL,"
            " PRIMARY KEY (model, hash)) WITHOUT ROWID"
        )

    def _retry(self, fn: Callable[[], T]) -> T:
        """Run ``fn``; if SQLite says the file is damaged, drop the file and run it once more."""
        try:
            return fn()
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorname", "") not in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
                raise
            print(
                f"mdmem: embedding cache unreadable ({exc}); starting a new one "
                "(chunks without a vector are embedded again).",
                file=sys.stderr,
            )
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

    def put_unchecked(self, model: str, items: Sequence[tuple[str, np.ndarray]], source: str) -> None:
        """Store vectors from a pack (``source``: its commit) as not yet checked by the local model."""
        import numpy as np

        rows = [(model, h, np.asarray(v, dtype=np.float16).tobytes()) for h, v in items]

        def write() -> None:
            with self.db:
                self.db.execute("BEGIN")
                self.db.executemany("INSERT OR REPLACE INTO vec VALUES (?,?,?)", rows)
                marks = [(m, h, source) for m, h, _ in rows]
                self.db.executemany("INSERT OR REPLACE INTO unchecked VALUES (?,?,?)", marks)

        self._retry(write)

    def unchecked(self, model: str, limit: int | None = None) -> list[tuple[str, str]]:
        """(hash, source) of the vectors from a pack the local model has not checked yet."""
        q = "SELECT hash, source FROM unchecked WHERE model=?" + (f" LIMIT {int(limit)}" if limit else "")
        return self._retry(lambda: list(self.db.execute(q, (model,))))

    def checked(self, model: str, hashes: Sequence[str]) -> None:
        """These pack vectors agree with the local model (or are gone): no longer unchecked."""
        with self.db:
            self.db.executemany("DELETE FROM unchecked WHERE model=? AND hash=?", [(model, h) for h in hashes])

    def convert(self, model: str, source: str, settle: Callable[[np.ndarray], np.ndarray], dim: int) -> int:
        """Give ``model`` the vectors ``source`` holds (the same model's vectors in an older storage format),
        passed through ``settle``, and forget ``source``'s: no model runs. How many; 0 at once when
        ``source`` has none (every open asks)."""
        import numpy as np

        def run() -> int:
            if self.db.execute("SELECT 1 FROM vec WHERE model=? LIMIT 1", (source,)).fetchone() is None:
                return 0
            done = 0
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                rows = self.db.execute("SELECT hash, v FROM vec WHERE model=?", (source,)).fetchall()
                for i in range(0, len(rows), 4096):
                    part = [(h, np.frombuffer(b, dtype=np.float16)) for h, b in rows[i : i + 4096]]
                    part = [(h, v) for h, v in part if v.shape[0] == dim]
                    if not part:
                        continue
                    values = settle(np.stack([v for _, v in part]))
                    self.db.executemany(
                        "INSERT OR IGNORE INTO vec VALUES (?,?,?)",
                        [(model, h, values[j].astype(np.float16).tobytes()) for j, (h, _) in enumerate(part)],
                    )
                    done += len(part)
                self.db.execute("UPDATE OR IGNORE unchecked SET model=? WHERE model=?", (model, source))
                self.db.execute("DELETE FROM unchecked WHERE model=?", (source,))
                self.db.execute("DELETE FROM vec WHERE model=?", (source,))
            return done

        return self._retry(run)

    def drop_unchecked(self, model: str) -> int:
        """Forget every unchecked pack vector of ``model`` (a pack failed its check); how many."""
        with self.db:
            self.db.execute("BEGIN")
            n = self.db.execute(
                "DELETE FROM vec WHERE model=? AND hash IN (SELECT hash FROM unchecked WHERE model=?)", (model, model)
            ).rowcount
            self.db.execute("DELETE FROM unchecked WHERE model=?", (model,))
        return int(n)

    def close(self) -> None:
        self.db.close()
