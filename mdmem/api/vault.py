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
from ..index.state import STATE_DIR
from ..index.store import IndexStore, Progress

if TYPE_CHECKING:
    from .. import results as r
    from ..core.graph import Graph
    from ..core.note import NewNote, Note, NoteDates
    from ..index.semantic import Semantic


class Vault:
    """A folder of markdown notes and its sidecar index in ``.mdmem/``.

    Reads take the filters (``schema.FILTER_ARGS``) as keyword arguments: ``type``, ``tag``, ``scope``,
    ``status`` (a value or a list; several tags must all be present; unscoped notes pass a scope filter),
    ``since``/``until`` (the note's date: authored, updated, created; else its last commit, else its file's
    time), ``path`` (a folder or glob), ``include`` (forgotten, archived, snoozed, expired) and ``as_of``
    (judge snoozes and validity then). Writes take ``commit`` (None: as ``mdmem.toml`` says)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.config = load_config(root)
        self.store = IndexStore(root, self.config)
        self.files = self.store.files  # the note files: scan, read_note, safe_path, body
        self.warnings = self.store.warnings  # what went wrong after the work was done (a commit git refused)
        self._semantic: Semantic | None = None
        self.store.state.after_write = lambda inline: self.semantic.keep_up(inline=inline)  # vectors follow writes
        self.last_info: dict[str, Any] = {}  # what the last vsearch/query/recall did (coverage, stages)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Vault:
        """Open the vault whose root is ``path`` (any folder of notes can be a vault)."""
        root = Path(path).expanduser()
        if not root.is_dir():
            raise VaultNotFound(f"No folder at {root}. Create one with \"mdmem init {root}\".")
        return cls(root.resolve())

    @classmethod
    def discover(cls, start: str | os.PathLike[str] | None = None) -> Vault:
        """The vault containing ``start`` (default: the current directory), found by walking up."""
        here = Path(start or os.getcwd()).expanduser().resolve()
        for p in (here, *here.parents):
            if (p / CONFIG_FILE).is_file() or (p / STATE_DIR).is_dir():
                return cls(p)
        raise VaultNotFound(
            f"No mdmem vault at or above {here}. Run \"mdmem init PATH\" to make one, "
            "or pass --vault PATH (or set MDMEM_VAULT)."
        )

    def close(self) -> None:
        """Release index handles (the vault can be used again afterwards)."""
        if self._semantic is not None:
            self._semantic.close()
        self.store.close()

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def semantic(self) -> Semantic:
        """The vector side (embedder, cache, usearch); the model loads on first use."""
        if self._semantic is None:
            from ..index.semantic import Semantic

            self._semantic = Semantic(self.store)
        return self._semantic

    @property
    def index_warning(self) -> str | None:
        """Why the last reads answered from an index that could not be refreshed (e.g. disk full)."""
        return self.store.index_warning

    @index_warning.setter
    def index_warning(self, value: str | None) -> None:
        self.store.index_warning = value

    # -- the index ---------------------------------------------------------------------------------

    def reindex(self, full: bool = False, *, progress: Progress | None = None, wait: bool = True,
                timeout: float | None = None, only: list[str] | None = None,
                head: str | None = None) -> r.ReindexReport:
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

    def after_git(self, hook: str, *, timeout: float = 2.0, whole_tree: bool = False) -> r.ReindexReport | str:
        """After git: index a small change now, else hand it to the background job ("catch-up": be that job)."""
        return self.store.after_git(hook, timeout=timeout, whole_tree=whole_tree, after_pass=self.semantic.keep_up)

    def mark_stale(self) -> None:
        """Note that files changed while the index could not be updated (the next command catches up)."""
        self.store.state.mark_stale()

    def writer_lock(self, timeout: float | None = None) -> AbstractContextManager[None]:
        """Hold the one-writer lock on ``.mdmem/`` (wait up to ``timeout`` s, else the configured time)."""
        return self.store.writer_lock(timeout)

    def embed(self, progress: Progress | None = None, *, max_new: int | None = None) -> r.EmbedReport:
        """Give every chunk a vector: cached ones are reused, the rest run through the model.

        Args:
            progress: called with (embedded, to embed).
            max_new: embed at most this many new chunks (the rest stay for later).
        Interrupting (Ctrl-C) keeps what was embedded; the next run resumes."""
        return self.semantic.embed(progress, max_new=max_new)

    def status(self) -> r.VaultStatus:
        """Counts, index freshness, vector coverage, git state and a running server."""
        from ..features.health import status
        from ..index.state import server_info

        return status(self.store, self.semantic, server_info(self.root))

    def doctor(self) -> r.DoctorReport:
        """Every problem with the vault: broken notes (file, field, fix) and vault setup."""
        from ..features.health import doctor

        return doctor(self.store)

    # -- sharing through git (issue 16) ------------------------------------------------------------

    def sync(self, *, say: Callable[[str], None] | None = None, progress: bool = False) -> r.SyncReport:
        """Commit hand-edited notes, fetch, merge the upstream branch, push, then index what changed.
        Both sides' edits of a note are merged, or both texts kept (a conflict copy beside the note).

        Args:
            say: called with one line per step (commit, fetch, merge, push).
            progress: let git print its network progress on stderr.
        """
        from ..features.sync import sync

        return sync(self.store, say=say, progress=progress)

    def resolve_conflict(self, ref: str, side: str, *, commit: bool | None = None) -> r.Resolution:
        """Settle a conflict ``sync`` kept: ``side`` ours, theirs or both (both texts in the note)."""
        from ..features.sync import resolve

        return resolve(self.store, ref, side, commit=commit)

    # -- reading ---------------------------------------------------------------------------------

    def now(self, as_of: Any = None) -> float:
        """The time retrieval judges visibility and decay by: ``as_of``, else $MDMEM_NOW, else now."""
        return self.store.now(as_of)

    def search(self, text: str, limit: int = 10, *, explain: bool = False, **filters: Any) -> r.Hits:
        """BM25 search for words, names and identifiers in any language; no model is loaded.
        ``explain``: each hit's BM25 score and the share of the query it covers."""
        from ..features.hybrid import search

        return search(self.store, text, limit, self.store.filters(**filters), explain=explain)

    def vsearch(self, text: str, limit: int = 10, *, explain: bool = False, **filters: Any) -> r.Hits:
        """Vector search: the notes closest in meaning to ``text``, above a similarity floor (loads the model)."""
        from ..features.hybrid import vsearch

        hits = vsearch(self.semantic, text, limit, self.store.filters(**filters), explain=explain)
        self.last_info = hits.info
        return hits

    def query(self, text: str, limit: int = 10, *, explain: bool = False, vectors: bool = True,
              priors: bool = True, **filters: Any) -> r.Hits:
        """Hybrid search: BM25 and vectors fused by weighted RRF, optional rerank, near-duplicates held back.

        Args:
            explain: attach each score's parts to ``Hit.explain``.
            vectors: use the vector leg (False: BM25 only, no model loaded).
            priors: add the salience/pin/recency/confidence priors (False: relevance alone).
        """
        from ..features.hybrid import query

        hits = query(self.store, self.semantic if vectors else None, text, limit, self.store.filters(**filters),
                     explain=explain, priors=priors)
        self.last_info = hits.info
        return hits

    def recall(self, text: str, limit: int = 10, *, explain: bool = False, vectors: bool = True,
               **filters: Any) -> r.Hits:
        """Intent-routed retrieval, the one agents should call first.

        The query is classified (why / when / who / recent / general) and routed: causal links
        for why, a time window for when, entity matches for who, recency-weighted priors for
        recent, plain hybrid otherwise. ``last_info`` holds the intent and the route.
        """
        from ..features.recall import recall

        hits = recall(self.store, self.semantic if vectors else None, text, limit, self.store.filters(**filters),
                      explain=explain)
        self.last_info = hits.info
        return hits

    def context(self, prompt: str, budget: int = 600, *, scope: list[str] | None = None,
                vectors: bool | None = True, as_of: str | None = None, explain: bool = False) -> r.MemoryContext:
        """Memory for a prompt within ``budget`` tokens: pinned notes first, then the most relevant.
        ``vectors=None``: the vector leg only when it is quick here (``Semantic.quick``), as a hook wants.
        ``explain``: the relevant items keep their ranking's signals (for a merge across vaults)."""
        from ..features.recall import build_context

        use = self.semantic.quick() if vectors is None else vectors
        return build_context(self.store, self.semantic if use else None, prompt, budget=budget,
                             scope=scope, as_of=as_of, explain=explain)

    def resolve(self, ref: str) -> str:
        """The path of the note ``ref`` names: id, path (with or without .md), stem, title or alias."""
        return self.store.resolve(ref)

    def get(self, ref: str) -> Note:
        """The note ``ref`` names, parsed fresh from its file."""
        return self.store.get(ref)

    def dates(self, note: Note) -> NoteDates:
        """A note's created/updated as the index dates it, and their source: frontmatter, git or mtime."""
        return self.store.dates(note)

    def history(self, ref: str, limit: int | None = 10, *, diff: bool = False) -> r.History:
        """The version chain through a note (oldest first) and each version's git log: the newest
        ``limit`` commits of each (None: all); ``Version.commits`` counts them all. ``diff``: each
        commit's change to the note in ``LogEntry.diff``."""
        from ..features.revisions import history

        return history(self.store, ref, limit, diff=diff)

    def diff(self, ref: str, rev: str | None = None) -> r.NoteDiff:
        """What changed in a note since revision ``rev`` (a commit, tag, HEAD~N) to its file now; by
        default since its previous version. Renames are followed. Needs a git vault."""
        from ..features.revisions import diff

        return diff(self.store, ref, rev)

    def show(self, ref: str, rev: str) -> r.NoteAt:
        """What a note said in revision ``rev`` (found under the name it had then)."""
        from ..features.revisions import show

        return show(self.store, ref, rev)

    def profile(self, budget: int = 600, *, scope: str | None = None) -> r.Profile:
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

    def add(self, title: str, body: str = "", **fields: Any) -> r.AddResult:
        """Write a new note atomically, index it and (in a git vault) commit it.

        Args:
            fields: type, tags, scope, salience, confidence, pinned, entities, aliases, refs; ``path``
                (vault-relative file to create; it must not exist), ``commit``, ``extra``
                (more frontmatter keys).
        """
        from ..features.lifecycle import add

        return add(self.store, title, body, **fields)

    def save(self, title: str, body: str, *, force: bool = False, dedupe: bool = True, **fields: Any) -> r.AddReport:
        """``add`` after the duplicate check: written (ADD) with the links it may want, or not written
        when a near duplicate (UPDATE, unless ``force``) or the same text (NOOP) is already there."""
        from ..features.linking import save

        return save(self.store, self.semantic, title, body, force=force, dedupe=dedupe, **fields)

    def add_many(self, notes: list[NewNote], *, dry_run: bool = False, commit: bool | None = None,
                 message: Callable[[int, int], str], files: dict[str, bytes] | None = None,
                 ) -> tuple[list[str], list[str], int, str | None]:
        """Write many notes (and attachments, ``files``) in one lock, index and commit (see ``lifecycle.add_many``)."""
        from ..features.lifecycle import add_many

        return add_many(self.store, notes, dry_run=dry_run, commit=commit, message=message, files=files)

    def commit(self, paths: list[str], message: str) -> str | None:
        """Commit files mdmem has just written and indexed (None outside git or when git refused)."""
        return self.store.commit(paths, message)

    def pin(self, ref: str, pinned: bool = True, *, commit: bool | None = None) -> r.Change:
        """Pin (or unpin) a note: pinned notes come first in context and get a prior boost."""
        from ..features.lifecycle import update_note

        return update_note(self.store, ref, {"pinned": True if pinned else None}, "pin" if pinned else "unpin",
                           commit=commit)

    def snooze(self, ref: str, until: str, *, commit: bool | None = None) -> r.Change:
        """Hide a note from retrieval until a date (``until``: YYYY-MM-DD)."""
        from ..features.lifecycle import update_note

        return update_note(self.store, ref, {"snoozed_until": until}, f"snooze until {until}", commit=commit)

    def forget(self, ref: str, *, commit: bool | None = None) -> r.Change:
        """Mark a note forgotten: kept on disk and in git, hidden from retrieval."""
        from ..features.lifecycle import update_note

        return update_note(self.store, ref, {"status": "forgotten"}, "forget", commit=commit)

    def restore(self, ref: str, *, commit: bool | None = None) -> r.Change:
        """Undo forget/archive/snooze: the note is active and visible again."""
        from ..features.lifecycle import update_note

        return update_note(self.store, ref, {"status": "active", "snoozed_until": None}, "restore", commit=commit)

    def set(self, ref: str, values: dict[str, Any], *, commit: bool | None = None) -> r.Change:
        """Set frontmatter keys of a note (``schema.SETTABLE``: salience, confidence, pinned, type, tags,
        scope, valid_from, valid_until); a value of None or "" removes the key. Values may be text, as
        typed on a command line; a bad one raises ``BadValue`` and nothing is written. One commit."""
        from ..features.lifecycle import set_keys

        return set_keys(self.store, ref, values, commit=commit)

    def correct(self, ref: str, body: str, *, title: str | None = None,
                commit: bool | None = None) -> tuple[r.AddResult, r.Change]:
        """A successor note that supersedes ``ref``: (the new note, the change to the old one)."""
        from ..features.lifecycle import correct

        return correct(self.store, ref, body, title=title, commit=commit)

    def replace_body(self, ref: str, body: str, action: str, **options: Any) -> r.Change:
        """Replace a note's body, keeping its frontmatter (see ``lifecycle.replace_body``)."""
        from ..features.lifecycle import replace_body

        return replace_body(self.store, ref, body, action, **options)

    def sweep(self, *, min_age_days: float = 180.0, max_salience: float = 0.3, apply: bool = False,
              commit: bool | None = None) -> r.SweepReport:
        """Active, unpinned notes of a decaying type older than ``min_age_days`` and less salient than
        ``max_salience``; with ``apply``, archive them (nothing is deleted)."""
        from ..features.lifecycle import sweep
        from ..results import SweepRule

        return sweep(self.store, SweepRule(min_age_days=min_age_days, max_salience=max_salience), apply=apply,
                     commit=commit, now=self.now())

    # -- the graph -------------------------------------------------------------------------------

    def graph(self) -> Graph:
        """The note graph (typed edges, entity nodes, adjacency both ways), cached until the index changes."""
        from ..features.graph_view import load_graph

        return load_graph(self.store)

    def links(self, ref: str) -> r.LinksAnswer:
        """Edges out of a note: typed frontmatter links, body mentions, supersedes, entities."""
        from ..features.connect import links

        return links(self.store, ref)

    def backlinks(self, ref: str) -> r.BacklinksAnswer:
        """Edges into a note (or an entity) from other notes."""
        from ..features.connect import backlinks

        return backlinks(self.store, ref)

    def neighbors(self, ref: str, depth: int = 1, *, types: list[str] | None = None,
                  direction: str = "both", limit: int | None = None) -> r.NeighborsAnswer:
        """Notes and entities within ``depth`` hops (only along ``types``; "out", "in" or "both")."""
        from ..features.connect import neighbors

        return neighbors(self.store, ref, depth, types=types, direction=direction, limit=limit)

    def shortest_path(self, a: str, b: str, *, types: list[str] | None = None,
                      max_depth: int | None = None) -> r.PathAnswer:
        """The fewest hops between two notes, in either edge direction (``found`` False if none)."""
        from ..features.connect import shortest_path

        return shortest_path(self.store, a, b, types=types, max_depth=max_depth)

    def why(self, text: str, limit: int = 10, *, depth: int = 3, vectors: bool | None = None,
            seeds: list[r.Hit] | None = None, **filters: Any) -> r.WhyAnswer:
        """Causal answer: the best matches for ``text`` with their causes and effects.

        Args:
            depth: causal hops to follow from each match, each way.
            vectors: True: hybrid matches; False: BM25 only; None: BM25, hybrid only if BM25 finds
                nothing and the vault has vectors.
            seeds: matches found elsewhere (e.g. by a warm server) instead of running a query.
        """
        from ..features.connect import why

        sem = None if vectors is False else self.semantic  # vectors=False: no model code loads
        return why(self.store, sem, text, limit, depth=depth, vectors=vectors, seeds=seeds, filters=filters)

    def timeline(self, ref: str, window: int = 5, *, all_notes: bool = False, vectors: bool | None = None,
                 **filters: Any) -> r.TimelineAnswer:
        """The ``window`` notes before and after a note (or a query's best match) in time, among its
        related notes (``all_notes``: among all)."""
        from ..features.connect import timeline

        sem = None if vectors is False else self.semantic
        return timeline(self.store, sem, ref, window, all_notes=all_notes, vectors=vectors, filters=filters)

    def entity(self, name: str, **filters: Any) -> r.EntityAnswer:
        """Everything about an entity and its aliases: its note, notes about it, links, mentions."""
        from ..features.connect import entity

        return entity(self.store, name, filters=filters)

    def refs(self, ref: str) -> r.RefsAnswer:
        """A note's external references (``refs:`` and the body's URLs and e-mail addresses): kind,
        canonical value, as written, frontmatter or body, and the person an identity names."""
        from ..features.connect import refs

        return refs(self.store, ref)

    def cites(self, ref: str, **filters: Any) -> r.CitesAnswer:
        """The notes citing a URL, e-mail address, ticket, DOI or path, given in any written form."""
        from ..features.connect import cites

        return cites(self.store, ref, filters=filters)

    def person(self, name: str, **filters: Any) -> r.PersonAnswer:
        """Who someone is, found by any identity (name, e-mail, @handle, service:handle): their person
        note, identities and summary, the notes that mention them, and their timeline."""
        from ..features.people import person

        return person(self.store, name, filters=filters)

    def link(self, a: str, b: str, type: str = "related", reason: str | None = None, *,
             commit: bool | None = None) -> r.Change:
        """Add a typed link from note A to note B in A's frontmatter."""
        from ..features.linking import link

        return link(self.store, a, b, type, reason, commit=commit)

    def unlink(self, a: str, b: str, type: str | None = None, *, commit: bool | None = None) -> r.Change:
        """Remove A's frontmatter links to B (only of ``type`` if given)."""
        from ..features.linking import unlink

        return unlink(self.store, a, b, type, commit=commit)

    def similar(self, ref: str, limit: int = 10, *, vectors: bool = True, **filters: Any) -> r.SimilarNotes:
        """The notes most like ``ref`` by meaning (its vectors, when the index has them; no model runs)
        and by its distinctive words, fused; itself left out, those already linked with it marked
        (``SimilarNote.linked``). ``vectors`` False: words alone."""
        from ..features.similar import similar

        return similar(self.store, self.semantic if vectors else None, ref, limit, self.store.filters(**filters))

    def suggest_links(self, ref: str, limit: int = 3) -> list[r.LinkSuggestion]:
        """Similar notes ``ref`` does not link to yet, as ``mdmem link`` commands (nothing is written)."""
        from ..features.linking import suggest_links

        return suggest_links(self.store, self.semantic, ref, limit)

    def export_graph(self, fmt: str = "json", *, types: list[str] | None = None, entities: bool = True,
                     external: bool = True, **filters: Any) -> str:
        """The graph as json, dot or a self-contained html page (``external``: with the URLs, e-mail
        addresses, tickets, … notes cite, as nodes of their own)."""
        from ..features.connect import export_graph

        return export_graph(self.store, fmt, types=types, entities=entities, external=external, filters=filters)
