"""Notes read for an index build: a note as the BM25 index takes it (``lexical_doc``), and many notes
parsed in a second process while this one indexes (``read_notes``); for a full build that process
also counts each note's BM25 terms (a large share of the indexing process's CPU)."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..adapters.files import Files
from ..core.note import Note, NoteDates, iso_to_timestamp

if TYPE_CHECKING:
    from concurrent.futures import Future

    from .catalog import FileState
    from .lexical import LexicalDoc

PARALLEL_PARSE_MIN = 400  # below this, starting a worker costs more than it saves
START_METHOD = "forkserver"  # how the parsing worker starts: "forkserver", "spawn" or "thread"
AHEAD = 4  # batches the worker may parse ahead of the indexing (each ~200 notes)
Read = tuple[str, "Note | None", str, Any]  # (path, note or None if unreadable, digest, term counts or None)


def lexical_doc(note: Note, state: FileState, dates: NoteDates, counts: Any = None) -> LexicalDoc:
    """One note as the BM25 index stores it (dated as the catalogue dates it); ``counts``: its
    ``lexical.term_counts`` if already counted."""
    from .lexical import FOREVER, LexicalDoc

    until = iso_to_timestamp(note.valid_until)
    if until is not None and note.valid_until and len(note.valid_until) == 10:
        until += 86400  # a date-only valid_until holds through that whole day
    return LexicalDoc(
        path=note.path,
        id=note.id,
        title=note.title,
        aliases=" \n".join(note.aliases),
        # a reference or identity written in the frontmatter is found like an entity ("PAY-1234", an e-mail)
        entities=" \n".join([*note.entities, *note.refs, *note.identities]),
        tags=note.tags,
        headings=" \n".join(h.text for h in note.headings),
        body=note.text,
        type=note.type,
        scope=note.scope,
        status=note.status,
        date=dates.date if dates.date is not None else state.mtime_ns / 1e9,
        hash=state.hash,
        hide_until=iso_to_timestamp(note.snoozed_until) or 0.0,
        vfrom=iso_to_timestamp(note.valid_from) or 0.0,
        vuntil=until if until is not None else FOREVER,
        counts=counts,
    )


def read_notes(files: Files, paths: list[str], *, count_terms: bool = False) -> Iterator[Read]:
    """Read and parse ``paths`` in order; many of them in a worker process, a batch ahead of the
    consumer, which then also counts their terms when ``count_terms``."""
    if len(paths) >= PARALLEL_PARSE_MIN and (os.cpu_count() or 1) > 1:
        return _parallel(files, paths, count_terms)
    return ((rel, *files.try_read(rel), None) for rel in paths)


def _read_batch(root: str, exclude: tuple[str, ...], rels: list[str], count_terms: bool) -> list[Read]:
    from .catalog import FileState
    from .lexical import term_counts

    files = Files(Path(root), exclude)
    out: list[Read] = []
    for rel in rels:
        note, digest = files.try_read(rel)
        counts = None
        if count_terms and note is not None:  # (only the texts matter here, not the state or dates)
            counts = term_counts(lexical_doc(note, FileState(digest, 0, 0), NoteDates(None)))
        out.append((rel, note, digest, counts))
    return out


def _parallel(files: Files, paths: list[str], count_terms: bool, batch: int = 200) -> Iterator[Read]:
    from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor

    pool: Executor
    if START_METHOD == "thread":
        pool = ThreadPoolExecutor(max_workers=1)
    else:
        pool = ProcessPoolExecutor(max_workers=1, mp_context=_context())
    with pool:
        parts = (paths[i : i + batch] for i in range(0, len(paths), batch))
        yield from ahead(
            lambda part: pool.submit(_read_batch, str(files.root), files.exclude, part, count_terms), parts
        )


def _context() -> Any:
    """The worker's start method. Never ``fork``: a process that already runs threads (onnxruntime's,
    a watch, a server) would hand the child a lock some thread held, and the build would never return.
    A forkserver is started once per process and forks each build's worker from itself (one thread)."""
    import multiprocessing

    if START_METHOD == "forkserver" and "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload([__name__, f"{__package__}.lexical", f"{__package__}.catalog"])  # workers start warm
        return ctx
    return multiprocessing.get_context("spawn")


def ahead(
    submit: Callable[[list[str]], Future[list[Read]]], parts: Iterable[list[str]], window: int = AHEAD
) -> Iterator[Read]:
    """The batches' notes in order, at most ``window`` batches submitted and not yet consumed. Submitting
    them all at once held every parsed note of a 50k build in memory (the worker outran the indexing and
    each finished future kept its result), which with the catalogue's list (``IndexStore._build``) was
    most of the build's peak memory."""
    pending: deque[Future[list[Read]]] = deque()
    for part in parts:
        pending.append(submit(part))
        if len(pending) >= window:
            yield from pending.popleft().result()
    while pending:
        yield from pending.popleft().result()
