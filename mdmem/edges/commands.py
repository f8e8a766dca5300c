"""The command table: commands that are one ``Vault`` call, described once and built twice — as a
click command by the CLI (``cli.table_command``) and as an MCP tool by the server
(``mcp_server.table_tool``). A row names the command, its parameters (what a person reads in
``--help`` and, unless ``about`` says otherwise, what the model reads), the call and the tool's
safety hints. Adding such a command is a row here, a ``Vault`` method, its feature, its result type
and the result's text in ``render``; commands with options of their own (search, add, import, …)
are written by hand in ``cli/`` and ``mcp_server``.

Data and plain functions only: the CLI reads this table on every start.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..core.schema import INCLUDE_CHOICES

if TYPE_CHECKING:
    from ..api.vault import Vault

REQUIRED: Any = ...  # a parameter without a default: a positional argument on the command line
Hints = Literal["read", "write", "idempotent"]  # the MCP tool's annotations: read-only, additive, idempotent


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a command (a CLI argument or option, an MCP tool argument)."""

    name: str
    help: str  # what --help says; also what the model reads unless ``about`` is given
    type: type = str  # str, int or bool
    default: Any = REQUIRED
    about: str = ""  # the model's description, where it differs from ``help``
    low: int | None = None  # an int's range, both sides included
    high: int | None = None
    choices: tuple[str, ...] = ()
    many: bool = False  # a list: a repeatable option, an array for MCP
    flag: str = ""  # the option's spelling, e.g. "-d/--depth" (default: --NAME with _ as -)
    metavar: str = ""  # how --help writes the value, e.g. "DATE" or, for an argument, "A"
    note: bool = False  # names a note: NAME:REF picks the registered vault NAME
    words: bool = False  # on the command line, the rest of the words, joined by spaces
    cli: bool = True  # a command-line parameter (False: MCP only)
    mcp: bool = True  # an MCP argument (False: CLI only, e.g. a display option)
    render: bool = False  # passed to the renderer, not to the call

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True, slots=True)
class Command:
    """A command that is one ``Vault`` call: ``run(vault, **params)`` returns its result."""

    name: str
    run: Callable[..., Any]
    help: str  # the CLI's --help (its first sentence is the summary in ``mdmem --help``)
    about: str  # the MCP tool's description: what it does and when a model should use it
    params: tuple[Param, ...] = ()
    hints: Hints = "read"
    tool: str = ""  # the MCP tool's name where it differs from ``name``


def include_param() -> Param:
    return Param(
        "include",
        "Also show notes hidden by default (repeatable).",
        many=True,
        default=(),
        choices=INCLUDE_CHOICES,
        about="Also show notes hidden by default: forgotten, archived, snoozed, expired.",
    )


def as_of_param() -> Param:
    return Param(
        "as_of",
        "Judge snoozes and validity at DATE instead of today.",
        default=None,
        metavar="DATE",
        about="Judge snoozes and validity at this day (YYYY-MM-DD) instead of today.",
    )


NOTE = Param(
    "note",
    "The note: id, path, file name, title or alias.",
    note=True,
    about="The note: its id (from a search result), path, file name, title or alias.",
)
EXPLAIN_LINKS = Param(
    "explain",
    "Say how each target was found (path, suffix, nearest file name, …) and which "
    "files shared its name (--json always has it).",
    type=bool,
    default=False,
    mcp=False,
    render=True,
)


def _links(v: Vault, note: str) -> Any:
    return v.links(note)


def _backlinks(v: Vault, note: str) -> Any:
    return v.backlinks(note)


def _path(v: Vault, source: str, target: str, types: tuple[str, ...] = (), max_depth: int | None = None) -> Any:
    return v.shortest_path(source, target, types=list(types), max_depth=max_depth)


def _entity(v: Vault, name: str, include: tuple[str, ...] = (), as_of: str | None = None) -> Any:
    return v.entity(name, include=list(include), as_of=as_of)


def _refs(v: Vault, note: str) -> Any:
    return v.refs(note)


def _cites(v: Vault, ref: str, include: tuple[str, ...] = (), as_of: str | None = None) -> Any:
    return v.cites(ref, include=list(include), as_of=as_of)


def _person(v: Vault, name: str, include: tuple[str, ...] = (), as_of: str | None = None) -> Any:
    return v.person(name, include=list(include), as_of=as_of)


def _status(v: Vault) -> Any:
    return v.status()


def _profile(v: Vault, budget: int = 600, scope: str | None = None) -> Any:
    return v.profile(budget, scope=scope)


