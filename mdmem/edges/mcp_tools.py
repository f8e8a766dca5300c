"""The MCP tools: what the model sees (each tool's parameters and description) and the one call each
makes. ``Tools``' methods are the hand-written tools; the rows of the command table (``commands``)
become tools beside them (``Tools.table_tool``). ``Served`` routes a call to its vault when one
server serves several: every tool takes ``vault``, a name of the set; without it the searches
(recall, query, search, vsearch, context) answer from every vault, merged on one scale
(``VaultSet``), with ids ``NAME:id``; a note argument written ``NAME:REF`` goes to vault NAME; anything
else goes to the primary vault (the one ``--vault`` or the current folder names when it is in the set,
else the set's first), which is where ``add`` writes.

The SDK runs plain functions in worker threads; a ``Vault`` is not thread-safe, so every tool holds
one lock.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from ..api.reader import Ask
from ..api.vault_set import Member, VaultSet, split_ref
from ..core.errors import MdmemError
from ..core.memory import parse_until
from ..core.rank import filter_args as filters
from ..core.redact import redact
from ..render import mcp as render_mcp
from ..results.notes import MissingNote, NoteBatch, NoteText
from .commands import COMMANDS, Command, Param

if TYPE_CHECKING:
    from ..api.reader import Reader
    from ..api.vault import Vault

# -- parameter types: descriptions are what the model reads -----------------------------------------

Query = Annotated[str, Field(description="The question or words to look for, in any language.")]
Limit = Annotated[int, Field(ge=1, le=50, description="Most results to return.")]
Types = Annotated[
    str | list[str] | None,
    Field(description="Only these note types, e.g. decision, preference, fact, problem, handoff."),
]
Tags = Annotated[str | list[str] | None, Field(description="Only notes with all of these tags.")]
Scope = Annotated[str | None, Field(description="Only this scope (e.g. project:acme); global notes always qualify.")]
Since = Annotated[
    str | None,
    Field(description="Only notes dated on or after this day (YYYY-MM-DD); undated notes by their last commit."),
]
Until = Annotated[str | None, Field(description="Only notes dated on or before this day (YYYY-MM-DD).")]
Include = Annotated[
    list[str] | None, Field(description="Also show notes hidden by default: forgotten, archived, snoozed, expired.")
]
NoteRef = Annotated[str, Field(description="The note: its id (from a search result), path, file name, title or alias.")]
Which = Annotated[
    str | None,
    Field(
        description=(
            "Which vault, by name, when this server serves several (status lists them; ids from searches across "
            "vaults are NAME:id). Default: every vault for the searches, else the vault a NAME:id names, else the "
            "first."
        )
    ),
]

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ADDITIVE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
IDEMPOTENT = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


class Served:
    """The vaults a server answers for: one vault, or a set (``--vaults``) and its primary vault, where
    calls go that name no vault. Every tool takes ``vault``, a name of the set."""

    def __init__(self, primary: Vault, group: VaultSet | None = None) -> None:
        self.primary = primary
        self.group = group
        self.alone: dict[str, VaultSet] = {}  # a member asked for by name: a set of one (its ids qualified)

    @property
    def vaults(self) -> list[Vault]:
        return [m.vault for m in self.group.members] if self.group else [self.primary]

    def _member(self, which: str) -> Member:
        if self.group is None:
            raise ToolError(f"This server serves one vault ({self.primary.root}); leave vault out.")
        try:
            return self.group.member(which)
        except MdmemError as exc:
            raise ToolError(str(exc)) from exc

    def reader(self, which: str | None) -> Reader:
        """Who answers a search: the vault named ``which`` (in a set, its ids stay ``NAME:id``), else
        the whole set, merged on one scale, or the one vault."""
        if which is None:
            return self.group or self.primary
        member = self._member(which)
        if member.name not in self.alone:
            self.alone[member.name] = VaultSet([member])
        return self.alone[member.name]

    def route(self, which: str | None, *refs: str) -> tuple[Vault, list[str]]:
        """The vault a call goes to and its note references there: ``which`` if given; else the vault
        that ``NAME:REF`` references name (the prefix dropped; all of one vault); else the primary vault."""
        if which is not None:
            return self._member(which).vault, list(refs)
        if self.group is None:
            return self.primary, list(refs)
        split = [split_ref(r, self.group.names) for r in refs]
        names = {s[0] for s in split if s is not None}
        if len(names) > 1:
            raise ToolError(
                f"The notes are in different vaults ({', '.join(sorted(names))}); a link or a path "
                "stays within one vault."
            )
        if not names:
            return self.primary, list(refs)
        return self.group.member(names.pop()).vault, [s[1] if s else r for s, r in zip(split, refs)]


class Tools:
    """The MCP tools, one call at a time (under ``lock``). Each method is a tool: its parameters and
    docstring are what the model reads; the command table's rows become tools beside them
    (``table_tool``)."""

    def __init__(self, served: Served, lock: threading.Lock) -> None:
        self.served = served
        self.lock = lock

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run one vault call under the lock; library errors become tool errors."""
        with self.lock:
            try:
                return fn()
            except MdmemError as exc:
                raise ToolError(str(exc)) from exc

    def answer(self, result: Any, **options: Any) -> CallToolResult:
        """The tool result for ``result`` (``render.mcp``), its warnings included."""
        text, data = render_mcp(result, **options)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)

    def table_tool(self, spec: Command) -> Callable[..., CallToolResult]:
        """The tool for a row of the command table: its MCP parameters (``about`` or ``help`` as their
        descriptions), ``vault``, and one call routed as every tool's is."""
        params = [
            inspect.Parameter(
                p.name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=tool_type(p),
                **({} if p.required else {"default": None if p.many else p.default}),
            )
            for p in spec.params
            if p.mcp
        ]
        params.append(inspect.Parameter("vault", inspect.Parameter.KEYWORD_ONLY, annotation=Which, default=None))
        notes = [p.name for p in spec.params if p.note and p.mcp]

        many = {p.name for p in spec.params if p.many}

        def run(**kwargs: Any) -> CallToolResult:
            v, refs = self.served.route(kwargs.pop("vault", None), *(kwargs[n] for n in notes))
            kwargs.update(zip(notes, refs))
            for name in many & kwargs.keys():  # the call takes a list as the command line gives it: a tuple
                kwargs[name] = tuple(kwargs[name] or ())
            return self.answer(self.call(lambda: spec.run(v, **kwargs)))

        # The SDK reads a tool's parameters (names, types, descriptions) from its signature.
        run.__signature__ = inspect.Signature(params, return_annotation=CallToolResult)  # type: ignore[attr-defined]
        run.__name__, run.__doc__ = spec.tool or spec.name, inspect.cleandoc(spec.about or spec.help)
        return run

    # -- retrieval -------------------------------------------------------------------------------

    def ask(self, question: Ask, vault: str | None) -> CallToolResult:
        """A retrieval tool's answer: ``question`` asked of the vault (or set) ``vault`` names."""
        reader = self.served.reader(vault)
        return self.answer(self.call(lambda: question.of(reader)), tool=question.mode)

    def recall(
        self,
        query: Query,
        limit: Limit = 8,
        type: Types = None,
        tag: Tags = None,
        scope: Scope = None,
        since: Since = None,
        until: Until = None,
        include: Include = None,
        vault: Which = None,
    ) -> CallToolResult:
        """Look up memory: call this FIRST when the request may depend on earlier decisions, preferences,
        facts, problems or sessions. It classifies the question (why / when / who / recent / general) and
        routes it: causes and consequences for "why", a time window for "when", entity matches for "who",
        newest first for "latest / last time", hybrid search otherwise. Returns compact hits (id, type,
        title, key line, score); call get(id) for a whole note."""
        f = filters(type=type, tag=tag, scope=scope, since=since, until=until, include=include)
        return self.ask(Ask("recall", query, limit, filters=f), vault)

    def query(
        self,
        query: Query,
        limit: Limit = 8,
        type: Types = None,
        tag: Tags = None,
        scope: Scope = None,
        since: Since = None,
        until: Until = None,
        include: Include = None,
        vault: Which = None,
    ) -> CallToolResult:
        """Hybrid search (BM25 words + vector meaning, fused), without recall's intent routing. Use for a
        plain topical lookup, usually with filters (type, tag, scope, dates)."""
        f = filters(type=type, tag=tag, scope=scope, since=since, until=until, include=include)
        return self.ask(Ask("query", query, limit, filters=f), vault)

    def search(
        self,
        query: Query,
        limit: Limit = 8,
        type: Types = None,
        tag: Tags = None,
        scope: Scope = None,
        since: Since = None,
        until: Until = None,
        include: Include = None,
        vault: Which = None,
    ) -> CallToolResult:
        """Exact-word full-text search (BM25, no model; fast). Best for identifiers, error codes, file and
        function names, people and product names, e.g. ERR_PAY_504 or max_pool_size."""
        f = filters(type=type, tag=tag, scope=scope, since=since, until=until, include=include)
        return self.ask(Ask("search", query, limit, filters=f), vault)

    def vsearch(
        self,
        query: Query,
        limit: Limit = 8,
        type: Types = None,
        tag: Tags = None,
        scope: Scope = None,
        since: Since = None,
        until: Until = None,
        include: Include = None,
        vault: Which = None,
    ) -> CallToolResult:
        """Meaning-only search (vectors): finds notes that say the same thing in other words. Use when
        search finds nothing because you do not know the vault's wording."""
        f = filters(type=type, tag=tag, scope=scope, since=since, until=until, include=include)
        return self.ask(Ask("vsearch", query, limit, filters=f), vault)

    # -- reading ---------------------------------------------------------------------------------

    def get(
        self,
        note: NoteRef,
        max_chars: Annotated[
            int, Field(ge=200, le=200_000, description="Cut the note after this many characters.")
        ] = 12_000,
        vault: Which = None,
    ) -> CallToolResult:
        """The whole note — frontmatter and body as in the file — by id, path, file name, title or alias.
        Use after recall/search when the key line is not enough."""
        v, (note,) = self.served.route(vault, note)
        return self.answer(self.call(lambda: v.read(note, max_chars)))

    def multi_get(
        self,
        notes: Annotated[
            list[str],
            Field(
                min_length=1,
                max_length=50,
                description=("Note ids (NAME:id from a search across vaults), paths, file names, titles or aliases."),
            ),
        ],
        max_chars: Annotated[
            int, Field(ge=200, le=100_000, description=("Cut each note after this many characters."))
        ] = 4000,
        vault: Which = None,
    ) -> CallToolResult:
        """Several whole notes in one call (e.g. the top hits of a recall). A note that cannot be found is
        reported in the result; the others are still returned."""
        items: list[NoteText | MissingNote] = []
        for ref in notes:
            try:
                v, (one,) = self.served.route(vault, ref)
                items.append(self.call(partial(v.read, one, max_chars)))
            except ToolError as exc:
                items.append(MissingNote(ref, str(exc)))
        return self.answer(NoteBatch(items))

    # -- writing ---------------------------------------------------------------------------------

    def add(
        self,
        title: Annotated[
            str,
            Field(
                min_length=1,
                description=(
                    "A clear, specific title: the claim itself, e.g. 'Use Postgres 16 for the billing service'."
                ),
            ),
        ],
        body: Annotated[
            str,
            Field(
                description="The memory in markdown: what, why, and where it applies. "
                "Link related notes with [[Their title]]."
            ),
        ] = "",
        type: Annotated[
            str,
            Field(
                description="decision, preference, fact, context, idea, feedback, "
                "problem, antipattern, milestone, research, handoff or note."
            ),
        ] = "note",
        tags: Annotated[list[str] | None, Field(description="A few topic tags.")] = None,
        scope: Annotated[str | None, Field(description="global (default), project:NAME or topic:NAME.")] = None,
        salience: Annotated[
            float | None, Field(ge=0, le=1, description="Importance: 0.8+ critical, 0.5 ordinary (default), 0.3 minor.")
        ] = None,
        pinned: Annotated[
            bool, Field(description="Pin it (only for standing rules the user wants in every session).")
        ] = False,
        entities: Annotated[list[str] | None, Field(description="People, systems, products it is about.")] = None,
        aliases: Annotated[list[str] | None, Field(description="Other names for the note.")] = None,
        refs: Annotated[
            list[str] | None,
            Field(
                description="What it cites outside the vault: URLs, e-mail "
                "addresses, tickets (PAY-1234), DOIs, file paths."
            ),
        ] = None,
        force: Annotated[bool, Field(description="Write even though a near duplicate exists.")] = False,
        vault: Which = None,
    ) -> CallToolResult:
        """Save a new memory that will matter in a later session: one decision, preference, fact or lesson
        per note. Checks the vault first: ADD (written and committed), UPDATE (a near duplicate exists, so
        nothing is written: correct that note instead, or pass force=true), NOOP (the same text is already
        there). Secrets (keys, tokens, passwords) are redacted before writing."""
        v = self.served.route(vault)[0]
        clean_title, clean_body = redact(title), redact(body)
        report = self.call(
            lambda: v.save(
                clean_title.text,
                clean_body.text,
                force=force,
                type=type,
                tags=tags,
                scope=scope,
                salience=salience,
                pinned=pinned,
                entities=entities,
                aliases=aliases,
                refs=refs,
            )
        )
        return self.answer(replace(report, redacted=clean_title.count + clean_body.count))

    def correct(
        self,
        note: NoteRef,
        body: Annotated[str, Field(min_length=1, description="The corrected memory, in full.")],
        title: Annotated[str | None, Field(description="A new title (default: the old one).")] = None,
        vault: Which = None,
    ) -> CallToolResult:
        """Replace a memory that is wrong or outdated: writes a successor that supersedes it; the old note
        keeps its text, is archived and points to the new one (both committed). Use when the user says
        something changed or was wrong — never add a second, contradicting note."""
        v, (note,) = self.served.route(vault, note)
        clean, clean_title = redact(body), redact(title) if title else None
        new_title = clean_title.text if clean_title else None
        done = self.call(lambda: v.correct(note, clean.text, title=new_title))
        return self.answer(replace(done, redacted=clean.count + (clean_title.count if clean_title else 0)))

    def pin(
        self, note: NoteRef, pinned: Annotated[bool, Field(description="false unpins.")] = True, vault: Which = None
    ) -> CallToolResult:
        """Pin a memory so it comes first in every session's context: standing constraints, key
        decisions, preferences the user asked you to remember. Pin sparingly; pinned=false unpins."""
        v, (note,) = self.served.route(vault, note)
        return self.answer(self.call(lambda: v.pin(note, pinned)))

    def snooze(
        self,
        note: NoteRef,
        until: Annotated[str | None, Field(description="Hide until this day (YYYY-MM-DD).")] = None,
        days: Annotated[int | None, Field(ge=1, le=3650, description="Or hide for this many days.")] = None,
        vault: Which = None,
    ) -> CallToolResult:
        """Hide a memory that keeps surfacing but does not matter now, until a date or for some days; it
        comes back by itself. Give until or days."""
        v, (note,) = self.served.route(vault, note)
        return self.answer(self.call(lambda: v.snooze(note, parse_until(until, f"{days}d" if days else None))))

    def forget(self, note: NoteRef, vault: Which = None) -> CallToolResult:
        """Hide a memory that is wrong or obsolete for good (status forgotten; the file stays in git and
        restore undoes it). Prefer correct when there is a right version, snooze when it is only noise now."""
        v, (note,) = self.served.route(vault, note)
        return self.answer(self.call(lambda: v.forget(note)))

    def restore(self, note: NoteRef, vault: Which = None) -> CallToolResult:
        """Make a forgotten, archived or snoozed memory visible again."""
        v, (note,) = self.served.route(vault, note)
        return self.answer(self.call(lambda: v.restore(note)))

    def set(
        self,
        note: NoteRef,
        salience: Annotated[
            float | None, Field(ge=0, le=1, description="Importance: 0.8+ critical, 0.5 ordinary, 0.3 minor.")
        ] = None,
        confidence: Annotated[float | None, Field(ge=0, le=1, description="How sure the memory is.")] = None,
        pinned: Annotated[bool | None, Field(description="true pins, false unpins.")] = None,
        type: Annotated[
            str | None, Field(description="decision, preference, fact, context, problem, handoff, note, …")
        ] = None,
        tags: Annotated[list[str] | None, Field(description="The note's tags (replaces them).")] = None,
        scope: Annotated[str | None, Field(description="global, project:NAME or topic:NAME.")] = None,
        valid_from: Annotated[str | None, Field(description="True from this day (YYYY-MM-DD).")] = None,
        valid_until: Annotated[
            str | None, Field(description="True until this day (YYYY-MM-DD); after it the note is hidden as expired.")
        ] = None,
        remove: Annotated[list[str] | None, Field(description='Keys to remove, e.g. ["valid_until"].')] = None,
        vault: Which = None,
    ) -> CallToolResult:
        """Change a memory's metadata in place — importance, confidence, pin, type, tags, scope, validity
        dates — when the text is still right but how it should be weighed or where it applies changed.
        Only the keys given are written (one commit); a bad value is refused and nothing changes. To
        change what the memory says, use correct instead."""
        v, (note,) = self.served.route(vault, note)
        given = dict(
            salience=salience,
            confidence=confidence,
            pinned=pinned,
            type=type,
            tags=tags,
            scope=scope,
            valid_from=valid_from,
            valid_until=valid_until,
        )
        values: dict[str, Any] = {k: x for k, x in given.items() if x is not None}
        values.update({k: None for k in remove or ()})
        return self.answer(self.call(lambda: v.set(note, values)))

    def history(
        self,
        note: NoteRef,
        limit: Annotated[int, Field(ge=1, le=200, description="The newest commits per version.")] = 10,
        diff: Annotated[bool, Field(description="Include what each commit changed in the note.")] = False,
        vault: Which = None,
    ) -> CallToolResult:
        """A memory's past: its version chain (what it superseded and what superseded it) and each
        version's commits, newest first; diff=true adds what each commit changed. Use when asked how a
        decision or fact evolved, or before correcting a note others have edited."""
        v, (note,) = self.served.route(vault, note)
        return self.answer(self.call(lambda: v.history(note, limit, diff=diff)))

    def diff(
        self,
        note: NoteRef,
        rev: Annotated[
            str | None,
            Field(
                description="Since this revision: a commit, tag, branch or HEAD~N "
                "(default: the note's previous version)."
            ),
        ] = None,
        vault: Which = None,
    ) -> CallToolResult:
        """What changed in a memory since a revision, or since its previous version, as a unified diff
        up to the file now (renames followed). Use to see what someone changed in a note."""
        v, (note,) = self.served.route(vault, note)
        return self.answer(self.call(lambda: v.diff(note, rev)))

    def show(
        self,
        note: NoteRef,
        rev: Annotated[str, Field(description="The revision: a commit (from history), tag, branch or HEAD~N.")],
        vault: Which = None,
    ) -> CallToolResult:
        """What a memory said in an earlier revision (the whole file then). Use with history to read an
        old version, e.g. what a decision said before it was corrected."""
        v, (note,) = self.served.route(vault, note)
        return self.answer(self.call(lambda: v.show(note, rev)))

    # -- graph -----------------------------------------------------------------------------------

    def why(
        self,
        query: Query,
        limit: Limit = 8,
        depth: Annotated[int, Field(ge=1, le=6, description=("Causal hops to follow from each match, each way."))] = 3,
        type: Types = None,
        tag: Tags = None,
        scope: Scope = None,
        vault: Which = None,
    ) -> CallToolResult:
        """Why something is so: the notes that best match the question, then their causes and effects
        along causal links (caused_by, depends_on, because, led_to, supersedes, …). Each result says
        whether it is a match, a cause or an effect, with the chain of links (and their reasons) to it.
        Use for "why did we …", "what led to …", "what depends on …"."""
        v = self.served.route(vault)[0]
        f = filters(type=type, tag=tag, scope=scope)
        return self.answer(self.call(lambda: v.why(query, limit, depth=depth, **f)))

    def find_similar(
        self,
        note: NoteRef,
        limit: Limit = 8,
        type: Types = None,
        tag: Tags = None,
        scope: Scope = None,
        vault: Which = None,
    ) -> CallToolResult:
        """The memories most like one memory, by meaning and by its distinctive words; itself left out,
        those already linked with it marked (linked: out, in, both). Use before adding or correcting
        (is it already there, in other words?) and to find notes worth linking to it."""
        v, (note,) = self.served.route(vault, note)
        f = filters(type=type, tag=tag, scope=scope)
        return self.answer(self.call(lambda: v.similar(note, limit, **f)))

    def timeline(
        self,
        note: Annotated[
            str, Field(description="A note (id, path, title, alias) or a question whose best match is used.")
        ],
        window: Annotated[int, Field(ge=1, le=50, description="Notes before and after.")] = 5,
        all_notes: Annotated[bool, Field(description="Among all notes, not only related ones.")] = False,
        vault: Which = None,
    ) -> CallToolResult:
        """What came before and after a note in time, among its related notes (links, mentions, versions,
        shared entities, same subject). Use for "what happened around …", "what came after …"."""
        v, (note,) = self.served.route(vault, note)
        return self.answer(self.call(lambda: v.timeline(note, window, all_notes=all_notes)), ref=note)

    def neighbors(
        self,
        note: NoteRef,
        depth: Annotated[int, Field(ge=1, le=4, description="Hops to go out.")] = 1,
        types: Annotated[
            list[str] | None,
            Field(description="Follow only these link types, e.g. caused_by, depends_on, mentions, about."),
        ] = None,
        limit: Limit = 20,
        vault: Which = None,
    ) -> CallToolResult:
        """The notes and entities linked to a note within a few hops, nearest first, each with the link
        that reached it. Use to explore what a memory is connected to."""
        v, (note,) = self.served.route(vault, note)
        return self.answer(self.call(lambda: v.neighbors(note, depth, types=types, limit=limit)))

    def link(
        self,
        source: Annotated[str, Field(description="The note the link goes from (id, path, title).")],
        target: Annotated[str, Field(description="The note it points to.")],
        type: Annotated[
            str, Field(description="The relation, e.g. caused_by, depends_on, supports, contradicts, part_of, related.")
        ] = "related",
        reason: Annotated[str | None, Field(description="Why they are linked, in a few words.")] = None,
        vault: Which = None,
    ) -> CallToolResult:
        """Record how two memories relate: adds {to, type, reason} to the source note's links (committed).
        Use causal types (caused_by, depends_on, led_to) when one explains the other: why follows them."""
        v, (source, target) = self.served.route(vault, source, target)
        return self.answer(self.call(lambda: v.link(source, target, type, reason)), link_type=type)

    def unlink(
        self,
        source: Annotated[str, Field(description="The note the link goes from (id, path, title).")],
        target: Annotated[str, Field(description="The note it points to.")],
        type: Annotated[str | None, Field(description="Only links of this type (default: all).")] = None,
        vault: Which = None,
    ) -> CallToolResult:
        """Remove a link recorded with link (from the source's frontmatter; committed). Use when a
        relation was wrong; body mentions stay and are reported."""
        v, (source, target) = self.served.route(vault, source, target)
        return self.answer(self.call(lambda: v.unlink(source, target, type)))

    def context(
        self,
        prompt: Query,
        budget: Annotated[int, Field(ge=50, le=20_000, description=("Most tokens to return."))] = 600,
        vault: Which = None,
    ) -> CallToolResult:
        """Memory for a prompt as one block within a token budget: pinned notes first, then the most
        relevant (what the prompt hook injects). Use recall instead when you want to pick notes."""
        v = self.served.reader(vault)
        return self.answer(self.call(lambda: v.context(prompt, budget)))

    def import_memories(
        self,
        path: Annotated[
            str,
            Field(
                min_length=1,
                description=(
                    "A MEMORY.md file, a memory/ folder of day files, a JSONL file, a PDF or EPUB book, a "
                    "ClawMem store (SQLite) or a Qmemory export (.surql), outside the vault."
                ),
            ),
        ],
        dry_run: Annotated[bool, Field(description="Only count what would be written.")] = False,
        vault: Which = None,
    ) -> CallToolResult:
        """Bring existing agent memories or a book into the vault: one note per MEMORY.md item or
        paragraph, per dated memory/ file, per JSONL line, per ClawMem document or Qmemory memory (pins,
        snoozes, validity, status and relations kept as typed links; what is not kept is named), or per
        chapter of a PDF/EPUB (with an index note; the file is kept as an attachment). Running it again
        adds nothing; a new version of a book updates its notes. Secrets are redacted; the source files
        are not changed."""
        from .book_import import read_book
        from .importer import detect, import_path

        v = self.served.route(vault)[0]
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
            raise ToolError(
                f"{path} is an Obsidian vault: adopting a folder as a vault is a step for its "
                f"owner, in a shell: mdmem import {path}"
            )
        return self.answer(self.call(lambda: import_path(v, source, dry_run=dry_run, book=book)))

    def reindex(
        self, full: Annotated[bool, Field(description="Rebuild from scratch.")] = False, vault: Which = None
    ) -> CallToolResult:
        """Bring the index up to date with the files now (edits made outside mdmem). Use when status
        says the index is stale or a note you just edited by hand is not found."""
        v = self.served.route(vault)[0]
        return self.answer(self.call(lambda: v.reindex(full)))

    # -- health ----------------------------------------------------------------------------------


