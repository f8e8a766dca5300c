"""The MCP server (DESIGN §8): the vault's library calls as MCP tools, over stdio or streamable HTTP.

``create_server(vault)`` builds an ``MCPServer`` (the official SDK, 2.x) whose tools are the methods
of ``Tools``: each calls ``Vault`` once and answers with ``render.mcp`` of the result — compact hits
(id, type, title, key line, score) and whole notes from ``get``/``multi_get``, as text for the model
and the same shapes as ``--json`` (or a selection of them) as structured content. Library errors come
back as tool errors with the library's message (what is wrong and what to do), never as a crash.

The SDK runs plain functions in worker threads; a ``Vault`` is not thread-safe, so every tool holds
one lock. On stdio nothing but protocol may reach stdout: while serving, stray prints go to stderr.
"""

from __future__ import annotations

import hmac
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from ..core.errors import MdmemError
from ..core.rank import filter_args as filters
from ..core.version import __version__
from ..render import mcp as render_mcp
from ..results import Correction, MissingNote, NoteBatch, NoteText, note_doc
from .serve import warm_up

if TYPE_CHECKING:
    from ..api.vault import Vault

INSTRUCTIONS = """\
mdmem is long-term memory kept as markdown notes in a git repository; people edit the same notes.
- Before answering anything that may depend on earlier work, preferences or decisions, call recall
  with the user's question. Hits are compact; call get (or multi_get) for whole notes.
- search finds exact words and identifiers (error codes, file names); vsearch finds meaning.
- Save what will matter in a later session with add: one decision, preference, fact or lesson per
  note, a clear title, the right type. Do not save chit-chat or what the code or git log already says.
- When a memory is wrong or outdated, correct it (never add a contradicting copy). pin only standing
  rules the user wants in every session; snooze what is noise for now; forget what is wrong for good.
"""

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")

# -- parameter types: descriptions are what the model reads -----------------------------------------

Query = Annotated[str, Field(description="The question or words to look for, in any language.")]
Limit = Annotated[int, Field(ge=1, le=50, description="Most results to return.")]
Types = Annotated[str | list[str] | None, Field(
    description="Only these note types, e.g. decision, preference, fact, problem, handoff.")]
Tags = Annotated[str | list[str] | None, Field(description="Only notes with all of these tags.")]
Scope = Annotated[str | None, Field(description="Only this scope (e.g. project:acme); global notes always qualify.")]
Since = Annotated[str | None, Field(description="Only notes dated on or after this day (YYYY-MM-DD); "
                                                   "undated notes by their last commit.")]
Until = Annotated[str | None, Field(description="Only notes dated on or before this day (YYYY-MM-DD).")]
Include = Annotated[list[str] | None, Field(
    description="Also show notes hidden by default: forgotten, archived, snoozed, expired.")]
NoteRef = Annotated[str, Field(description="The note: its id (from a search result), path, file name, title or alias.")]

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ADDITIVE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
IDEMPOTENT = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