COMMANDS: tuple[Command, ...] = (
    Command(
        "links",
        _links,
        params=(NOTE, EXPLAIN_LINKS),
        help="""Edges out of NOTE, one row per linked note and type: typed frontmatter links (with reasons),
        [[wikilinks]], embeds and markdown links in the body (mentions, with how many and the first line
        that has one), supersedes, and the entities it is about. Links resolve as Obsidian resolves
        them; attachments are listed, and dangling links and missing attachments are marked.""",
        about="""The links out of a memory: typed frontmatter links (with reasons), body mentions, what it
        supersedes, its entities. Use to see what a note depends on or points to.""",
    ),
    Command(
        "backlinks",
        _backlinks,
        params=(Param("note", "A note (id, path, title, alias) or an entity.", note=True), EXPLAIN_LINKS),
        help="""Notes that link to NOTE (or an entity), one row per note and type, with how many links and
        the first line that has one.""",
        about="""The memories that link to a note or mention an entity. Use to see what depends on a note
        before changing or forgetting it.""",
    ),
    Command(
        "path",
        _path,
        params=(
            Param("source", "The note the path starts from.", note=True, metavar="A"),
            Param("target", "The note it ends at.", note=True, metavar="B"),
            Param(
                "types",
                "Follow only edges of this type (repeatable), e.g. caused_by, mentions, about.",
                many=True,
                default=(),
                flag="--type",
                metavar="TYPE",
            ),
            Param("max_depth", "Give up beyond this many hops.", type=int, default=None, low=1),
        ),
        help="""The shortest chain of edges between notes A and B (edges followed either way; each step
        shows its own direction, type and reason).""",
        about="The fewest links between two memories, in either direction. Use to see how two things relate.",
    ),
    Command(
        "entity",
        _entity,
        params=(
            Param("name", "A person, system or product, or one of its aliases.", words=True),
            include_param(),
            as_of_param(),
        ),
        help="""Everything about an entity (a person, system, project) under any of its names: its own note,
        notes that list it in `entities`, notes linking to it, and notes that mention it.""",
        about="""Everything about an entity: its own note, notes about it, links and mentions. Use for "who is
        …", "what do we know about …".""",
    ),
    Command(
        "refs",
        _refs,
        params=(NOTE,),
        help="""What NOTE cites outside the vault: its `refs:` (URLs, e-mail addresses, tickets such as
        PAY-1234, DOIs, file paths, ids such as github:alice) and the URLs and e-mail addresses in its
        body (not in code). Each with its kind, canonical value, as written, and where it is written.""",
        about="""What a note cites outside the vault: URLs, e-mail addresses, tickets (PAY-1234), DOIs, file
        paths, from its refs and its body, each with kind and canonical value. Use to follow a memory to
        its sources.""",
    ),
    Command(
        "cites",
        _cites,
        params=(
            Param("ref", "A URL, e-mail address, ticket such as PAY-1234, DOI or file path, in any written form."),
            include_param(),
            as_of_param(),
        ),
        help="""The notes that cite REF — a URL, e-mail address, ticket, DOI or path — however each wrote it.

        \b
        http and https, www., a trailing slash, a #fragment and the host's case do not matter; nor does
        an e-mail address's case; tickets match in any case (pay-1234 is PAY-1234); a DOI as doi:10.x
        or https://doi.org/10.x. File paths match as written.""",
        about="""The notes that cite a URL, ticket, e-mail address, DOI or path, however each wrote it
        (http/https, www., trailing slash and case do not matter). Use for "what do we know about PAY-1234"
        or "where did we use this page".""",
    ),
    Command(
        "person",
        _person,
        params=(
            Param("name", "Someone's name, e-mail address or handle (@alice, github:alice).", words=True),
            include_param(),
            as_of_param(),
        ),
        help="""Who NAME is — by any identity: a name, e-mail address, @handle or service:handle — from their
        person note (`type: person`, `identities: [...]`): identities, summary, the notes that mention
        them (in `entities`, a link, or an e-mail in `refs:` or the body) and their timeline.""",
        about="""Who someone is: their person note (identities, summary), the notes that mention any of their
        names, e-mail addresses or handles, and their timeline. Use for "who is …" and "what did … do".""",
    ),
    Command(
        "status",
        _status,
        help="Note counts, index freshness (what the index lacks, or a background catch-up) and the last "
        "indexed commit.",
        about="""Vault health: notes by type, index freshness, vector coverage, git state, problems. Use when
        results look stale or empty.""",
    ),
    Command(
        "profile",
        _profile,
        params=(
            Param(
                "budget",
                "Most tokens to return (estimated, ~4 characters a token).",
                type=int,
                default=600,
                low=50,
                high=100_000,
            ),
            Param(
                "scope", "This scope's notes and handoffs (global notes always qualify).", default=None, metavar="SCOPE"
            ),
        ),
        help="""What an agent starting cold should know, within a token budget, in two labelled sections.

        \b
        Standing facts: pinned notes, preferences and facts of salience 0.7+, notes tagged identity
        or convention. Recent context: the latest handoffs, active decisions, open problems.
        The same vault gives the same answer (fixed order); --json lists each note and its section.""",
        about="""Who the user is and where things stand, in one call: standing facts (pinned rules, important
        preferences and facts, conventions) and recent context (latest handoffs, active decisions, open
        problems), within a token budget. Call it once when a session starts cold, before recall.""",
    ),
)

BY_NAME: dict[str, Command] = {c.name: c for c in COMMANDS}
