"""The index generation the manifest names and its two stores (catalogue, BM25), opened on first use.

The store reads through it and the indexer writes through it: one set of handles per vault, so a write
and the reads after it see the same files, and a rebuild that switches the manifest closes them once.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import IndexMissing, write_failure

if TYPE_CHECKING:
    from .catalog import Catalog
    from .lexical import LexicalIndex
    from .state import IndexState


class CurrentIndex:
    """One vault's current generation: its name, folder and open stores."""

    def __init__(self, state: IndexState) -> None:
        self.state = state
        self.name: str | None = None  # the generation followed (None: not looked up yet)
        self._catalog: Catalog | None = None
        self._lexical: LexicalIndex | None = None

    def close(self) -> None:
        """Release the handles (they open again on the next use)."""
        if self._lexical is not None:
            self._lexical.close()
        if self._catalog is not None:
            self._catalog.close()
        self._lexical = self._catalog = None
        self.name = None

    def follow(self) -> None:
        """Point at the manifest's generation; its stores open lazily on first use."""
        gen = str(self.state.generation())
        if self.name != gen:
            self.close()
            self.name = gen

    @property
    def generation(self) -> str:
        """The generation followed (the manifest's, as of the last ``follow``)."""
        if self.name is None:
            self.follow()
        if self.name in (None, "None"):
            raise IndexMissing(f'No index at {self.state.dir}; run "mdmem reindex".')
        return str(self.name)

    @property
    def directory(self) -> Path:
        """The current generation's folder."""
        return self.state.dir / self.generation

    @property
    def catalog(self) -> Catalog:
        """The note catalogue of the current generation."""
        if self._catalog is not None and self._catalog.read_only and _room(self._catalog.path):
            self._catalog.close()  # space is back: a catalogue that can be written again
            self._catalog = None
        if self._catalog is None:
            from .catalog import Catalog

            path = self.directory / "catalog.sqlite"
            try:
                self._catalog = Catalog(path)
            except Exception as exc:  # WAL mode writes a -shm file even to read
                err = write_failure(exc, path)
                if err is None:
                    raise
                frozen = Catalog.frozen(path) if err.full else None  # a full disk: read what is there
                if frozen is None:
                    raise err from exc
                self._catalog = frozen
        return self._catalog

    @property
    def lexical(self) -> LexicalIndex:
        """The BM25 index of the current generation."""
        if self._lexical is None:
            from .lexical import LexicalIndex

            self._lexical = LexicalIndex(self.directory / "lexical")
        return self._lexical


def _room(path: Path) -> bool:
    from ..adapters.disk import MARGIN, free_bytes

    free = free_bytes(path)
    return free is None or free > MARGIN
