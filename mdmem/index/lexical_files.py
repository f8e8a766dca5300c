"""whoosh's segment files read in place from their memory map.

whoosh maps a compound segment file (``CompoundStorage``) and gives each part of it (terms, postings,
stored fields, lengths) to its readers as a ``BufferFile``, which wraps the part in ``io.BytesIO``: a copy
of the whole part, made when a searcher opens the segment. On a large vault every cold ``mdmem search``
copied each part it opened that way, costing time and memory (docs/benchmarks.md, Cold start), to read
a few postings. Here the
parts are read through ``SegmentView``, a read-only file over the mapped bytes, which copies only
what is read. The same bytes, the same answers (``tests/test_scale.py``).
"""

from __future__ import annotations

from typing import Any


class SegmentView:
    """A read-only binary file over a buffer (a memoryview of the mapped segment), copying only what is read."""

    __slots__ = ("_buf", "_pos")

    def __init__(self, buf: Any) -> None:
        self._buf = buf
        self._pos = 0

    def read(self, size: int | None = -1) -> bytes:
        start, end = self._pos, len(self._buf)
        if size is not None and size >= 0:
            end = min(end, start + size)
        self._pos = max(start, end)
        return bytes(self._buf[start:end])

    def readinto(self, target: Any) -> int:
        data = self.read(len(target))
        target[: len(data)] = data
        return len(data)

    def readline(self, size: int | None = -1) -> bytes:
        start, end = self._pos, len(self._buf)
        if size is not None and size >= 0:
            end = min(end, start + size)
        chunk = bytes(self._buf[start:end])
        cut = chunk.find(b"\n")
        line = chunk if cut < 0 else chunk[: cut + 1]
        self._pos = start + len(line)
        return line

    def seek(self, offset: int, whence: int = 0) -> int:
        base = (0, self._pos, len(self._buf))[whence]
        if base + offset < 0:
            raise ValueError("negative seek position")
        self._pos = base + offset
        return self._pos

    def tell(self) -> int:
        return self._pos

    def close(self) -> None:
        pass  # the map belongs to the compound storage, which closes it


def read_segments_in_place() -> None:
    """Make whoosh's compound storage hand out ``SegmentView`` files (call once whoosh is imported)."""
    from whoosh.filedb import compound
    from whoosh.filedb.structfile import BufferFile

    if getattr(compound.BufferFile, "in_place", False):
        return

    def buffer_file(buf: Any, name: str | None = None, onclose: Any = None) -> Any:
        f = BufferFile(b"", name=name, onclose=onclose)  # (BytesIO of nothing)
        f._buf, f.file = buf, SegmentView(buf)
        return f

    buffer_file.in_place = True  # type: ignore[attr-defined]  # marks the patch as applied (read above)
    compound.BufferFile = buffer_file
