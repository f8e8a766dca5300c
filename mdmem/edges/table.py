"""The command table's parts: a row (``Command``), its parameters (``Param``) and the ones rows share
(the retrieval filters, the limit, the vaults, the note, commit). The rows are in ``rows_find`` and
``rows_keep``; ``commands`` is the table.

Data and plain functions only: the CLI reads this on every start.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Literal

from ..core.schema import FilterArgs

REQUIRED: Any = ...  # a parameter without a default: a positional argument on the command line
SAME: Any = ...  # an MCP default or bound that is the command line's
Hints = Literal["read", "write", "idempotent"]  # the MCP tool's annotations: read-only, additive, idempotent
# What ``run`` is given: the one vault; a reader (a vault or a set: on MCP the vault ``vault`` names, as a
# set of one so its ids say their vault, else the whole set); or "each": a set's vaults each, else the one.
Target = Literal["vault", "reader", "each"]


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a command (a CLI argument or option, an MCP tool argument)."""

    name: str
    help: str  # what --help says; also what the model reads unless ``about`` is given
    type: type = str  # str, int, float or bool
    default: Any = REQUIRED
    about: str = ""  # the model's description, where it differs from ``help``
    low: int | None = None  # a number's range, both sides included
    high: int | None = None
    choices: tuple[str, ...] = ()
    many: bool = False  # a list: a repeatable option, an array for MCP
    flag: str = ""  # the option's spelling, e.g. "-d/--depth" (default: --NAME with _ as -)
    metavar: str = ""  # how --help writes the value, e.g. "DATE" or, for an argument, "A"
    # "note": names a note (NAME:REF picks the registered vault NAME); "words": on the command line the
    # rest of the words, joined by spaces; "argument": a positional argument even with a default.
    kind: Literal["", "note", "words", "argument"] = ""
    # Where it is: "both"; "cli" (a command-line option only, e.g. --commit); "mcp" (a tool argument only,
    # e.g. a form agents already use); "render" (a display option: the CLI's renderer takes it, not the call).
    on: Literal["both", "cli", "mcp", "render"] = "both"
    tool_default: Any = SAME  # the tool's default where an agent's differs (a shorter list)
    tool_high: int | None = SAME  # the tool's upper bound where an agent's is tighter (its context)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def note(self) -> bool:
        return self.kind == "note"

    @property
    def words(self) -> bool:
        return self.kind == "words"

    @property
    def cli(self) -> bool:
        return self.on != "mcp"

    @property
    def mcp(self) -> bool:
        return self.on in ("both", "mcp")

    @property
    def render(self) -> bool:
        return self.on == "render"

    @property
    def positional(self) -> bool:
        """Whether the command line takes it as an argument (in order) rather than an option."""
        return self.required or self.kind in ("words", "argument")

    @property
    def mcp_default(self) -> Any:
        return self.default if self.tool_default is SAME else self.tool_default

    @property
    def mcp_high(self) -> int | None:
        return self.high if self.tool_high is SAME else self.tool_high


@dataclass(frozen=True, slots=True)
class Command:
    """A command: ``run(target, **params)`` returns its result, ``target`` being the one vault
    (``target="vault"``, a note argument ``NAME:REF`` picking vault NAME) or a reader (``"reader"``,
    ``"each"``: the vault, the set ``--vaults`` names, or on MCP the set the server serves)."""

    name: str
    run: Callable[..., Any]
    help: str  # the CLI's --help (its first sentence is the summary in ``mdmem --help``)
    about: str  # the MCP tool's description: what it does and when a model should use it
    params: tuple[Param, ...] = ()  # FILTERS among them: the nine retrieval filters there
    hints: Hints = "read"
    tool: str = ""  # the MCP tool's name where it differs from ``name``; "-": no tool (``why_not``)
    target: Target = "vault"
    served: bool = False  # on the command line with one vault, a running ``mdmem serve`` is asked
    color: bool = False  # the CLI's text may colour (on a terminal)
    cli_view: Callable[[dict[str, Any]], dict[str, Any]] | None = None  # renderer options from the arguments
    tool_view: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    cli_json: Callable[[Any], Any] | None = None  # what --json prints where it is a part of the result
    why_not: str = ""  # why there is no MCP tool (with ``tool="-"``)

    @property
    def tool_name(self) -> str:
        return self.tool or self.name

    @property
    def has_tool(self) -> bool:
        return self.tool != "-"

    @property
    def takes_filters(self) -> bool:
        return any(p is FILTERS for p in self.params)

    def expanded(self) -> tuple[Param, ...]:
        """The parameters with ``FILTERS`` spelled out: one per ``FilterArgs`` field, in its order."""
        return tuple(q for p in self.params for q in (FILTER_PARAMS if p is FILTERS else (p,)))


# -- the shared parameters -------------------------------------------------------------------------

FILTERS = Param("filters", "The retrieval filters (``FilterArgs``).")  # a marker: spelled out where it stands
FILTER_PARAMS: tuple[Param, ...] = tuple(
    Param(
        f.name,
        f.metadata["help"],
        default=f.default,
        about=f.metadata["about"],
        many=f.default == (),
        metavar=f.metadata["metavar"],
        choices=f.metadata["choices"],
    )
    for f in fields(FilterArgs)
)
FILTER_NAMES = frozenset(p.name for p in FILTER_PARAMS)


def filters_of(args: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments with the filter parameters among ``args`` gathered into ``filters``."""
    given = {k: args.pop(k) for k in FILTER_NAMES & args.keys()}
    return {**args, "filters": FilterArgs.of(**given)}


def words(name: str, help: str, about: str = "", metavar: str = "") -> Param:
    """A text argument: the rest of the words on the command line, a string for MCP."""
    return Param(name, help, kind="words", about=about, metavar=metavar)


def limit(default: int, high: int, help: str, low: int = 1, tool_default: Any = SAME, tool_high: Any = SAME) -> Param:
    return Param(
        "limit",
        help,
        type=int,
        default=default,
        low=low,
        high=high,
        flag="-n/--limit",
        tool_default=tool_default,
        tool_high=tool_high,
        about="Most results to return." if tool_high is not SAME else "",
    )


def flag(name: str, help: str, about: str = "", *, spelled: str = "") -> Param:
    """A yes/no option, off by default."""
    return Param(name, help, type=bool, default=False, about=about, flag=spelled)


def vaults_params(search: str, every: str) -> tuple[Param, Param]:
    """--vaults and --all-vaults: answer from several vaults, merged on one scale (on MCP: the server's
    set, or ``vault``)."""
    return (
        Param("vaults", search, default=None, metavar="NAME,…", on="cli"),
        Param("all_vaults", every, type=bool, default=False, on="cli"),
    )


SEARCH_VAULTS = vaults_params(
    "Search these vaults (names or folders, comma-separated), merged on one scale; "
    "each hit names its vault and its id is NAME:id.",
    'Search every vault "mdmem vaults" lists, merged on one scale.',
)
COMMIT = Param(
    "commit",
    "Commit the change [default: mdmem.toml [git] commit, else yes].",
    type=bool,
    default=None,
    flag="--commit/--no-commit",
    on="cli",  # an agent's writes follow mdmem.toml
)
NOTE = Param(
    "note",
    "The note: id, path, file name, title or alias.",
    kind="note",
    about="The note: its id (from a search result), path, file name, title or alias.",
)


def include_param() -> Param:
    return next(p for p in FILTER_PARAMS if p.name == "include")


def as_of_param() -> Param:
    return next(p for p in FILTER_PARAMS if p.name == "as_of")
