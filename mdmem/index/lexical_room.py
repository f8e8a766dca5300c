"""Whoosh writes on a disk that may fill: merges only with room for them, and a failed commit's files removed.

A commit writes its new segment as separate files, then copies them into one compound file: for a moment
it needs twice the segment. whoosh's default merge policy (``MERGE_SMALL``) may fold older segments into
that one, the whole index when the Fibonacci rule says so; on a nearly full disk that merge, not the few
notes written, is what filled it, and it was tried again by every later command. Here a merge is made only
when the disk has room for it, and a commit that fails leaves no file the TOC does not name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..adapters import disk

SEGMENT_PER_TEXT = 5  # bytes of segment per byte of note text (postings, stored fields, lengths): generous
SEGMENT_FLOOR = 64 << 10  # a segment's own overhead (its files' headers, the column of lengths)


def segment_estimate(text: int) -> int:
    """Bytes a new segment of ``text`` characters of notes may take (the compound copy not counted)."""
    return SEGMENT_FLOOR + SEGMENT_PER_TEXT * text


def segment_bytes(storage: Any, segment: Any) -> int:
    """Bytes the files of one segment take."""
    total = 0
    for name in segment.list_files(storage):
        try:
            total += int(storage.file_length(name))
        except OSError:
            continue
    return total


def merge_within(directory: Any, new_bytes: int) -> Callable[[Any, list[Any]], list[Any]]:
    """A whoosh merge policy: ``MERGE_SMALL``'s choice of segments, made only when the disk under
    ``directory`` holds the merged segment twice over (and the new one), else no merge at all: the next
    commit with room makes it."""

    def policy(writer: Any, segments: list[Any]) -> list[Any]:
        from whoosh.reading import SegmentReader
        from whoosh.util import fib

        ordered = sorted(segments, key=lambda s: s.doc_count_all())
        total, chosen = 0, []
        for i, seg in enumerate(ordered):  # MERGE_SMALL's rule, without its side effect of adding readers
            total += max(0, seg.doc_count_all())
            chosen.append(seg)
            if i > 3 and total < fib(i + 5):
                break
        else:
            return segments
        if len(chosen) < 2:
            return segments
        free = disk.free_bytes(directory)
        merged = sum(segment_bytes(writer.storage, seg) for seg in chosen)
        if free is not None and free < 2 * (merged + new_bytes) + disk.MARGIN:
            return segments
        for seg in chosen:
            reader = SegmentReader(writer.storage, writer.schema, seg)
            writer.add_reader(reader)
            reader.close()
        return ordered[len(chosen) :]  # (in MERGE_SMALL's order: the index is the one it would make)

    return policy


@contextmanager
def opened_files(storage: Any) -> Iterator[list[Any]]:
    """The files whoosh opens in ``storage`` meanwhile: a writer the disk stopped half-way closes only
    some of its own (the close of one flushes, fails, and leaves the rest open)."""
    files: list[Any] = []

    def tracking(open_: Callable[..., Any]) -> Callable[..., Any]:
        def opened(*a: Any, **k: Any) -> Any:
            f = open_(*a, **k)
            files.append(f)
            return f

        return opened

    storage.create_file, storage.open_file = tracking(storage.create_file), tracking(storage.open_file)
    try:
        yield files
    finally:
        del storage.create_file, storage.open_file  # (the class's methods again)


def abandon(ix: Any, writer: Any, files: list[Any]) -> None:
    """After a failed add or commit: close the writer's ``files``, remove its scratch folder and every
    segment file the current TOC does not name (a half-written segment, a merge's output), and release
    whoosh's lock, so a later writer in this process and the disk find nothing of it."""
    from whoosh.index import TOC, clean_files

    for f in files:
        for close in (f.close, getattr(getattr(f, "file", None), "close", None)):
            try:
                if close is not None and not getattr(f, "is_closed", False):
                    close()
            except Exception:
                pass  # (flushing what the full disk refused fails; the file is closed below all the same)
        raw = getattr(f, "file", None)
        try:
            if raw is not None and not raw.closed:
                raw.close()
        except Exception:
            pass
    try:
        writer.temp_storage().destroy()
    except Exception:
        pass
    writer.is_closed = True
    if writer.writelock:
        try:
            writer.writelock.release()
        except Exception:
            pass
    try:
        toc = TOC.read(ix.storage, ix.indexname)
        clean_files(ix.storage, ix.indexname, toc.generation, toc.segments)
    except Exception:
        pass  # what is left is removed by the next commit that succeeds (whoosh cleans then too)
