"""The MCP tools: what the model sees (each tool's parameters and description) and the one call each
makes. Most are the rows of the command table (``commands``, built by ``Tools.table_tool``); the
methods of ``Tools`` are the few written by hand (multi_get, add, correct, import_memories, reindex,
vaults). ``Served`` routes a call to its vault when one server serves several: every tool but vaults
takes ``vault``, a name of the set; without it the searches (recall, query, search, vsearch, context)
answer from every vault, merged on one scale (``VaultSet``), with ids ``NAME:id``, and status reports
each vault; a note argument written ``NAME:REF`` goes to vault NAME; anything else goes to the primary
vault (the one ``--vault`` or the current folder names when it is in the set,
else the set's first), which is where ``add`` writes.

The SDK runs plain functions in worker threads, so calls arrive at once: each runs on a lane
(``lanes.Lanes``, a ``Served`` of its own ``Vault``s), reads in parallel on the reading lanes, writes
one at a time on the writing lane.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from ..api.vault_set import Member, VaultSet, split_ref
from ..core.errors import MdmemError
from ..core.redact import redact
from ..render import mcp as render_mcp
from ..results.notes import MissingNote, NoteBatch, NoteText
from .commands import COMMANDS
from .lanes import Lanes
from .table import Command, Param, filters_of

if TYPE_CHECKING:
    from ..api.reader import Reader
    from ..api.vault import Vault
    from ..results.vaults import VaultList

# -- parameter types: descriptions are what the model reads -----------------------------------------

NoteRef = Annotated[str, Field(description="The note: its id (from a search result), path, file name, title or alias.")]
Which = Annotated[
    str | None,
    Field(
        description=(
            "Which vault, by name, when this server serves several (the vaults tool lists them; ids from "
            "searches across vaults are NAME:id). Default: every vault for the searches and status, else the "
            "vault a NAME:id names, else the first."
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

    def listing(self) -> VaultList:
        """The vaults served, by the names ``vault`` takes (the primary one as the default)."""
        from ..api import registry
        from ..results.vaults import VaultEntry, VaultList

        members = self.group.members if self.group else [Member(self.primary.root.name, self.primary)]
        return VaultList(
            str(registry.config_path()),
            [
                VaultEntry(m.name, str(m.vault.root), m.vault.root == self.primary.root, registry.status(m.vault.root))
                for m in members
            ],
        )

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
    """The MCP tools. Each method is a tool: its parameters and docstring are what the model reads; the
    command table's rows become tools beside them (``table_tool``). Writes run on ``served`` under
    ``lock``, one at a time; reads on a free reading lane (``add_lane``), else as the writes do."""

    def __init__(self, served: Served, lock: threading.Lock) -> None:
        self.served = served
        self.lock = lock
        self.lanes: Lanes[Served] = Lanes(served, lock)

    @property
    def lane_count(self) -> int:
        return self.lanes.count

    def add_lane(self, served: Served) -> bool:
        """A view of the same vault (a ``Vault`` of its own) that reads may run on beside the others."""
        return self.lanes.add(served)

    def call(self, fn: Callable[[Served], Any], *, write: bool = True) -> Any:
        """Run one vault call on a lane (``fn`` gets its ``Served``); library errors become tool errors."""
        with self.lanes.lane(write) as served:
            try:
                return fn(served)
            except MdmemError as exc:
                raise ToolError(str(exc)) from exc

    def answer(self, result: Any, **options: Any) -> CallToolResult:
        """The tool result for ``result`` (``render.mcp``), its warnings included."""
        text, data = render_mcp(result, **options)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)

    def table_tool(self, spec: Command) -> Callable[..., CallToolResult]:
        """The tool for a row of the command table: its MCP parameters (the filters spelled out; ``about``
        or ``help`` as their descriptions), ``vault``, and one call routed as every tool's is: a reader
        row to the vault ``vault`` names or the whole set, an "each" row without ``vault`` to the whole
        set, any other to the vault its note arguments (``NAME:REF``) or ``vault`` name."""
        shown = [p for p in spec.expanded() if p.mcp]
        params = [
            inspect.Parameter(
                p.name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=tool_type(p),
                **({} if p.required else {"default": None if p.many else p.mcp_default}),
            )
            for p in shown
        ]
        params.append(inspect.Parameter("vault", inspect.Parameter.KEYWORD_ONLY, annotation=Which, default=None))
        notes = [p.name for p in shown if p.note]
        many = {p.name for p in shown if p.many}
        # What the command line has and the tool has not (a display option, --commit) takes its default.
        fixed = {p.name: p.default for p in spec.expanded() if p.on == "cli" and not p.required}
        fixed.pop("vaults", None), fixed.pop("all_vaults", None)

        defaults = {p.name: None if p.many else p.mcp_default for p in shown if not p.required}

        write = spec.hints != "read"

        def run(**given: Any) -> CallToolResult:
            kwargs = {**defaults, **given}  # a direct call, as the SDK's, leaves out what it does not set
            which = kwargs.pop("vault", None)
            for name in many & kwargs.keys():  # the call takes a list as the command line gives it: a tuple
                kwargs[name] = tuple(_listed(kwargs[name]))
            view = spec.tool_view({**fixed, **kwargs}) if spec.tool_view else {}

            def on(served: Served) -> Any:
                target: Any
                given = dict(kwargs)
                if spec.target == "reader":
                    target = served.reader(which)
                elif spec.target == "each" and which is None and served.group is not None:
                    target = served.group
                else:
                    target, refs = served.route(which, *(given[n] for n in notes))
                    given.update(zip(notes, refs))
                args = {**fixed, **given}
                return spec.run(target, **(filters_of(args) if spec.takes_filters else args))

            return self.answer(self.call(on, write=write), **view)

        # The SDK reads a tool's parameters (names, types, descriptions) from its signature.
        run.__signature__ = inspect.Signature(params, return_annotation=CallToolResult)  # type: ignore[attr-defined]
        run.__name__, run.__doc__ = spec.tool_name, inspect.cleandoc(spec.about or spec.help)
        return run

    # -- reading ---------------------------------------------------------------------------------

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

        def read_all(served: Served) -> list[NoteText | MissingNote]:
            items: list[NoteText | MissingNote] = []
            for ref in notes:
                try:
                    v, (one,) = served.route(vault, ref)
                    items.append(v.read(one, max_chars))
                except ToolError as exc:
                    items.append(MissingNote(ref, str(exc)))
                except MdmemError as exc:
                    items.append(MissingNote(ref, str(exc)))
            return items

        return self.answer(NoteBatch(self.call(read_all, write=False)))

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
        supersedes: Annotated[
            str | None, Field(description="The note (id) this one replaces: it is archived and points to the new one.")
        ] = None,
        vault: Which = None,
    ) -> CallToolResult:
        """Save a new memory that will matter in a later session: one decision, preference, fact or lesson
        per note. Checks the vault first: ADD (written and committed), UPDATE (a near duplicate exists: the
        new text goes into that note instead, one commit; force=true writes a new note), NOOP (the same
        text is already there). An active note of the same type that it may contradict is named with the
        evidence: if the new one replaces it, call supersede (or pass supersedes next time). Secrets (keys,
        tokens, passwords) are redacted before writing."""
        clean_title, clean_body = redact(title), redact(body)
        report = self.call(
            lambda served: served.route(vault)[0].save(
                clean_title.text,
                clean_body.text,
                force=force,
                supersedes=supersedes,
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
        clean, clean_title = redact(body), redact(title) if title else None
        new_title = clean_title.text if clean_title else None

        def on(served: Served) -> Any:
            v, (ref,) = served.route(vault, note)
            return v.correct(ref, clean.text, title=new_title)

        done = self.call(on)
        return self.answer(replace(done, redacted=clean.count + (clean_title.count if clean_title else 0)))

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
        return self.answer(
            self.call(lambda served: import_path(served.route(vault)[0], source, dry_run=dry_run, book=book))
        )

    def reindex(
        self, full: Annotated[bool, Field(description="Rebuild from scratch.")] = False, vault: Which = None
    ) -> CallToolResult:
        """Bring the index up to date with the files now (edits made outside mdmem). Use when status
        says the index is stale or a note you just edited by hand is not found."""
        return self.answer(self.call(lambda served: served.route(vault)[0].reindex(full)))

    def vaults(self) -> CallToolResult:
        """The vaults this server serves: each one's name (what ``vault`` takes), folder and status. Use
        to pick a vault for a write, or to read one vault alone."""
        return self.answer(self.served.listing())


HINTS = {"read": READ_ONLY, "write": ADDITIVE, "idempotent": IDEMPOTENT}


def tool_type(p: Param) -> Any:
    """The annotated type the SDK makes a table parameter's schema from: a list also takes one string."""
    base: Any = str | list[str] if p.many else p.type
    if p.many or (not p.required and p.mcp_default is None):
        base = base | None
    field = Field(description=inspect.cleandoc(p.about or p.help), ge=p.low, le=p.mcp_high)
    return Annotated[base, field]


def _listed(v: Any) -> list[Any]:
    return [] if v is None else [v] if isinstance(v, str) else list(v)


def tools_of(tools: Tools) -> list[tuple[Callable[..., CallToolResult], ToolAnnotations]]:
    """Every tool with its annotations, in the order clients list them: the command table's, with the
    hand-written ones after the retrieval rows."""
    t = tools
    table = [(t.table_tool(c), HINTS[c.hints]) for c in COMMANDS if c.has_tool]
    hand: list[tuple[Callable[..., CallToolResult], ToolAnnotations]] = [
        (t.multi_get, READ_ONLY),
        (t.add, ADDITIVE),
        (t.correct, ADDITIVE),
        (t.import_memories, ADDITIVE),
        (t.reindex, IDEMPOTENT),
        (t.vaults, READ_ONLY),
    ]
    order = ("recall", "query", "search", "vsearch", "context")  # recall first: where a model should start
    retrieval = sorted((t for t in table if t[0].__name__ in order), key=lambda t: order.index(t[0].__name__))
    return retrieval + hand + [t for t in table if t[0].__name__ not in order]
