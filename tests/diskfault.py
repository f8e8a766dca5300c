"""A small disk for tests that cannot mount one: the free space mdmem is told, and index writes that fail past it.

``SmallDisk(monkeypatch, free)`` makes ``adapters.disk.free_bytes`` report ``free`` bytes and every file
whoosh writes (segments, the compound copy, the TOC) raise ``OSError(ENOSPC)`` once ``free`` bytes have been
written through it, as a real disk does. ``says`` reports another figure instead (a disk something else
fills meanwhile, so checks made before the write pass). ``give_back(n)`` frees ``n`` bytes. What is not metered (SQLite,
note files) is faked where a test needs it, at the point it names.
"""

from __future__ import annotations

import errno
import os
from typing import Any

import pytest


class _Metered:
    """A writable file that takes its bytes from the disk's budget."""

    def __init__(self, raw: Any, disk: SmallDisk) -> None:
        self._raw = raw
        self._disk = disk

    def write(self, data: Any) -> int:
        n = len(memoryview(data).cast("B"))
        if n > self._disk.free:
            part = max(0, self._disk.free)
            self._raw.write(bytes(memoryview(data).cast("B")[:part]))  # what fitted is on disk, as on a real one
            self._disk.free = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._disk.free -= n
        self._disk.written += n
        return int(self._raw.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


class SmallDisk:
    """See the module's docstring."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, free: int, says: int | None = None) -> None:
        from whoosh.filedb.filestore import FileStorage

        from mdmem.adapters import disk

        self.free = free
        self.says = says
        self.written = 0
        original = FileStorage.create_file

        def create_file(storage: Any, name: str, *a: Any, **k: Any) -> Any:
            f = original(storage, name, *a, **k)
            f.file = _Metered(f.file, self)
            return f

        monkeypatch.setattr(FileStorage, "create_file", create_file)
        monkeypatch.setattr(disk, "free_bytes", self.reported, raising=False)

    def reported(self, path: object) -> int:
        return max(0, self.free) if self.says is None else self.says

    def give_back(self, n: int) -> None:
        self.free = max(0, self.free) + n