class Tools:
    """The MCP tools over one vault, one call at a time (under ``lock``). Each method is a tool: its
    parameters and docstring are what the model reads."""

    def __init__(self, vault: Vault, lock: threading.Lock) -> None:
        self.vault = vault
        self.lock = lock
        self.local = threading.local()  # a tool runs call() and builds its answer in one worker thread

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run one vault call under the lock; library errors become tool errors, warnings are kept."""
        vault = self.vault
        with self.lock:
            vault.warnings.clear()
            try:
                return fn()
            except MdmemError as exc:
                raise ToolError(str(exc)) from exc
            finally:
                self.local.warnings = list(vault.warnings)
                vault.warnings.clear()
                if vault.index_warning:  # answered from the previous index (e.g. the disk is full)
                    self.local.warnings.append(vault.index_warning)
                    vault.index_warning = None

    def tool(self, name: str) -> Callable[..., CallToolResult]:
        """The function the server registers as tool ``name`` (``mcp_vaults.SetTools`` wraps it)."""
        fn: Callable[..., CallToolResult] = getattr(self, name)
        return fn

    def answer(self, result: Any, *, warn: bool = True, **options: Any) -> CallToolResult:
        """The tool result for ``result`` (``render.mcp``), with the last call's warnings when ``warn``
        (a commit git refused, an index that could not be refreshed)."""
        warnings: list[str] = getattr(self.local, "warnings", []) if warn else []
        text, data = render_mcp(result, warnings=warnings, **options)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)

    # -- retrieval -------------------------------------------------------------------------------

    def recall(self, query: Query, limit: Limit = 8, type: Types = None, tag: Tags = None, scope: Scope = None,
               since: Since = None, until: Until = None, include: Include = None) -> CallToolResult:
        """Look up memory: call this FIRST when the request may depend on earlier decisions, preferences,
        facts, problems or sessions. It classifies the question (why / when / who / recent / general) and
        routes it: causes and consequences for "why", a time window for "when", entity matches for "who",
        newest first for "latest / last time", hybrid search otherwise. Returns compact hits (id, type,
        title, key line, score); call get(id) for a whole note."""
        f = filters(type=type, tag=tag, scope=scope, since=since, until=until, include=include)
        return self.answer(self.call(lambda: self.vault.recall(query, limit, **f)), tool="recall")

    def query(self, query: Query, limit: Limit = 8, type: Types = None, tag: Tags = None, scope: Scope = None,
              since: Since = None, until: Until = None, include: Include = None) -> CallToolResult:
        """Hybrid search (BM25 words + vector meaning, fused), without recall's intent routing. Use for a
        plain topical lookup, usually with filters (type, tag, scope, dates)."""
        f = filters(type=type, tag=tag, scope=scope, since=since, until=until, include=include)
        return self.answer(self.call(lambda: self.vault.query(query, limit, **f)), tool="query")

    def search(self, query: Query, limit: Limit = 8, type: Types = None, tag: Tags = None, scope: Scope = None,
               since: Since = None, until: Until = None, include: Include = None) -> CallToolResult:
        """Exact-word full-text search (BM25, no model; fast). Best for identifiers, error codes, file and
        function names, people and product names, e.g. ERR_PAY_504 or max_pool_size."""
        f = filters(type=type, tag=tag, scope=scope, since=since, until=until, include=include)
        return self.answer(self.call(lambda: self.vault.search(query, limit, **f)), tool="search")

    def vsearch(self, query: Query, limit: Limit = 8, type: Types = None, tag: Tags = None, scope: Scope = None,
                since: Since = None, until: Until = None, include: Include = None) -> CallToolResult:
        """Meaning-only search (vectors): finds notes that say the same thing in other words. Use when
        search finds nothing because you do not know the vault's wording."""
        f = filters(type=type, tag=tag, scope=scope, since=since, until=until, include=include)
        return self.answer(self.call(lambda: self.vault.vsearch(query, limit, **f)), tool="vsearch")

    def profile(self, budget: Annotated[int, Field(ge=50, le=20_000, description="Most tokens to return.")] = 600,
                scope: Scope = None) -> CallToolResult:
        """Who the user is and where things stand, in one call: standing facts (pinned rules, important
        preferences and facts, conventions) and recent context (latest handoffs, active decisions, open
        problems), within a token budget. Call it once when a session starts cold, before recall."""
        return self.answer(self.call(lambda: self.vault.profile(budget, scope=scope)), warn=False)

    # -- reading ---------------------------------------------------------------------------------

    def _whole(self, ref: str, max_chars: int) -> NoteText:
        n = self.vault.get(ref)
        text = self.vault.files.safe_path(n.path).read_text(encoding="utf-8", errors="replace")
        return NoteText.cut(note_doc(n, self.vault.dates(n)), text, max_chars)

    def get(self, note: NoteRef, max_chars: Annotated[int, Field(
            ge=200, le=200_000, description="Cut the note after this many characters.")] = 12_000) -> CallToolResult:
        """The whole note — frontmatter and body as in the file — by id, path, file name, title or alias.
        Use after recall/search when the key line is not enough."""
        return self.answer(self.call(lambda: self._whole(note, max_chars)), warn=False)

    def multi_get(self, notes: Annotated[list[str], Field(min_length=1, max_length=50, description=(
                      "Note ids, paths, file names, titles or aliases."))],
                  max_chars: Annotated[int, Field(ge=200, le=100_000, description=(
                      "Cut each note after this many characters."))] = 4000) -> CallToolResult:
        """Several whole notes in one call (e.g. the top hits of a recall). A note that cannot be found is
        reported in the result; the others are still returned."""
        items: list[NoteText | MissingNote] = []
        for ref in notes:
            try:
                items.append(self.call(lambda ref=ref: self._whole(ref, max_chars)))
            except ToolError as exc:
                items.append(MissingNote(ref, str(exc)))
        return self.answer(NoteBatch(items), warn=False)

    # -- writing ---------------------------------------------------------------------------------

    def add(self, title: Annotated[str, Field(min_length=1, description=(
                "A clear, specific title: the claim itself, e.g. 'Use Postgres 16 for the billing service'."))],
            body: Annotated[str, Field(description="The memory in markdown: what, why, and where it applies. "
                                       "Link related notes with [[Their title]].")] = "",
            type: Annotated[str, Field(description="decision, preference, fact, context, idea, feedback, "
                                       "problem, antipattern, milestone, research, handoff or note.")] = "note",
            tags: Annotated[list[str] | None, Field(description="A few topic tags.")] = None,
            scope: Annotated[str | None, Field(description="global (default), project:NAME or topic:NAME.")] = None,
            salience: Annotated[float | None, Field(ge=0, le=1, description="Importance: 0.8+ critical, 0.5 "
                                                    "ordinary (default), 0.3 minor.")] = None,
            pinned: Annotated[bool, Field(description="Pin it (only for standing rules the user wants in "
                                          "every session).")] = False,
            entities: Annotated[list[str] | None, Field(description="People, systems, products it is about.")] = None,
            aliases: Annotated[list[str] | None, Field(description="Other names for the note.")] = None,
            refs: Annotated[list[str] | None, Field(description="What it cites outside the vault: URLs, e-mail "
                                                    "addresses, tickets (PAY-1234), DOIs, file paths.")] = None,
            force: Annotated[bool, Field(description="Write even though a near duplicate exists.")] = False,
            ) -> CallToolResult:
        """Save a new memory that will matter in a later session: one decision, preference, fact or lesson
        per note. Checks the vault first: ADD (written and committed), UPDATE (a near duplicate exists, so
        nothing is written: correct that note instead, or pass force=true), NOOP (the same text is already
        there). Secrets (keys, tokens, passwords) are redacted before writing."""
        from dataclasses import replace

        from ..core.redact import redact

        clean_title, clean_body = redact(title), redact(body)
        report = self.call(lambda: self.vault.save(
            clean_title.text, clean_body.text, force=force, type=type, tags=tags, scope=scope, salience=salience,
            pinned=pinned, entities=entities, aliases=aliases, refs=refs))
        return self.answer(replace(report, redacted=clean_title.count + clean_body.count))

    def correct(self, note: NoteRef,
                body: Annotated[str, Field(min_length=1, description="The corrected memory, in full.")],
                title: Annotated[str | None, Field(description="A new title (default: the old one).")] = None,
                ) -> CallToolResult:
        """Replace a memory that is wrong or outdated: writes a successor that supersedes it; the old note
        keeps its text, is archived and points to the new one (both committed). Use when the user says
        something changed or was wrong — never add a second, contradicting note."""
        from ..core.redact import redact

        clean, clean_title = redact(body), redact(title) if title else None
        new_title = clean_title.text if clean_title else None
        added, old = self.call(lambda: self.vault.correct(note, clean.text, title=new_title))
        return self.answer(Correction(added, old, clean.count + (clean_title.count if clean_title else 0)))

    def pin(self, note: NoteRef, pinned: Annotated[bool, Field(description="false unpins.")] = True) -> CallToolResult:
        """Pin a memory so it comes first in every session's context: standing constraints, key
        decisions, preferences the user asked you to remember. Pin sparingly; pinned=false unpins."""
        return self.answer(self.call(lambda: self.vault.pin(note, pinned)))

    def snooze(self, note: NoteRef,
               until: Annotated[str | None, Field(description="Hide until this day (YYYY-MM-DD).")] = None,
               days: Annotated[int | None, Field(ge=1, le=3650, description="Or hide for this many days.")] = None,
               ) -> CallToolResult:
        """Hide a memory that keeps surfacing but does not matter now, until a date or for some days; it
        comes back by itself. Give until or days."""
        from ..core.memory import parse_until

        return self.answer(self.call(lambda: self.vault.snooze(note, parse_until(until, f"{days}d" if days else None))))

    def forget(self, note: NoteRef) -> CallToolResult:
        """Hide a memory that is wrong or obsolete for good (status forgotten; the file stays in git and
        restore undoes it). Prefer correct when there is a right version, snooze when it is only noise now."""
        return self.answer(self.call(lambda: self.vault.forget(note)))

    def restore(self, note: NoteRef) -> CallToolResult:
        """Make a forgotten, archived or snoozed memory visible again."""
        return self.answer(self.call(lambda: self.vault.restore(note)))

    def set(self, note: NoteRef,
            salience: Annotated[float | None, Field(ge=0, le=1, description="Importance: 0.8+ critical, 0.5 "
                                                    "ordinary, 0.3 minor.")] = None,
            confidence: Annotated[float | None, Field(ge=0, le=1, description="How sure the memory is.")] = None,
            pinned: Annotated[bool | None, Field(description="true pins, false unpins.")] = None,
            type: Annotated[str | None, Field(description="decision, preference, fact, context, problem, "
                                              "handoff, note, …")] = None,
            tags: Annotated[list[str] | None, Field(description="The note's tags (replaces them).")] = None,
            scope: Annotated[str | None, Field(description="global, project:NAME or topic:NAME.")] = None,
            valid_from: Annotated[str | None, Field(description="True from this day (YYYY-MM-DD).")] = None,
            valid_until: Annotated[str | None, Field(description="True until this day (YYYY-MM-DD); "
                                                     "after it the note is hidden as expired.")] = None,
            remove: Annotated[list[str] | None, Field(description="Keys to remove, e.g. [\"valid_until\"].")] = None,
            ) -> CallToolResult:
        """Change a memory's metadata in place — importance, confidence, pin, type, tags, scope, validity
        dates — when the text is still right but how it should be weighed or where it applies changed.
        Only the keys given are written (one commit); a bad value is refused and nothing changes. To
        change what the memory says, use correct instead."""
        given = dict(salience=salience, confidence=confidence, pinned=pinned, type=type, tags=tags, scope=scope,
                     valid_from=valid_from, valid_until=valid_until)
        values: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        values.update({k: None for k in remove or ()})
        return self.answer(self.call(lambda: self.vault.set(note, values)))

    def history(self, note: NoteRef,
                limit: Annotated[int, Field(ge=1, le=200, description="The newest commits per version.")] = 10,
                diff: Annotated[bool, Field(description="Include what each commit changed in the note.")] = False,
                ) -> CallToolResult:
        """A memory's past: its version chain (what it superseded and what superseded it) and each
        version's commits, newest first; diff=true adds what each commit changed. Use when asked how a
        decision or fact evolved, or before correcting a note others have edited."""
        return self.answer(self.call(lambda: self.vault.history(note, limit, diff=diff)), warn=False)

    def diff(self, note: NoteRef,
             rev: Annotated[str | None, Field(description="Since this revision: a commit, tag, branch or HEAD~N "
                                              "(default: the note's previous version).")] = None,
             ) -> CallToolResult:
        """What changed in a memory since a revision, or since its previous version, as a unified diff
        up to the file now (renames followed). Use to see what someone changed in a note."""
        return self.answer(self.call(lambda: self.vault.diff(note, rev)), warn=False)

    def show(self, note: NoteRef,
             rev: Annotated[str, Field(description="The revision: a commit (from history), tag, branch or "
                                       "HEAD~N.")],
             ) -> CallToolResult:
        """What a memory said in an earlier revision (the whole file then). Use with history to read an
        old version, e.g. what a decision said before it was corrected."""
        return self.answer(self.call(lambda: self.vault.show(note, rev)), warn=False)

    # -- graph -----------------------------------------------------------------------------------

    def why(self, query: Query, limit: Limit = 8, depth: Annotated[int, Field(ge=1, le=6, description=(
            "Causal hops to follow from each match, each way."))] = 3,
            type: Types = None, tag: Tags = None, scope: Scope = None) -> CallToolResult:
        """Why something is so: the notes that best match the question, then their causes and effects
        along causal links (caused_by, depends_on, because, led_to, supersedes, …). Each result says
        whether it is a match, a cause or an effect, with the chain of links (and their reasons) to it.
        Use for "why did we …", "what led to …", "what depends on …"."""
        f = filters(type=type, tag=tag, scope=scope)
        return self.answer(self.call(lambda: self.vault.why(query, limit, depth=depth, **f)), warn=False)

    def find_similar(self, note: NoteRef, limit: Limit = 8, type: Types = None, tag: Tags = None,
                     scope: Scope = None) -> CallToolResult:
        """The memories most like one memory, by meaning and by its distinctive words; itself left out,
        those already linked with it marked (linked: out, in, both). Use before adding or correcting
        (is it already there, in other words?) and to find notes worth linking to it."""
        f = filters(type=type, tag=tag, scope=scope)
        return self.answer(self.call(lambda: self.vault.similar(note, limit, **f)), warn=False)

    def timeline(self, note: Annotated[str, Field(description="A note (id, path, title, alias) or a question whose "
                                                  "best match is used.")],
                 window: Annotated[int, Field(ge=1, le=50, description="Notes before and after.")] = 5,
                 all_notes: Annotated[bool, Field(description="Among all notes, not only related ones.")] = False,
                 ) -> CallToolResult:
        """What came before and after a note in time, among its related notes (links, mentions, versions,
        shared entities, same subject). Use for "what happened around …", "what came after …"."""
        return self.answer(self.call(lambda: self.vault.timeline(note, window, all_notes=all_notes)), warn=False,
                           ref=note)

    def neighbors(self, note: NoteRef,
                  depth: Annotated[int, Field(ge=1, le=4, description="Hops to go out.")] = 1,
                  types: Annotated[list[str] | None, Field(description="Follow only these link types, e.g. "
                                                           "caused_by, depends_on, mentions, about.")] = None,
                  limit: Limit = 20) -> CallToolResult:
        """The notes and entities linked to a note within a few hops, nearest first, each with the link
        that reached it. Use to explore what a memory is connected to."""
        return self.answer(self.call(lambda: self.vault.neighbors(note, depth, types=types, limit=limit)), warn=False)

    def link(self, source: Annotated[str, Field(description="The note the link goes from (id, path, title).")],
             target: Annotated[str, Field(description="The note it points to.")],
             type: Annotated[str, Field(description="The relation, e.g. caused_by, depends_on, supports, "
                                        "contradicts, part_of, related.")] = "related",
             reason: Annotated[str | None, Field(description="Why they are linked, in a few words.")] = None,
             ) -> CallToolResult:
        """Record how two memories relate: adds {to, type, reason} to the source note's links (committed).
        Use causal types (caused_by, depends_on, led_to) when one explains the other: why follows them."""
        return self.answer(self.call(lambda: self.vault.link(source, target, type, reason)), link_type=type)

    def links(self, note: NoteRef) -> CallToolResult:
        """The links out of a memory: typed frontmatter links (with reasons), body mentions, what it
        supersedes, its entities. Use to see what a note depends on or points to."""
        return self.answer(self.call(lambda: self.vault.links(note)), warn=False)

    def backlinks(self, note: Annotated[str, Field(description="A note (id, path, title, alias) or an entity.")],
                  ) -> CallToolResult:
        """The memories that link to a note or mention an entity. Use to see what depends on a note
        before changing or forgetting it."""
        return self.answer(self.call(lambda: self.vault.backlinks(note)), warn=False)

    def path(self, source: NoteRef, target: NoteRef) -> CallToolResult:
        """The fewest links between two memories, in either direction. Use to see how two things relate."""
        return self.answer(self.call(lambda: self.vault.shortest_path(source, target)), warn=False)

    def entity(self, name: Annotated[str, Field(description="A person, system or product, or one of its aliases.")],
               ) -> CallToolResult:
        """Everything about an entity: its own note, notes about it, links and mentions. Use for "who is
        …", "what do we know about …"."""
        return self.answer(self.call(lambda: self.vault.entity(name)), warn=False)

    def refs(self, note: NoteRef) -> CallToolResult:
        """What a note cites outside the vault: URLs, e-mail addresses, tickets (PAY-1234), DOIs, file
        paths, from its refs and its body, each with kind and canonical value. Use to follow a memory to
        its sources."""
        return self.answer(self.call(lambda: self.vault.refs(note)), warn=False)

    def cites(self, ref: Annotated[str, Field(description=(
            "A URL, e-mail address, ticket such as PAY-1234, DOI or file path, in any written form."))],
              include: Include = None) -> CallToolResult:
        """The notes that cite a URL, ticket, e-mail address, DOI or path, however each wrote it
        (http/https, www., trailing slash and case do not matter). Use for "what do we know about PAY-1234"
        or "where did we use this page"."""
        return self.answer(self.call(lambda: self.vault.cites(ref, **filters(include=include))), warn=False)

    def person(self, name: Annotated[str, Field(description=(
            "Someone's name, e-mail address or handle (@alice, github:alice)."))],
               include: Include = None) -> CallToolResult:
        """Who someone is: their person note (identities, summary), the notes that mention any of their
        names, e-mail addresses or handles, and their timeline. Use for "who is …" and "what did … do"."""
        return self.answer(self.call(lambda: self.vault.person(name, **filters(include=include))), warn=False)

    def unlink(self, source: Annotated[str, Field(description="The note the link goes from (id, path, title).")],
               target: Annotated[str, Field(description="The note it points to.")],
               type: Annotated[str | None, Field(description="Only links of this type (default: all).")] = None,
               ) -> CallToolResult:
        """Remove a link recorded with link (from the source's frontmatter; committed). Use when a
        relation was wrong; body mentions stay and are reported."""
        return self.answer(self.call(lambda: self.vault.unlink(source, target, type)))

    def context(self, prompt: Query, budget: Annotated[int, Field(ge=50, le=20_000, description=(
                "Most tokens to return."))] = 600) -> CallToolResult:
        """Memory for a prompt as one block within a token budget: pinned notes first, then the most
        relevant (what the prompt hook injects). Use recall instead when you want to pick notes."""
        return self.answer(self.call(lambda: self.vault.context(prompt, budget)), warn=False)

    def import_memories(self, path: Annotated[str, Field(min_length=1, description=(
                            "A MEMORY.md file, a memory/ folder of day files, a JSONL file, or a PDF or EPUB book, "
                            "outside the vault."))],
                        dry_run: Annotated[bool, Field(description="Only count what would be written.")] = False,
                        ) -> CallToolResult:
        """Bring existing agent memories or a book into the vault: one note per MEMORY.md item or
        paragraph, per dated memory/ file, per JSONL line, or per chapter of a PDF/EPUB (with an index
        note; the file is kept as an attachment). Running it again adds nothing; a new version of a book
        updates its notes. Secrets are redacted; the source files are not changed."""
        from pathlib import Path

        from .book_import import read_book
        from .importer import detect, import_path

        source = Path(path).expanduser()
        if not source.is_absolute():
            raise ToolError(f"{path}: give an absolute path (the server's working folder is not yours).")
        try:
            kind = detect(source.resolve())
            # A book is read before the vault's lock is taken: other clients' calls go on meanwhile (one
            # import held every other call for its whole length); reading is bounded (import_seconds).
            book = read_book(source.resolve()) if kind in ("pdf", "epub") else None
        except MdmemError as exc:  # a missing or unsupported path: its one-line reason, not a bare error
            raise ToolError(str(exc)) from exc
        if kind == "obsidian":
            raise ToolError(f"{path} is an Obsidian vault: adopting a folder as a vault is a step for its "
                            f"owner, in a shell: mdmem import {path}")
        return self.answer(self.call(lambda: import_path(self.vault, source, dry_run=dry_run, book=book)))

    def reindex(self, full: Annotated[bool, Field(description="Rebuild from scratch.")] = False) -> CallToolResult:
        """Bring the index up to date with the files now (edits made outside mdmem). Use when status
        says the index is stale or a note you just edited by hand is not found."""
        return self.answer(self.call(lambda: self.vault.reindex(full)), warn=False)

    # -- health ----------------------------------------------------------------------------------

    def status(self) -> CallToolResult:
        """Vault health: notes by type, index freshness, vector coverage, git state, problems. Use when
        results look stale or empty."""
        return self.answer(self.call(self.vault.status), warn=False)


