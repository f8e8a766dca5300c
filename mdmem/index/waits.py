"""The indexer's waits and limits: what a read waits for and what a hook indexes itself, each a
setting the environment can change (the prompt hook sets what its budget leaves; tests use small ones)."""

from __future__ import annotations

import os

INLINE_MAX = 150  # notes a hook (or a read) indexes itself (a hook's budget); more go to the background job
CATCHUP_WAIT = 30.0  # seconds a read waits for the background catch-up (a few hundred notes fit, loaded)
# Seconds a read with edits to index waits for another writer (a hook, the embedding job adding a round of
# vectors, another warm process indexing the same save: a moment each) before it answers as it is, saying so.
READ_LOCK_WAIT = 5.0


def catchup_wait() -> float:
    """Seconds a read waits for the background catch-up before it answers from the index as it is:
    ``CATCHUP_WAIT``, or $MDMEM_CATCHUP_WAIT (the prompt hook sets what its time budget leaves)."""
    try:
        return max(0.0, float(os.environ.get("MDMEM_CATCHUP_WAIT", CATCHUP_WAIT)))
    except ValueError:
        return CATCHUP_WAIT


def read_lock_wait(lock_timeout: float) -> float:
    """``READ_LOCK_WAIT`` (at most the vault's lock timeout), or $MDMEM_READ_LOCK_WAIT."""
    try:
        return max(0.0, float(os.environ.get("MDMEM_READ_LOCK_WAIT", min(READ_LOCK_WAIT, lock_timeout))))
    except ValueError:
        return min(READ_LOCK_WAIT, lock_timeout)


def inline_max() -> int:
    """``INLINE_MAX``, or $MDMEM_INLINE_MAX (tests use a small vault)."""
    try:
        return int(os.environ.get("MDMEM_INLINE_MAX", INLINE_MAX))
    except ValueError:
        return INLINE_MAX
