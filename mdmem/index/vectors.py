"""Chunk vectors in usearch — the only module importing usearch.

The usearch file belongs to an index generation; the vectors it is filled from are cached by
content hash in ``catalog_embeddings.EmbeddingCache``, so a rebuild re-embeds nothing.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

EXACT_BELOW = 100_000  # below this, brute force costs a few ms and is exact: the same answer on every machine
EXPANSION_SEARCH = 256  # the default 64 gives poor recall on embedding-like data
# The HNSW graph approximate search walks (usearch's defaults), built once an index reaches EXACT_BELOW.
GRAPH_CONNECTIVITY, GRAPH_EXPANSION_ADD = 16, 128
# Below EXACT_BELOW exact search never reads the graph, so it is built as cheaply as usearch allows:
# every answer is the same, the adds are two orders of magnitude faster (docs/benchmarks.md, Vectors).
FLAT_CONNECTIVITY, FLAT_EXPANSION_ADD = 2, 1
REGRAPH_BATCH = 10_000  # vectors moved at a time into the graph built at EXACT_BELOW (bounded memory)


class DamagedVectorFile(Exception):
    """usearch refused the file (truncated, garbage); it is derived data, rebuilt from the cache."""

    inode: int | None = None  # the file refused, to tell it from one a writer put in its place since


class VectorIndex:
    """A usearch index of chunk vectors keyed by integer chunk keys (cosine, f16)."""

    def __init__(self, index: Any, path: Path) -> None:  # a usearch Index (its stubs are partial)
        self._index = index
        self.path = path

    @classmethod
    def open(cls, path: Path, dim: int, *, writable: bool = False) -> VectorIndex:
        """Open (memory-mapped for readers) or create an index at ``path``."""
        from .lean import import_usearch_lean

        import_usearch_lean()
        from usearch.index import Index

        index: Any = _new_index(Index, dim, graph=False)
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
            if index.connectivity < GRAPH_CONNECTIVITY:  # a flat graph (the file keeps its connectivity)
                index.expansion_add = FLAT_EXPANSION_ADD
        return cls(index, path)

    def __len__(self) -> int:
        return len(self._index)

    def add(self, keys: Sequence[int], vectors: np.ndarray) -> None:
        """Add (or replace) vectors: a key already present is replaced, not refused as a duplicate
        (a writer killed after saving the file but before the catalogue recorded it)."""
        import numpy as np

        if len(keys):
            arr = np.asarray(keys, dtype=np.uint64)
            present = arr[np.asarray(self._index.contains(arr), dtype=bool)]
            if len(present):
                self._index.remove(present)
            if self._flat() and len(self._index) + len(arr) >= EXACT_BELOW:
                self._regraph()
            self._index.add(arr, vectors)

    def _flat(self) -> bool:
        """Whether the graph is the cheap one of a small index, which approximate search cannot walk."""
        return int(self._index.connectivity) < GRAPH_CONNECTIVITY

    def _regraph(self) -> None:
        """Move every vector into a new index that builds the real graph: once, when the index grows to
        EXACT_BELOW, after which search walks it. In key order, so two machines build the same graph."""
        import numpy as np
        from usearch.index import Index

        keys = np.sort(np.asarray(self._index.keys, dtype=np.uint64))
        graph: Any = _new_index(Index, int(self._index.ndim), graph=True)
        for i in range(0, len(keys), REGRAPH_BATCH):
            part = keys[i : i + REGRAPH_BATCH]
            graph.add(part, np.asarray(self._index.get(part), dtype=np.float32))
        self._index = graph

    def remove(self, keys: Sequence[int]) -> None:
        import numpy as np

        if len(keys):
            self._index.remove(np.asarray(keys, dtype=np.uint64))

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(key, cosine similarity) of the ``k`` nearest chunks; exact on small indexes."""
        n = len(self)
        if n == 0 or k <= 0:
            return []
        matches = self._index.search(query, min(k, n), exact=n < EXACT_BELOW or self._flat())
        return [(int(key), 1.0 - float(dist)) for key, dist in zip(matches.keys, matches.distances)]

    def vectors(self, keys: Sequence[int]) -> np.ndarray:
        import numpy as np

        got = self._index.get(np.asarray(keys, dtype=np.uint64))
        return np.asarray(got, dtype=np.float32)

    def save(self) -> None:
        """Write atomically: a reader never maps a half-written file."""
        from ..adapters.disk import check_room, no_room

        tmp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.tmp")
        need = int(self._index.serialized_length)
        check_room(self.path.parent, need)  # a save that cannot fit fails before it fills the disk
        try:
            self._index.save(str(tmp))
            os.replace(tmp, self.path)
        except RuntimeError as exc:  # usearch: "Failed to serialize into stream", whatever the cause
            raise no_room(tmp, need) if _full(self.path.parent, need) else OSError(5, str(exc), str(tmp)) from exc
        finally:
            tmp.unlink(missing_ok=True)


def _new_index(index_class: Any, dim: int, *, graph: bool) -> Any:
    """An empty usearch index of cosine f16 vectors, its graph cheap (``graph`` False) or walkable."""
    connectivity, expansion = (
        (GRAPH_CONNECTIVITY, GRAPH_EXPANSION_ADD) if graph else (FLAT_CONNECTIVITY, FLAT_EXPANSION_ADD)
    )
    return index_class(
        ndim=dim,
        metric="cos",
        dtype="f16",
        connectivity=connectivity,
        expansion_add=expansion,
        expansion_search=EXPANSION_SEARCH,
    )


def _full(directory: Path, need: int) -> bool:
    """Whether the disk under ``directory`` lacks room for ``need`` bytes (what the failed save wrote counts)."""
    from ..adapters.disk import free_bytes

    free = free_bytes(directory)
    return free is not None and free < 2 * need