# (tool, annotations) in the order clients list them
TOOLS = (
    ("recall", READ_ONLY), ("query", READ_ONLY), ("search", READ_ONLY), ("vsearch", READ_ONLY),
    ("profile", READ_ONLY), ("get", READ_ONLY), ("multi_get", READ_ONLY),
    ("add", ADDITIVE), ("correct", ADDITIVE), ("pin", IDEMPOTENT), ("snooze", IDEMPOTENT), ("forget", IDEMPOTENT),
    ("restore", IDEMPOTENT), ("set", IDEMPOTENT),
    ("history", READ_ONLY), ("diff", READ_ONLY), ("show", READ_ONLY),
    ("why", READ_ONLY), ("find_similar", READ_ONLY), ("timeline", READ_ONLY), ("neighbors", READ_ONLY),
    ("link", IDEMPOTENT), ("unlink", IDEMPOTENT), ("links", READ_ONLY), ("backlinks", READ_ONLY), ("path", READ_ONLY),
    ("entity", READ_ONLY), ("refs", READ_ONLY), ("cites", READ_ONLY), ("person", READ_ONLY),
    ("context", READ_ONLY), ("import_memories", ADDITIVE), ("reindex", IDEMPOTENT),
    ("status", READ_ONLY),
)


MakeTools = Callable[[threading.Lock], Tools]  # the tools over several vaults (mcp_vaults), given the lock


