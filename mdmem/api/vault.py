"""Vault: the Python API, a thin facade over the index store (``index.store``), its vector side
(``index.semantic``) and the features (``hybrid``, ``recall``, ``connect``, ``linking``, ``lifecycle``,
``health``, ``sync``). It delegates and documents; the policy lives below it."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..adapters.config import CONFIG_FILE, load_config
from ..core.errors import VaultNotFound
from ..core.schema import FilterArgs
from ..index.state import STATE_DIR
from ..index.store import IndexStore, Progress
from .answering import answers
from .vault_graph import GraphMethods

if TYPE_CHECKING:
    from ..adapters.config import Config
    from ..core.note import NewNote, Note, NoteDates
    from ..index.semantic import Semantic
    from ..results.changes import (
        AddReport,
        AddResult,
        Change,
        Correction,
        History,
        NoteAt,
        NoteDiff,
        SweepReport,
        Written,
    )
    from ..results.indexing import EmbedReport, ReindexReport
    from ..results.notes import NoteText
    from ..results.reports import DoctorReport, VaultStatus
    from ..results.review import Dismissal, ReviewQueue, Superseded
    from ..results.search import Hits, MemoryContext, Profile
    from ..results.sync import Resolution, SyncReport
    from .reader import Ask


class Vault(GraphMethods):
    """A folder of markdown notes and its sidecar index in ``.mdmem/``.

    Reads take the filters as ``filters=FilterArgs(...)`` or as keyword arguments: ``type``, ``tag``, ``scope``,
    ``status`` (a value or a list; several tags must all be present; unscoped notes pass a scope filter),
    ``since``/``until`` (the note's date: authored, updated, created; else its last commit, else its file's
    time), ``path`` (a folder or glob), ``include`` (forgotten, archived, snoozed, expired) and ``as_of``
    (judge snoozes and validity then). Writes take ``commit`` (None: as ``mdmem.toml`` says)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = IndexStore(root, load_config(root))
        self.answering = 0  # facade calls under way (``answers``: the outermost collects the warnings)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Vault:
        """Open the vault whose root is ``path`` (any folder of notes can be a vault)."""
        return cls(cls.root_at(path))

    @classmethod
    def discover(cls, start: str | os.PathLike[str] | None = None) -> Vault:
        """The vault containing ``start`` (default: the current directory), found by walking up."""
        return cls(cls.find_root(start))

    @staticmethod
    def root_at(path: str | os.PathLike[str]) -> Path:
        """The root ``open(path)`` opens, without reading the vault's settings."""
        root = Path(path).expanduser()
        if not root.is_dir():
            raise VaultNotFound(f'No folder at {root}. Create one with "mdmem init {root}".')
        return root.resolve()

    @staticmethod
    def find_root(start: str | os.PathLike[str] | None = None) -> Path:
        """The root ``discover(start)`` opens, without reading the vault's settings."""
        here = Path(start or os.getcwd()).expanduser().resolve()
        for p in (here, *here.parents):
            if (p / CONFIG_FILE).is_file() or (p / STATE_DIR).is_dir():
                return p
        raise VaultNotFound(
            f'No mdmem vault at or above {here}. Run "mdmem init PATH" to make one, '
            "or pass --vault PATH (or set MDMEM_VAULT)."
        )

    def close(self) -> None:
        """Release index handles (the vault can be used again afterwards)."""
        self.store.semantic.close()
        self.store.close()

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def config(self) -> Config:
        """The vault's settings (``mdmem.toml``)."""
        return self.store.config

    @property
    def semantic(self) -> Semantic:
        """The vector side (embedder, cache, usearch); the model loads on first use."""
        return self.store.semantic

    # -- the index ---------------------------------------------------------------------------------

    @answers
    def reindex(
        self,
        full: bool = False,
        *,
        progress: Progress | None = None,
        wait: bool = True,
        timeout: float | None = None,
        only: list[str] | None = None,
        head: str | None = None,
    ) -> ReindexReport:
        """Bring the index up to date with the files.

        Args:
            full: rebuild from scratch instead of comparing content hashes.
            progress: called with (done, total) while notes are parsed.
            wait: wait for another writer (up to ``timeout`` or the configured lock timeout).
            only: vault-relative paths to refresh instead of scanning the whole vault.
            head: with ``only``, the commit those paths bring the index up to.
        """
        return self.store.reindex(full, progress=progress, wait=wait, timeout=timeout, only=only, head=head)

    def rebuild_reason(self) -> str | None:
        """Why the index must be rebuilt from scratch (none yet, another version, copied), or None."""
        return self.store.rebuild_reason()

    def watch_files(self) -> bool:
        """For a process that stays up (serve, MCP): learn which notes changed from the kernel's events
        (inotify; no CPU while idle) instead of comparing every file before a read. False where the
        watch cannot be set up (not Linux, no watches left): reads compare the files then."""
        return self.store.indexer.watch_files()

    def after_git(self, hook: str, *, timeout: float = 2.0, whole_tree: bool = False) -> ReindexReport | str:
        """After git: index a small change now, else hand it to the background job ("catch-up": be that job)."""
        return self.store.indexer.after_git(hook, timeout=timeout, whole_tree=whole_tree)

    def mark_stale(self) -> None:
        """Note that files changed while the index could not be updated (the next command catches up)."""
        self.store.state.mark_stale()

    def writer_lock(self, timeout: float | None = None) -> AbstractContextManager[None]:
        """Hold the one-writer lock on ``.mdmem/`` (wait up to ``timeout`` s, else the configured time)."""
        return self.store.writer_lock(timeout)

    @answers
    def embed(self, progress: Progress | None = None, *, max_new: int | None = None) -> EmbedReport:
        """Give every chunk a vector: cached ones are reused, the rest run through the model.

        Args:
            progress: called with (embedded, to embed).
            max_new: embed at most this many new chunks (the rest stay for later).
        Interrupting (Ctrl-C) keeps what was embedded; the next run resumes. Fetched vector packs first."""
        return self.semantic.embed(progress, max_new=max_new, publish=max_new is None)

    def coverage(self) -> tuple[int, int]:
        """(chunks with a vector, chunks): how complete the vectors are."""
        return self.semantic.coverage()

    def run_embedding_job(self) -> str:
        """Be the background embedding job: embed what lacks vectors, in rounds (what ``keep_up`` asked for)."""
        return self.semantic.run_job()

    def warm_model(self, say: Callable[[str], None] | None = None) -> str:
        """Load the embedding model and embed a query (``Semantic.warm``); returns the runtime that answered."""
        return self.semantic.warm(say)

    def fill_vectors(self, max_new: int) -> float | None:
        """Move the vectors towards complete (``Semantic.fill``): None when complete, else seconds to wait."""
        return self.semantic.fill(max_new)

    @answers
    def status(self) -> VaultStatus:
        """Counts, index freshness, vector coverage, git state and a running server."""
        from ..features.health import status
        from ..index.state import server_info

        return status(self.store, self.semantic, server_info(self.root))

    @answers
    def doctor(self) -> DoctorReport:
        """Every problem with the vault: broken notes (file, field, fix) and vault setup."""
        from ..features.health import doctor

        return doctor(self.store)

    # -- sharing through git -----------------------------------------------------------------------

    @answers
    def sync(self, *, say: Callable[[str], None] | None = None, progress: bool = False) -> SyncReport:
        """Commit hand-edited notes, fetch, merge the upstream branch, push, then index what changed.
        Both sides' edits of a note are merged, or both texts kept (a conflict copy beside the note).
        ``say`` gets a line per step (commit, fetch, merge, push); ``progress``: git's progress on stderr."""
        from ..features.sync import sync

        return sync(self.store, say=say, progress=progress)

    @answers
    def resolve_conflict(self, ref: str, side: str, *, commit: bool | None = None) -> Resolution:
        """Settle a conflict ``sync`` kept: ``side`` ours, theirs or both (both texts in the note)."""
        from ..features.sync import resolve

        return resolve(self.store, ref, side, commit=commit)

    # -- reading ---------------------------------------------------------------------------------

    def now(self, as_of: Any = None) -> float:
        """The time retrieval judges visibility and decay by: ``as_of``, else $MDMEM_NOW, else now."""
        return self.store.now(as_of)

    def ask(self, question: Ask) -> Hits:
        """The hits for a retrieval question (``Ask``): its mode's method, asked with its arguments."""
        return question.of_vault(self)

    @answers
    def search(
        self, text: str, limit: int = 10, *, filters: FilterArgs | None = None, explain: bool = False, **given: Any
    ) -> Hits:
        """BM25 search for words, names and identifiers in any language; no model is loaded.
        ``explain``: each hit's BM25 score and the share of the query it covers."""
        from ..features.hybrid import search

        return search(self.store, text, limit, self.store.filters(filters, **given), explain=explain)

    @answers
    def vsearch(
        self, text: str, limit: int = 10, *, filters: FilterArgs | None = None, explain: bool = False, **given: Any
    ) -> Hits:
        """Vector search: the notes closest in meaning to ``text``, above a similarity floor (loads the model)."""
        from ..features.hybrid import vsearch

        return vsearch(self.store, self.semantic, text, limit, self.store.filters(filters, **given), explain=explain)

    @answers
    def query(
        self,
        text: str,
        limit: int = 10,
        *,
        filters: FilterArgs | None = None,
        explain: bool = False,
        vectors: bool = True,
        priors: bool = True,
        **given: Any,
    ) -> Hits:
        """Hybrid search: BM25 and vectors fused by weighted RRF, optional rerank, near-duplicates held back.

        Args:
            explain: attach each score's parts to ``Hit.explain``.
            vectors: use the vector leg (False: BM25 only, no model loaded).
            priors: add the salience/pin/recency/confidence priors (False: relevance alone).
        """
        from ..features.hybrid import query

        return query(
            self.store,
            self.semantic if vectors else None,
            text,
            limit,
            self.store.filters(filters, **given),
            explain=explain,
            priors=priors,
        )

    @answers
    def recall(
        self,
        text: str,
        limit: int = 10,
        *,
        filters: FilterArgs | None = None,
        explain: bool = False,
        vectors: bool = True,
        **given: Any,
    ) -> Hits:
        """Intent-routed retrieval, the one agents should call first.

        The query is classified (why / when / who / recent / general) and routed: causal links
        for why, a time window for when, entity matches for who, recency-weighted priors for
        recent, plain hybrid otherwise. The answer's ``info`` holds the intent and the route.
        """
        from ..features.recall import recall

        f = self.store.filters(filters, **given)
        return recall(self.store, self.semantic if vectors else None, text, limit, f, explain=explain)

    @answers
    def context(
        self,
        prompt: str,
        budget: int = 600,
        *,
        scope: list[str] | None = None,
        vectors: bool | None = True,
        as_of: str | None = None,
        explain: bool = False,
    ) -> MemoryContext:
        """Memory for a prompt within ``budget`` tokens: pinned notes first, then the most relevant.
        ``vectors=None``: the vector leg only when it is quick here (``Semantic.quick``), as a hook wants.
        ``explain``: the relevant items keep their ranking's signals (for a merge across vaults)."""
        from ..features.recall import build_context

        use = self.semantic.quick() if vectors is None else vectors
        return build_context(
            self.store, self.semantic if use else None, prompt, budget=budget, scope=scope, as_of=as_of, explain=explain
        )

    @answers
    def list_notes(self, limit: int = 20, *, filters: FilterArgs | None = None, **given: Any) -> Hits:
        """The notes the filters alone select (no query), newest first, each with its key line."""
        from ..features.listing import list_notes

        a = FilterArgs.of(filters, **given)
        return list_notes(self.store, limit, self.store.filters(a), a.given())

    def resolve(self, ref: str) -> str:
        """The path of the note ``ref`` names: id, path (with or without .md), stem, title or alias."""
        return self.store.resolve(ref)

    def get(self, ref: str) -> Note:
        """The note ``ref`` names, parsed fresh from its file."""
        return self.store.get(ref)

    @answers
    def read(self, ref: str, max_chars: int | None = None) -> NoteText:
        """The note ``ref`` names: its fields (dated as the index dates it) and its file's text, cut
        after ``max_chars`` characters if given (``NoteText.truncated`` says so)."""
        from ..results.notes import NoteText, note_doc

        n = self.store.get(ref)
        text = self.text(n.path)
        doc = note_doc(n, self.store.dates(n))
        return NoteText(doc, text) if max_chars is None else NoteText.cut(doc, text, max_chars)

    def body(self, path: str) -> str:
        """The body of the note at ``path`` (its file's text after the frontmatter)."""
        return self.store.files.body(path)

    def text(self, path: str) -> str:
        """The whole text of the file at ``path`` (frontmatter and body), as the vault holds it now."""
        return self.store.files.safe_path(path).read_text(encoding="utf-8", errors="replace")

    def notes(self) -> list[str]:
        """The vault-relative paths of every note file (what a reindex reads)."""
        return sorted(self.store.files.scan())

    def exists(self, path: str) -> bool:
        """Whether a file is at ``path`` inside the vault (False for a path that leaves it)."""
        from ..core.errors import MdmemError

        try:
            return self.store.files.safe_path(path).exists()
        except MdmemError:
            return False

    def files_in(self, folder: str, pattern: str = "*") -> list[str]:
        """The names of the files in ``folder`` (vault-relative) that match ``pattern``, sorted; [] if none."""
        path = self.store.files.safe_path(folder)
        return sorted(p.name for p in path.glob(pattern) if p.is_file()) if path.is_dir() else []

    def dates(self, note: Note) -> NoteDates:
        """A note's created/updated as the index dates it, and their source: frontmatter, git or mtime."""
        return self.store.dates(note)

    @answers
    def history(self, ref: str, limit: int | None = 10, *, diff: bool = False) -> History:
        """The version chain through a note (oldest first) and each version's git log: the newest
        ``limit`` commits of each (None: all); ``Version.commits`` counts them all. ``diff``: each
        commit's change to the note in ``LogEntry.diff``."""
        from ..features.revisions import history

        return history(self.store, ref, limit, diff=diff)

    @answers
    def diff(self, ref: str, rev: str | None = None) -> NoteDiff:
        """What changed in a note since revision ``rev`` (a commit, tag, HEAD~N) to its file now; by
        default since its previous version. Renames are followed. Needs a git vault."""
        from ..features.revisions import diff

        return diff(self.store, ref, rev)

    @answers
    def show(self, ref: str, rev: str) -> NoteAt:
        """What a note said in revision ``rev`` (found under the name it had then)."""
        from ..features.revisions import show

        return show(self.store, ref, rev)

    @answers
    def profile(self, budget: int = 600, *, scope: str | None = None) -> Profile:
        """What an agent starting cold should know, within ``budget`` tokens: standing facts (pinned,
        salient preferences and facts, identity and conventions), then recent context (the latest
        handoffs, active decisions, open problems; ``scope``'s first). The same for the same vault."""
        from ..features.profile import profile

        return profile(self.store, budget, scope=scope)

    def handoffs(self, scope: str | None = None, limit: int = 3) -> list[dict[str, Any]]:
        """The newest visible handoff notes (catalogue rows), those of ``scope`` first."""
        from ..features.health import latest_handoffs

        return latest_handoffs(self.store, scope, limit)

    # -- writing ---------------------------------------------------------------------------------

    @answers
    def add(self, title: str, body: str = "", **fields: Any) -> AddResult:
        """Write a new note atomically, index it and (in a git vault) commit it.

        Args:
            fields: type, tags, scope, salience, confidence, pinned, entities, aliases, refs; ``path``
                (vault-relative file to create; it must not exist), ``commit``, ``extra``
                (more frontmatter keys).
        """
        from ..features.lifecycle import add

        return add(self.store, title, body, **fields)

    @answers
    def save(self, title: str, body: str, *, force: bool = False, dedupe: bool = True, **fields: Any) -> AddReport:
        """``add`` after the duplicate check: written (ADD) with the links it may want, or not written
        when a near duplicate (UPDATE, unless ``force``) or the same text (NOOP) is already there."""
        from ..features.linking import save

        return save(self.store, self.semantic, title, body, force=force, dedupe=dedupe, **fields)

    @answers
    def add_many(
        self,
        notes: list[NewNote],
        *,
        dry_run: bool = False,
        commit: bool | None = None,
        message: Callable[[int, int], str],
        files: dict[str, bytes] | None = None,
    ) -> Written:
        """Write many notes (and attachments, ``files``) in one lock, index and commit (see ``lifecycle.add_many``)."""
        from ..features.lifecycle import add_many
        from ..results.changes import Written

        return Written(*add_many(self.store, notes, dry_run=dry_run, commit=commit, message=message, files=files))

    @answers
    def commit(self, paths: list[str], message: str) -> Written:
        """Commit files mdmem has just written and indexed (``commit`` None outside git or when git refused)."""
        from ..results.changes import Written

        return Written(list(paths), [], 0, self.store.commit(paths, message))

    @answers
    def pin(self, ref: str, pinned: bool = True, *, commit: bool | None = None) -> Change:
        """Pin (or unpin) a note: pinned notes come first in context and get a prior boost."""
        from ..features.lifecycle import update_note

        return update_note(
            self.store, ref, {"pinned": True if pinned else None}, "pin" if pinned else "unpin", commit=commit
        )

    @answers
    def snooze(self, ref: str, until: str, *, commit: bool | None = None) -> Change:
        """Hide a note from retrieval until a date (``until``: YYYY-MM-DD)."""
        from ..features.lifecycle import update_note

        return update_note(self.store, ref, {"snoozed_until": until}, f"snooze until {until}", commit=commit)

    @answers
    def forget(self, ref: str, *, commit: bool | None = None) -> Change:
        """Mark a note forgotten: kept on disk and in git, hidden from retrieval."""
        from ..features.lifecycle import update_note

        return update_note(self.store, ref, {"status": "forgotten"}, "forget", commit=commit)

    @answers
    def restore(self, ref: str, *, commit: bool | None = None) -> Change:
        """Undo forget/archive/snooze: the note is active and visible again."""
        from ..features.lifecycle import update_note

        return update_note(self.store, ref, {"status": "active", "snoozed_until": None}, "restore", commit=commit)

    @answers
    def set(self, ref: str, values: dict[str, Any], *, commit: bool | None = None) -> Change:
        """Set frontmatter keys of a note (``schema.SETTABLE``: salience, confidence, pinned, type, tags,
        scope, valid_from, valid_until); a value of None or "" removes the key. Values may be text, as
        typed on a command line; a bad one raises ``BadValue`` and nothing is written. One commit."""
        from ..features.lifecycle import set_keys

        return set_keys(self.store, ref, values, commit=commit)

    @answers
    def correct(self, ref: str, body: str, *, title: str | None = None, commit: bool | None = None) -> Correction:
        """A successor note that supersedes ``ref``: the new note, and the change to the old one."""
        from ..features.lifecycle import correct
        from ..results.changes import Correction

        return Correction(*correct(self.store, ref, body, title=title, commit=commit))

    @answers
    def review(self, limit: int = 20, *, scan: int = 200) -> ReviewQueue:
        """What needs judgement (contradictions, duplicates, …; ``features.review``), those dismissed left out."""
        from ..features.review import review

        return review(self.store, self.semantic, limit, scan=scan)

    def review_count(self) -> tuple[int, bool] | None:
        """The review queue's size as the last whole review counted it, and whether it still holds (the
        index, the dismissals and the day unchanged since); None if never counted. Opens no index."""
        from ..features.review import cached_count

        return cached_count(self.store)

    @answers
    def dismiss(self, keys: list[str], *, commit: bool | None = None) -> Dismissal:
        """Remember review items as dismissed (in the vault's committed ``.mdmem-review.yaml``)."""
        from ..features.review import dismiss

        return dismiss(self.store, keys, commit=commit)

    @answers
    def supersede(self, new: str, olds: list[str], *, commit: bool | None = None) -> Superseded:
        """``new`` replaces ``olds``: they are archived, pointing to it; their texts stay. One commit."""
        from ..features.review import supersede

        return supersede(self.store, new, olds, commit=commit)

    @answers
    def replace_body(self, ref: str, body: str, action: str, **options: Any) -> Change:
        """Replace a note's body, keeping its frontmatter (see ``lifecycle.replace_body``)."""
        from ..features.lifecycle import replace_body

        return replace_body(self.store, ref, body, action, **options)

    @answers
    def sweep(
        self, *, min_age_days: float = 180.0, max_salience: float = 0.3, apply: bool = False, commit: bool | None = None
    ) -> SweepReport:
        """Active, unpinned notes of a decaying type older than ``min_age_days`` and less salient than
        ``max_salience``; with ``apply``, archive them (nothing is deleted)."""
        from ..features.lifecycle import sweep
        from ..results.changes import SweepRule

        return sweep(
            self.store,
            SweepRule(min_age_days=min_age_days, max_salience=max_salience),
            apply=apply,
            commit=commit,
            now=self.now(),
        )