HINTS = {"read": READ_ONLY, "write": ADDITIVE, "idempotent": IDEMPOTENT}


def tool_type(p: Param) -> Any:
    """The annotated type the SDK makes a table parameter's schema from."""
    base: Any = list[str] if p.many else p.type
    if p.many or (not p.required and p.default is None):
        base = base | None
    field = Field(description=inspect.cleandoc(p.about or p.help), ge=p.low, le=p.high)
    return Annotated[base, field]


def tools_of(tools: Tools) -> list[tuple[Callable[..., CallToolResult], ToolAnnotations]]:
    """Every tool with its annotations, in the order clients list them: the hand-written ones, then
    the command table's."""
    t = tools
    hand: list[tuple[Callable[..., CallToolResult], ToolAnnotations]] = [
        (t.recall, READ_ONLY),
        (t.query, READ_ONLY),
        (t.search, READ_ONLY),
        (t.vsearch, READ_ONLY),
        (t.get, READ_ONLY),
        (t.multi_get, READ_ONLY),
        (t.add, ADDITIVE),
        (t.correct, ADDITIVE),
        (t.pin, IDEMPOTENT),
        (t.snooze, IDEMPOTENT),
        (t.forget, IDEMPOTENT),
        (t.restore, IDEMPOTENT),
        (t.set, IDEMPOTENT),
        (t.history, READ_ONLY),
        (t.diff, READ_ONLY),
        (t.show, READ_ONLY),
        (t.why, READ_ONLY),
        (t.find_similar, READ_ONLY),
        (t.timeline, READ_ONLY),
        (t.neighbors, READ_ONLY),
        (t.link, IDEMPOTENT),
        (t.unlink, IDEMPOTENT),
        (t.context, READ_ONLY),
        (t.import_memories, ADDITIVE),
        (t.reindex, IDEMPOTENT),
    ]
    return hand + [(t.table_tool(c), HINTS[c.hints]) for c in COMMANDS]