def create_server(vault: Vault, *, lock: threading.Lock | None = None,
                  lifespan: Callable[[Any], Any] | None = None, make_tools: MakeTools | None = None) -> MCPServer:
    """An MCP server whose tools call ``vault`` (or the vaults of ``make_tools``), one at a time (under ``lock``)."""
    server: MCPServer = MCPServer("mdmem", instructions=INSTRUCTIONS, version=__version__,
                                  lifespan=lifespan, log_level="WARNING")
    lock = lock or threading.Lock()
    tools = make_tools(lock) if make_tools else Tools(vault, lock)
    for name, hints in TOOLS:
        server.add_tool(tools.tool(name), name=name, annotations=hints)
    return server


def _warm_all(vaults: list[Vault], lock: threading.Lock) -> None:
    for v in vaults:
        warm_up(v, lock, "mdmem mcp")


# -- running ---------------------------------------------------------------------------------------------


@asynccontextmanager
async def _stdout_to_stderr(_: Any) -> AsyncIterator[dict[str, Any]]:
    """While serving stdio, print() goes to stderr: the SDK already owns the wire, and buffered stray
    output would otherwise be flushed onto it when the descriptors are restored at exit."""
    real = sys.stdout
    real.flush()
    sys.stdout = sys.stderr
    try:
        yield {}
    finally:
        sys.stdout = real


