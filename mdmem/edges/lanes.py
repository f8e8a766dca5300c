"""Warm views of one vault for the servers that stay up (``serve``, ``mcp --http``): warming one up, and
the lanes their calls run on.

A ``Vault`` is not thread-safe, so a server's concurrent calls each hold a view of their own while they
run (a lane): a read takes any free reading lane, a ``Vault`` of its own with the model shared, and the
reads run in parallel as separate processes would (the index is read-only between generations, and
each view checks the files before it reads: a watch of its own); a write takes the writing lane, one
at a time, and the writer lock orders it with every other process. With no reading lanes (stdio,
several vaults, before the warm-up made them) every call takes the writing lane, one at a time.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from ..api.vault import Vault

V = TypeVar("V")

READ_LANES = 1  # reading lanes beside the writer: one more starves the writes over HTTP (benchmarks/README.md)


def read_lanes(default: int = READ_LANES) -> int:
    """How many reading lanes a server opens: ``default``, or $MDMEM_READ_LANES (0: none)."""
    try:
        return max(0, int(os.environ.get("MDMEM_READ_LANES", default)))
    except ValueError:
        return default


class Lanes(Generic[V]):
    """The views a server's calls run on: ``writer`` under ``lock`` for the writes (and for every call
    while there is no reading lane), and the reading lanes ``add`` gives, each held by one read at a time."""

    def __init__(self, writer: V, lock: threading.Lock | None = None) -> None:
        self.writer = writer
        self.lock = lock or threading.Lock()
        self.views: list[V] = []  # the reading lanes, free or not
        self._free: queue.SimpleQueue[V] = queue.SimpleQueue()
        self._adding = threading.Lock()
        self._closed = False

    @property
    def count(self) -> int:
        return len(self.views)

    def add(self, view: V) -> bool:
        """A reading lane: a view of the same vault that reads may run on beside the others. False
        (and not added) once ``quiesce`` began: the caller closes it."""
        with self._adding:
            if self._closed:
                return False
            self.views.append(view)
            self._free.put(view)
            return True

    @contextmanager
    def lane(self, write: bool) -> Iterator[V]:
        """The view a call runs on, held for the call: a free reading lane for a read, else ``writer``."""
        if write or not self.views:
            with self.lock:
                yield self.writer
            return
        view = self._free.get()
        try:
            yield view
        finally:
            self._free.put(view)

    def quiesce(self, timeout: float) -> bool:
        """For a server stopping: take the writing lane and every reading lane, each held until exit (no
        call starts on a closed vault), within ``timeout`` seconds in all; whether all were free by then."""
        deadline = time.monotonic() + timeout
        with self._adding:
            self._closed = True
        if not self.lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
            return False
        for _ in self.views:
            try:
                self._free.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return False
        return True


def warm_up(vault: Vault, lock: threading.Lock, who: str = "mdmem serve") -> dict[str, Any]:
    """Catch edits made while no one was watching, load the model (exporting it first if this machine
    has no ONNX export yet) and answer one hybrid query, so the first real call finds everything warm:
    the model, the BM25 searcher, the vector index, the catalog. Failures are said and never fatal.
    Returns what is warm: the model's runtime (None if it could not load) and the seconds it took."""
    from ..core.errors import LockHeld

    started, runtime = time.monotonic(), None
    with lock:
        try:
            vault.watch_files()  # edits (in place too) reach every later read without a look at each file
            vault.reindex(wait=False)
        except LockHeld:
            pass
        except Exception as exc:  # the answers report index problems themselves
            print(f"{who}: reindex at start failed: {exc}", file=sys.stderr)
        try:
            runtime = vault.warm_model(say=lambda line: print(f"{who}: {line}", file=sys.stderr))
        except Exception as exc:  # BM25 still works; vector answers say what is wrong
            print(f"{who}: the embedding model is not available: {exc}", file=sys.stderr)
        try:
            vault.query("warm up", 1)
            # a cold query's hits take their hints from the graph around them (graph_near); a warm
            # process keeps the whole graph, so that every answer's hints are free
            vault.graph()
        except Exception as exc:
            print(f"{who}: a first query failed: {exc}", file=sys.stderr)
    return {"runtime": runtime, "seconds": round(time.monotonic() - started, 3)}


def open_lane(primary: Vault, *, warm: bool = True, who: str = "mdmem serve") -> Vault | None:
    """A reading lane of ``primary``'s vault: a ``Vault`` of its own with the model shared, warmed as the
    first one is (and watching the files), or None (said on stderr) when it could not open."""
    from ..api.vault import Vault
    from ..api.vault_set import share_model

    lane = None
    try:
        lane = Vault.open(primary.root)
        share_model(lane, primary)
        if warm:
            warm_up(lane, threading.Lock(), who)
        else:
            lane.watch_files()
    except Exception as exc:  # the calls still run, one at a time on the first view
        print(f"{who}: a reading lane could not open: {exc}", file=sys.stderr)
        if lane is not None:
            lane.close()
        return None
    return lane
