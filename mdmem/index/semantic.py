"""The vector side of the store: the embedder, the embedding cache and the usearch file.

The model is never needed to keep BM25 fresh: ``reindex`` records chunks, and vectors follow:
after every write that changed chunks (``keep_up``, run when the writer lock is released: reindex, the
git hooks, add, import, the lifecycle writes) cached vectors are added at once, and new chunks are
embedded inline when that is cheap, else by one detached background job (``run_job``). ``embed`` does
them all in the foreground, a vector query's ``repair`` a few, ``mdmem serve`` whatever is left.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..adapters.config import auto_embed
from ..core.errors import IndexNotWritten, LockHeld, MdmemError, write_failure
from .state import EMBED_HOOK

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    import numpy as np

    from ..adapters.config import Config, QuerySettings
    from ..adapters.embed import Embedder, EmbedSettings
    from ..core.rank import Candidate, Filters
    from ..results.indexing import EmbedReport
    from .catalog import Catalog
    from .catalog_embeddings import EmbeddingCache
    from .progress import EmbedProgress
    from .state import IndexState
    from .vectors import VectorIndex

AUTO_EMBED_MAX = 16  # a query embeds at most this many pending chunks itself (a wait of seconds on torch)
# What a write may spend in the model for its own chunks before it returns (a commit's hook, an add): more
# goes to the background job. A cold torch MiniLM never fits (it loads in seconds); an ONNX model fits a
# one-note commit (~10 chunks at most); a model already loaded in this process (serve, MCP) fits a few.
# Beside it, embedding here costs a hook the imports (numpy, usearch) and the vector file's update, which
# nearly doubled a small commit's time. The figures: docs/benchmarks.md, "Embedding".
INLINE_SECONDS = 0.5
# An embedder may say what it costs here (attributes ``load_seconds``, ``chunk_seconds``, ``loaded``);
# otherwise: a model by name, else the torch MiniLM as measured on 2 cores (docs/benchmarks.md).
COSTS = {"hash": (0.0, 0.0001)}
DEFAULT_COST = (5.0, 0.1)
QUICK_LOAD_S = 0.5  # a prompt hook runs the vector leg itself when the model loads this fast
JOB_ROUND = 256  # the background job adds vectors to the index every this many chunks (status shows progress)


class Store(Protocol):
    """What the vector side reads and locks of the store that builds it (``IndexStore``)."""

    state: IndexState
    warnings: list[str]

    @property
    def config(self) -> Config: ...
    @property
    def catalog(self) -> Catalog: ...
    @property
    def directory(self) -> Path: ...
    def repair(self, damaged: Exception | None = None, *, notice: bool = True) -> None: ...
    def writer_lock(self, timeout: float | None = None) -> AbstractContextManager[None]: ...
    def follow_generation(self) -> None: ...


class Semantic:
    """Embedder, embedding cache and usearch index of one store; the model loads on first use. It listens
    to the store's indexer: "notes indexed" (``keep_up``) and "new generation" (``carry``)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._cache: EmbeddingCache | None = None
        self._reader: tuple[Any, VectorIndex] | None = None
        self._reranker: Any = None
        self._warm = False  # this process has run the model (its load is paid)
        self._keeping_up = False
        self._native_ready = False

    # Read on first use, so a BM25-only command never trips over [embed]/[query] settings.
    @cached_property
    def settings(self) -> EmbedSettings:
        """[embed] in mdmem.toml."""
        from ..adapters.embed import EmbedSettings

        return EmbedSettings.from_config(self.store.config.extra)

    @cached_property
    def query_settings(self) -> QuerySettings:
        """[query] and [rerank] in mdmem.toml."""
        from ..adapters.config import QuerySettings
        from ..adapters.embed import QUERY_DEFAULTS

        return QuerySettings.from_config(self.store.config.extra, QUERY_DEFAULTS.get(self.settings.model))

    @cached_property
    def embedder(self) -> Embedder:
        """The configured embedder, its passages' vectors as stored (``embed.Settled``); the model itself
        loads on its first ``embed``."""
        from ..adapters.embed import Settled, make_embedder

        return Settled(make_embedder(self.settings))

    @property
    def cache(self) -> EmbeddingCache:
        if self._cache is None:
            from .catalog_embeddings import EmbeddingCache

            path = self.store.state.dir / "embeddings.sqlite"
            try:
                self.store.state.dir.mkdir(exist_ok=True)
                self._cache = EmbeddingCache(path)
                self._convert(self._cache)
            except Exception as exc:  # WAL mode writes a -shm file even to read
                err = write_failure(exc, path)
                if err is None:
                    raise
                raise err from exc
        return self._cache

    def _convert(self, cache: EmbeddingCache) -> None:
        """Vectors this model's cache kept before in float16 become stored vectors (``vector_code``) at
        once: an upgrade never embeds a vault again (the usearch file follows, as for a new model)."""
        from ..adapters.vector_code import settle

        emb = self.embedder
        source = getattr(emb, "model_fingerprint", None)
        if source and source != emb.fingerprint and cache.convert(emb.fingerprint, source, settle, emb.dim):
            print("mdmem: the vectors were converted to 4 bits a dimension (no model ran).", file=sys.stderr)

    def share_embedder(self, other: Semantic) -> None:
        """Embed with ``other``'s embedder, one call at a time (``embed.Shared``): several views of one
        vault in one process (a server's) keep one model in memory."""
        from ..adapters.embed import Shared

        shared = other.embedder if isinstance(other.embedder, Shared) else Shared(other.embedder)
        other.embedder = shared
        self.embedder = shared

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
        self._cache = None
        self._reader = None

    def _before_usearch(self) -> None:
        """onnxruntime must load before usearch in a process (``embed.load_onnxruntime_first``)."""
        if not self._native_ready:  # whatever this store's model: a process may open another vault later
            from ..adapters.embed import load_onnxruntime_first

            load_onnxruntime_first()
            self._native_ready = True

    def vector_path(self) -> Path:
        """The usearch file of the current generation and model."""
        return self.store.directory / f"vectors-{self.embedder.fingerprint}.usearch"

    # -- filling ---------------------------------------------------------------------------------

    def embed(
        self,
        progress: Callable[[int, int], None] | None = None,
        *,
        max_new: int | None = None,
        wait: bool = True,
        tracker: EmbedProgress | None = None,
        rounds: int | None = None,
        publish: bool = False,
    ) -> EmbedReport:
        """Embed chunks that have no vector (cache first), then add them to the vector index. A note's
        first chunk (its title and lead) comes before any note's second one, so every note can be found
        by meaning early. ``rounds``: add the vectors every this many chunks (the background job), so
        readers get them as they come; ``tracker``: the whole job's progress, which this call advances.
        Chunks a fetched vector pack holds are taken from it first (``vector_pack.take``); ``publish``:
        then write the local pack (``vector_pack.publish``; the foreground embed and the job do)."""
        from ..adapters.embed import release_memory
        from ..results.indexing import EmbedReport
        from .progress import EmbedProgress

        started = time.perf_counter()
        with self._busy():
            self.store.repair()
        fp = self.embedder.fingerprint
        embedded, interrupted = 0, False
        cat = self.store.catalog
        # Hashes first, the text of the chunks to embed only: the job's every round of 256 read the text
        # of every chunk still without a vector (a second a round in a big vault without vectors).
        key_of = {h: k for k, h in cat.pending_hashes(every=cat.get_meta("vector_model") != fp)}
        missing = self.cache.missing(fp, key_of)
        taken = 0
        if missing and max_new is None:
            from . import vector_pack

            taken = vector_pack.take(self, missing).vectors
            if taken:
                missing = self.cache.missing(fp, missing)
        if tracker is not None:
            tracker.expect(len(missing))  # the whole job's total: what is left now
        if max_new is not None:
            missing = missing[:max_new]
        rows = cat.chunks_by_key([key_of[h] for h in missing])
        text_of = {h: rows[key_of[h]]["embed_text"] for h in missing}
        if len(missing) > AUTO_EMBED_MAX and hasattr(self.embedder, "prepare"):
            # Worth the one-off export (torch, slow): every later run and every cold query is faster.
            self.embedder.prepare(lambda msg: print(msg, file=sys.stderr))
        counts = getattr(self.embedder, "token_counts", None)
        batch = max(1, self.settings.batch_size)
        own = tracker is None and len(missing) > AUTO_EMBED_MAX
        if own:
            tracker = EmbedProgress(self.store.state.dir, len(missing))
        size = rounds or max(1, len(missing))
        try:
            for start in range(0, len(missing), size):
                todo = missing[start : start + size]  # first chunks first (pending_hashes' order) ...
                # ... and within a round, similar lengths in a batch: padding to the longest chunk wasted much
                # of the model's work. Sorted by tokens, not characters, which pad far more (the figures:
                # docs/benchmarks.md, "Embedding").
                length = dict(zip(todo, counts([text_of[h] for h in todo]))) if counts and todo else {}
                todo.sort(key=lambda h: (length.get(h, 0), len(text_of[h])))
                for i in range(0, len(todo), batch):
                    part = todo[i : i + batch]
                    vectors = self.embedder.embed([text_of[h] for h in part])
                    self._warm = True
                    self.cache.put_many(fp, list(zip(part, vectors)))
                    embedded += len(part)
                    release_memory()
                    if tracker:
                        tracker.advance(len(part))
                    if progress:
                        progress(embedded, len(missing))
                if rounds and start + size < len(missing):
                    with self.store.writer_lock(None if wait else 0.0):
                        self._sync(only=set(todo))  # this round's vectors (reading every pending one is slow)
        except KeyboardInterrupt:
            interrupted = True  # finished batches are cached; the next run resumes
        except Exception as exc:  # the cache is written outside the writer lock, so translate here
            err = write_failure(exc, self.cache.path)
            if err is None:
                raise
            raise err from exc
        finally:
            if own and tracker:
                tracker.close()
        with self.store.writer_lock(None if wait else 0.0):
            added, removed = self._sync()
        if interrupted:
            raise KeyboardInterrupt
        if publish and (rounds is None or embedded or taken or added or removed):  # the job: only on a change
            self.publish()
        done, total = self.store.catalog.coverage()
        return EmbedReport(
            model=fp,
            embedded=embedded,
            reused=max(0, added - embedded),
            removed=removed,
            done=done,
            total=total,
            seconds=time.perf_counter() - started,
            runtime=getattr(self.embedder, "runtime", None) if embedded else None,
            threads=self.settings.thread_count if embedded else None,
            from_pack=taken,
        )

    def publish(self) -> str | None:
        """Write the local vector pack from the cache (``vector_pack.publish``); a failure is a warning."""
        from . import vector_pack

        try:
            return vector_pack.publish(self)
        except Exception as exc:
            self.store.warnings.append(f"vector pack not written: {exc}")
            return None

    def _sync(self, only: set[str] | None = None) -> tuple[int, int]:
        """Under the writer lock: bring the usearch file in line with the catalogue's chunks (``only``: add
        the vectors of these chunk hashes, nothing else)."""
        import numpy as np

        from .vectors import DamagedVectorFile, VectorIndex

        self._before_usearch()
        self.store.follow_generation()  # a rebuild may have made another generation current meanwhile
        self.store.state.tidy()  # a killed save's temp file goes here
        cat = self.store.catalog
        fp, dim = self.embedder.fingerprint, self.embedder.dim
        path = self.vector_path()
        if cat.get_meta("vector_model") != fp:
            cat.reset_vectors(fp)
            for old in path.parent.glob("vectors-*.usearch"):
                old.unlink()  # another model's vectors: never mixed, never kept
        pending = cat.pending_hashes()  # (not their text: slow in a big vault without vectors)
        if only is not None:
            pending = [(k, h) for k, h in pending if h in only]
        dead = cat.dead_keys() if only is None else []
        vecs = self.cache.get_many(fp, [h for _, h in pending], dim)
        ready = [(k, vecs[h]) for k, h in pending if h in vecs]
        if not ready and not dead:
            return 0, 0
        try:
            index = VectorIndex.open(path, dim, writable=True)
        except DamagedVectorFile as exc:
            self._drop_vector_file(str(exc))
            return self._sync()
        index.remove(dead)
        if ready:
            index.add([k for k, _ in ready], np.stack([v for _, v in ready]))
        index.save()
        cat.finish_vector_sync([k for k, _ in ready], dead)
        self._reader = None
        return len(ready), len(dead)

    def carry(self, directory: Path, catalog: Catalog) -> None:
        """Before a new generation (``directory``, ``catalog``) becomes current: its usearch file gets every
        vector the embedding cache holds for its chunks, so a rebuild never leaves readers without the
        vectors they had (a checkout round trip mid-way through the first embedding left 22k chunks
        without their vectors until the job caught up). Never fails the rebuild: its vectors then follow
        as before."""
        if not (self.store.state.dir / "embeddings.sqlite").is_file():
            return
        try:
            import numpy as np

            from .vectors import VectorIndex

            fp, dim = self.embedder.fingerprint, self.embedder.dim
            pending = catalog.pending_hashes()
            vecs = self.cache.get_many(fp, [h for _, h in pending], dim)
            catalog.reset_vectors(fp)
            ready = [(k, vecs[h]) for k, h in pending if h in vecs]
            if ready:
                self._before_usearch()
                index = VectorIndex.open(directory / f"vectors-{fp}.usearch", dim, writable=True)
                index.add([k for k, _ in ready], np.stack([v for _, v in ready]))
                index.save()
                catalog.finish_vector_sync([k for k, _ in ready], [])
        except Exception as exc:  # a model setting that cannot load, a damaged cache: vectors follow later
            print(
                f"mdmem: the new index starts without vectors ({type(exc).__name__}: {exc}); they follow.",
                file=sys.stderr,
            )

    # -- keeping up with the files --------------------------------------------------------------------

    def notes_indexed(self, *, inline: bool) -> str:
        """The indexer's "notes indexed": chunks changed under the writer lock just released (``keep_up``)."""
        return self.keep_up(inline=inline)

    def new_generation(self, directory: Path, catalog: Catalog) -> None:
        """The indexer's "new generation": a rebuilt one is about to become current (``carry``)."""
        self.carry(directory, catalog)

    @cached_property
    def auto(self) -> bool:
        """Whether writes give their chunks vectors by themselves ([embed] auto, $MDMEM_AUTO_EMBED)."""
        return auto_embed(self.store.config.extra)

    def keep_up(self, *, inline: bool = True) -> str:
        """After a write changed chunks (run when the writer lock is released) and after each pass of the
        background catch-up: vectors the embedding cache holds are added at once (a ``reindex --full``, a
        checkout away and back, a revert: no model needed); new chunks are embedded now when that is
        cheap (``inline_ok``), else one background job is asked for (``run_job``). With ``auto`` off
        only the cache is used, and only in a vault that has one. Never fails the write it follows: a
        model setting that cannot load is left to the vector reads to report, anything else becomes a
        warning. ``inline`` False (after a read caught up with an edit): nothing is loaded here, the job
        is asked for. Returns what it did, for the hooks' and the job's log."""
        if self._keeping_up:
            return "busy"  # an embed or a vector read is under way here: it sees these chunks itself
        try:
            with self._busy():
                return self._keep_up(inline)
        except MdmemError as exc:
            if isinstance(exc, LockHeld):
                return self._to_job("the writer lock was busy")
            return f"vectors not updated: {exc}"
        except Exception as exc:
            err = write_failure(exc, self.store.state.dir)
            self.store.warnings.append(f"vectors not updated: {err or exc}")
            return f"vectors not updated: {err or exc}"

    @contextmanager
    def _busy(self) -> Iterator[None]:
        """While this process embeds (or reads vectors), its own writes leave their chunks to it."""
        outer, self._keeping_up = self._keeping_up, True
        try:
            yield
        finally:
            self._keeping_up = outer

    def _keep_up(self, inline: bool) -> str:
        auto = self.auto
        if not auto and not (self.store.state.dir / "embeddings.sqlite").is_file():
            return "off"
        if auto and self.embedding() == "in the background":
            # The job embeds these too (asked for one more pass): a hook in a big vault without vectors
            # does not read every pending chunk and ask the cache about each (slow at 50k notes).
            return self._to_job("chunks changed")
        cat = self.store.catalog
        fp = self.embedder.fingerprint
        same_model = cat.get_meta("vector_model") == fp
        pending = [h for _, h in cat.pending_hashes(every=not same_model)]
        dead = cat.dead_keys()
        if not pending and same_model and not dead:
            return "complete"
        if not inline:  # a read: a BM25 answer must not load numpy, usearch or the model for this
            return self._to_job(f"{len(pending)} chunks without vectors")
        missing = self.cache.missing(fp, pending)
        if not auto and len(missing) == len(set(pending)) and not dead and same_model:
            return "nothing in the cache"  # (no vector file to open: every hook of a big vault paid for it)
        if not auto or not missing:
            with self.store.writer_lock(2.0):
                added = self._sync()[0]
            return f"{added} vectors from the cache"
        if self.inline_ok(len(missing)):
            report = self.embed(wait=False)
            return f"{report.embedded} chunks embedded, {report.reused} from the cache"
        # The job adds what the cache has too: opening the vector file here would cost a hook the imports
        # (numpy, usearch), and a removed chunk's vector finds no catalogue row, so no read shows it.
        return self._to_job(f"{len(missing)} chunks to embed")

    def _to_job(self, why: str) -> str:
        if not self.auto:
            return why
        self.store.state.request_job(why, EMBED_HOOK)
        return f"{why}; embedding in the background"

    def inline_ok(self, chunks: int) -> bool:
        """Whether embedding ``chunks`` here now fits ``inline_seconds()``: the model's load (none when
        this process has it loaded) plus its time per chunk, as the embedder states them or as measured."""
        emb = self.embedder
        load, per = COSTS.get(emb.name, DEFAULT_COST)
        loaded = getattr(emb, "loaded", None)
        warm = self._warm if loaded is None else bool(loaded)
        cost = (0.0 if warm else float(getattr(emb, "load_seconds", load))) + chunks * float(
            getattr(emb, "chunk_seconds", per)
        )
        return cost <= inline_seconds()

    def warm(self, say: Callable[[str], None] | None = None) -> str:
        """Load the embedding model and embed one query, exporting it first if this machine has no
        export yet (``say`` gets a line about that); returns the runtime that answered (e.g. onnx)."""
        embedder = self.embedder
        prepare = getattr(embedder, "prepare", None)
        if prepare is not None:  # the ONNX export, once per machine (slow); the query model loads next
            prepare(say=say or (lambda line: None))
        embedder.embed(["warm up"], query=True)
        return str(getattr(embedder, "runtime", type(embedder).__name__))

    def fill(self, max_new: int) -> float | None:
        """Move the vectors towards complete without waiting for the writer lock: with ``[embed] auto``
        the vault's own keep-up (a few chunks inline, else the background job), else embed at most
        ``max_new`` chunks here. Returns None when every chunk has a vector, else the seconds after
        which another call is worth making (``LockHeld``: another process is writing)."""
        done, total = self.coverage()
        if done >= total:
            return None
        if self.auto:  # the job (another process) embeds; its vectors reach the next read
            if self.embedding() != "in the background":
                self.keep_up()
            return 2.0
        self.embed(max_new=max_new, wait=False)
        return 0.05

    def embedding(self) -> str | None:
        """Whether the background embedding job is at work ("in the background"), was stopped before it
        finished ("interrupted"), or neither (None)."""
        if self.store.state.job_request(EMBED_HOOK) is None:
            return None
        return "in the background" if self.store.state.job_active(EMBED_HOOK) else "interrupted"

    def run_job(self) -> str:
        """The background embedding job (``reindex --git-hook embed``): under the job's running lock,
        embed every chunk without a vector, ``JOB_ROUND`` at a time (each round's vectors are cached and
        added to the index, so a kill loses at most a round's model time and ``status`` shows progress),
        until no request came during a pass. One runs at a time and at most one waits, as for the
        catch-up job (``IndexState.request_job``); the writer lock is held only to add vectors."""
        from .progress import EmbedProgress

        state = self.store.state
        embedded = 0
        with state.job_slot(kind=EMBED_HOOK), self._busy():
            tracker = None
            try:
                while True:
                    token = (state.job_request(EMBED_HOOK) or {}).get("token")
                    if tracker is None:
                        tracker = EmbedProgress(state.dir, 0, whole_job=True)
                    report = self.embed(rounds=JOB_ROUND, tracker=tracker, publish=True)
                    embedded += report.embedded
                    # One round of the pack's check at a time: new chunks are embedded between rounds.
                    if self.check_pack(rounds=1) or self.cache.unchecked(self.embedder.fingerprint, 1):
                        continue  # more to check, or a pack distrusted: its chunks are embedded here now
                    if state.finish_job(token, EMBED_HOOK):
                        return f"{embedded} chunks embedded; {report.done}/{report.total} chunks have vectors"
            finally:
                if tracker is not None:
                    tracker.close()

    def share(self, remote: str) -> str:
        """``sync``'s vector step (``vector_pack.share``): never fails the sync, says what it did."""
        from . import vector_pack

        try:
            return vector_pack.share(self, remote)
        except Exception as exc:
            return f"vector pack not shared: {type(exc).__name__}: {exc}"

    def pack_report(self) -> dict[str, Any]:
        """What the vector packs gave and their verdicts (``vector_pack.report``), for status and doctor."""
        from . import vector_pack

        return vector_pack.report(self)

    def check_pack(self, rounds: int | None = None) -> bool:
        """Check the vectors taken from a fetched pack against the local model (``vector_pack.check_rest``,
        ``rounds`` of them); True when one disagreed: they are gone from the cache and the vector file is
        rebuilt without them."""
        from . import vector_pack

        line = vector_pack.check_rest(self, rounds=rounds)
        if "disagreed" not in line:
            return False
        print(f"mdmem: {line}; embedding those chunks here.", file=sys.stderr)
        with self.store.writer_lock():
            self._reader = None
            self.vector_path().unlink(missing_ok=True)
            self.store.catalog.reset_vectors(self.embedder.fingerprint)
            self._sync()
        return True

    def _drop_vector_file(self, why: str) -> None:
        """Under the writer lock: delete a damaged usearch file; every chunk is re-added from the cache."""
        print(f"mdmem: vector index unreadable ({why}); rebuilding it from the embedding cache.", file=sys.stderr)
        self._reader = None
        self.vector_path().unlink(missing_ok=True)
        self.store.catalog.reset_vectors(self.embedder.fingerprint)

    def repair(self) -> None:
        """Before a vector read: ``IndexStore.repair``, then add cached vectors to the usearch file, embed
        a few pending chunks if that is cheap, and rebuild a damaged usearch file from the cache. The only
        step by which a vector read writes."""
        from .vectors import DamagedVectorFile

        with self._busy():
            self.store.repair()  # chunks it records are this read's to fill (_fill), not keep_up's
        try:
            self._fill()
        except LockHeld:
            pass  # another writer is busy; answer with the vectors we have
        except IndexNotWritten as exc:  # a full disk: answer with the vectors there, and say why no more
            self.store.warnings.append(f"vectors not updated: {exc}")
        try:
            self.reader()
        except DamagedVectorFile as exc:
            path = self.vector_path()
            with self.store.writer_lock():
                if path.exists() and path.stat().st_ino == exc.inode:  # not replaced meanwhile
                    self._drop_vector_file(str(exc))
                self._sync()

    def _fill(self) -> None:
        """Add cached vectors to the usearch file; embed the pending chunks too when they are few."""
        if self.auto and self.embedding() == "in the background":
            return  # it adds each round's vectors itself; no read of every pending chunk here meanwhile
        cat = self.store.catalog
        fp = self.embedder.fingerprint
        same = cat.get_meta("vector_model") == fp
        pending = [h for _, h in cat.pending_hashes(every=not same)]
        if same and not pending and not cat.dead_keys():
            return
        missing = self.cache.missing(fp, pending)
        if len(missing) <= AUTO_EMBED_MAX:
            self.embed(wait=False)
        else:
            with self.store.writer_lock(0.0):
                self._sync()
            if self.auto and self.embedding() != "in the background":
                self._to_job(f"{len(missing)} chunks to embed")  # a vault from before, or a killed job

    # -- reading ---------------------------------------------------------------------------------

    def reader(self) -> VectorIndex | None:
        """The vector index for reading, re-opened when a writer replaced the file (None: no vectors
        yet). A damaged file raises ``DamagedVectorFile``; ``repair`` rebuilds it."""
        from .vectors import DamagedVectorFile, VectorIndex

        self._before_usearch()
        path = self.vector_path()
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        stamp = (str(path), st.st_ino, st.st_mtime_ns)
        if self._reader is None or self._reader[0] != stamp:
            self._reader = None
            try:
                self._reader = (stamp, VectorIndex.open(path, self.embedder.dim))
            except DamagedVectorFile as exc:
                exc.inode = st.st_ino
                raise
        return self._reader[1]

    def _read(self) -> VectorIndex | None:
        """``reader()``, or None when the file was damaged after ``repair`` (the answer leans on BM25)."""
        from .vectors import DamagedVectorFile

        try:
            return self.reader()
        except DamagedVectorFile:
            return None

    def coverage(self, *, notice: bool = True) -> tuple[int, int]:
        """(chunks with a vector of this model, all chunks); ``notice``: see ``IndexStore.repair``."""
        self.store.repair(notice=notice)
        cat = self.store.catalog
        if cat.get_meta("vector_model") != self.embedder.fingerprint:
            return 0, cat.coverage()[1]
        return cat.coverage()

    def quick(self, max_load: float = QUICK_LOAD_S) -> bool:
        """Whether a vector read fits a per-prompt hook: this model has vectors here and loads in at most
        ``max_load`` seconds (the bundled model once exported to ONNX does; on torch it takes seconds)."""
        try:
            emb = self.embedder
        except MdmemError:
            return False  # a model setting that cannot load: the vector reads say why, not a hook
        if not getattr(emb, "loaded", False) and float(getattr(emb, "load_seconds", 0.0)) > max_load:
            return False
        return self.store.catalog.get_meta("vector_model") == emb.fingerprint and self.store.catalog.coverage()[0] > 0

    def running_embed(self) -> dict[str, Any] | None:
        """The progress of an ``embed`` running in another process, if one is (see ``EmbedProgress``)."""
        from .progress import embed_progress

        return embed_progress(self.store.state.dir)

    def note_candidates(self, qvec: np.ndarray, k: int, filters: Filters, min_similarity: float) -> list[Candidate]:
        """Notes by their best chunk's cosine similarity, filtered, above the floor."""
        from ..core.rank import Candidate

        index = self._read()
        if index is None or len(index) == 0:
            return []
        cat = self.store.catalog
        want = max(k * 4, 64)  # ~2 chunks a note: usually enough notes at once, else 4× more
        while True:
            matches = index.search(qvec, want)
            chunks = cat.chunks_by_key((key for key, sim in matches if sim >= min_similarity), text=False)
            best: dict[str, Candidate] = {}
            top: dict[str, list[float]] = {}  # a note's first three chunks by cosine: the note as a whole
            for key, sim in matches:
                ch = chunks.get(key)
                if ch is None or sim < min_similarity:
                    continue
                top.setdefault(ch["path"], []).append(sim)
                if ch["path"] not in best:
                    best[ch["path"]] = Candidate(
                        path=ch["path"],
                        chunk_key=key,
                        explain={"cosine": round(sim, 4), "chunk": ch["heading"] or "(top)"},
                    )
            for path, c in best.items():
                sims = top[path][:3]
                c.explain["cosine_top3"] = round(sum(sims) / len(sims), 4)
            out = _first_matching(list(best.values()), k, filters, cat)
            enough = len(out) >= k or want >= len(index) or (matches and matches[-1][1] < min_similarity)
            if enough:
                out = out[:k]
                texts = cat.chunks_by_key(c.chunk_key for c in out if c.chunk_key is not None)
                for c in out:
                    if c.chunk_key in texts:
                        c.chunk_text = chunk_body(texts[c.chunk_key]["embed_text"])
                return out
            want *= 4

    def note_vector(self, path: str) -> np.ndarray | None:
        """A note as one vector: the normalised mean of its chunks' cached vectors (None when the
        index has none of them yet; no model runs)."""
        import numpy as np

        done, _ = self.coverage()
        if not done:
            return None
        emb = self.embedder
        got = self.cache.get_many(emb.fingerprint, self.store.catalog.chunk_hashes(path), emb.dim)
        if not got:
            return None
        mean = np.mean(np.stack(list(got.values())), axis=0)
        norm = float(np.linalg.norm(mean))
        return mean / norm if norm else None

    def similarity(self, keys: list[int]) -> Callable[[int, int], float]:
        """Cosine between chunks by key, for the near-duplicate check."""
        import numpy as np

        index = self._read()
        if index is None or not keys:
            return lambda a, b: 0.0
        vecs = index.vectors(keys)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        vecs = vecs / np.where(norms == 0, 1, norms)
        pos = {k: i for i, k in enumerate(keys)}

        def sim(a: int, b: int) -> float:
            return float(vecs[pos[a]] @ vecs[pos[b]])

        return sim

    def reranker(self) -> Any:
        """The configured cross-encoder ([rerank] model), loaded on first use; None without one."""
        if self._reranker is None and self.query_settings.rerank_model:
            from ..adapters.embed_torch import CrossEncoderReranker

            self._reranker = CrossEncoderReranker(
                Path(self.query_settings.rerank_model).expanduser(), threads=self.settings.thread_count
            )
        return self._reranker


def inline_seconds() -> float:
    """``INLINE_SECONDS``, or $MDMEM_EMBED_INLINE (0: always in the background)."""
    try:
        return float(os.environ.get("MDMEM_EMBED_INLINE", INLINE_SECONDS))
    except ValueError:
        return INLINE_SECONDS


def _first_matching(cands: list[Candidate], k: int, filters: Filters, cat: Catalog) -> list[Candidate]:
    """The first ``k`` candidates whose catalogue row passes the filters (rows read k at a time)."""
    if filters.empty:
        return cands[:k]
    out: list[Candidate] = []
    for i in range(0, len(cands), k):
        part = cands[i : i + k]
        rows = cat.rows(c.path for c in part)
        out += [c for c in part if c.path in rows and filters.matches(rows[c.path])]
        if len(out) >= k:
            break
    return out[:k]


def chunk_body(embed_text: str) -> str:
    """A chunk's own text (its first line is the title › heading context)."""
    return embed_text.split("\n", 1)[1] if "\n" in embed_text else embed_text