def run_stdio(vault: Vault, *, warm: bool = True, make_tools: MakeTools | None = None,
              also: list[Vault] | None = None) -> None:
    """Serve MCP on stdin/stdout until the client closes the pipe (``also``: the set's other vaults, warmed too)."""
    lock = threading.Lock()
    server = create_server(vault, lock=lock, lifespan=_stdout_to_stderr, make_tools=make_tools)
    if warm:
        threading.Thread(target=_warm_all, args=([vault, *(also or [])], lock), daemon=True).start()
    server.run("stdio")


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine (and under the SDK's Host checks)."""
    return host in LOOPBACK_HOSTS


class BearerAuth:
    """ASGI middleware: HTTP requests must carry ``Authorization: Bearer TOKEN`` (401 otherwise)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            got = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(got, self.expected):
                body = b'{"error": "missing or wrong bearer token"}'
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="mdmem"')]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve beyond loopback without a token (issue 6)."""
    if not is_loopback(host) and not token:
        raise MdmemError(f"Binding {host} exposes the vault beyond this machine: give a bearer token with "
                         "--token TOKEN or $MDMEM_MCP_TOKEN (clients send \"Authorization: Bearer TOKEN\").")


def http_app(vault: Vault, *, host: str, token: str | None, lock: threading.Lock | None = None,
             make_tools: MakeTools | None = None) -> Any:
    """The streamable-HTTP ASGI app at /mcp, behind the bearer check when a token is set."""
    check_bind(host, token)
    app = create_server(vault, lock=lock, make_tools=make_tools).streamable_http_app(host=host)
    return BearerAuth(app, token) if token else app


def run_http(vault: Vault, *, host: str, port: int, token: str | None, warm: bool = True,
             make_tools: MakeTools | None = None, also: list[Vault] | None = None) -> None:
    """Serve MCP over streamable HTTP at http://HOST:PORT/mcp until interrupted."""
    import uvicorn

    lock = threading.Lock()
    app = http_app(vault, host=host, token=token, lock=lock, make_tools=make_tools)
    if warm:
        threading.Thread(target=_warm_all, args=([vault, *(also or [])], lock), daemon=True).start()
    print(f"mdmem mcp: serving {vault.root} at http://{host}:{port}/mcp"
          + (" (bearer token required)" if token else ""), file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
