"""The MCP server over several vaults (issue 16): ``mdmem mcp --vaults a,b`` or ``--all-vaults``.

The tools are ``mcp_server.Tools``' own, each with one more optional argument, ``vault`` (a name of
the set). Without it, recall, query, search, vsearch and context answer from every vault of the set,
merged on one scale (``vault_set``); their hits' ids are ``NAME:id``, and a note argument written so
goes to vault NAME. Any other call goes to the primary vault: the one ``--vault`` (or the current
folder) names when it is in the set, else the set's first; that is where ``add`` writes unless told
otherwise. With ``vault`` given, recall and the rest answer from that vault alone, ids still
qualified. Without ``--vaults`` the server serves one vault, as before.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field

from ..api.vault_set import Member, VaultSet, split_ref
from ..core.errors import MdmemError
from ..results import MissingNote, NoteBatch, NoteText, note_doc
from .mcp_server import Tools

if TYPE_CHECKING:
    from ..api.vault import Vault

SET_TOOLS = frozenset({"recall", "query", "search", "vsearch", "context"})  # answer from the whole set
NOTE_ARGS = ("note", "source", "target")  # arguments that name a note (NAME:REF picks the vault)


class SetView:
    """A vault set as the retrieval tools see a vault: its reads, and the attributes ``Tools.call`` reads."""

    def __init__(self, group: VaultSet) -> None:
        self.group = group
        self.warnings: list[str] = []
        self.index_warning: str | None = None

    def __getattr__(self, name: str) -> Any:
        if name in SET_TOOLS:
            return getattr(self.group, name)
        raise AttributeError(name)


class SetTools(Tools):
    """``Tools`` over a set of vaults: every tool takes ``vault``; recall and the other reads span the set."""

    def __init__(self, group: VaultSet, primary: Member, lock: threading.Lock) -> None:
        self.group = group
        self.primary = primary.vault
        self.views = {m.name: SetView(VaultSet([m])) for m in group.members}
        self.whole = SetView(group)
        group.share_models()  # one model for the set, before the warm-up loads it
        super().__init__(primary.vault, lock)

    @property
    def vault(self) -> Any:
        """The vault (or ``SetView``) this thread's tool call was routed to, else the primary vault."""
        return getattr(self.local, "target", None) or self.primary

    @vault.setter
    def vault(self, value: Vault) -> None:
        self.primary = value

    def tool(self, name: str) -> Callable[..., CallToolResult]:
        """Tool ``name`` with the ``vault`` argument: the call is routed (``route``), then run as one vault's."""
        fn = super().tool(name)
        sig = inspect.signature(fn, eval_str=True)
        extra = inspect.Parameter("vault", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
            str | None, Field(description=f"Which vault: one of {', '.join(self.group.names)}. "
                              + ("Default: all of them, merged." if name in SET_TOOLS else
                                 "Default: the vault a NAME:id names, else the first."))])

        def run(**kwargs: Any) -> CallToolResult:
            target = self.route(name, kwargs.pop("vault", None), kwargs)
            self.local.target = target
            try:
                return fn(**kwargs)
            finally:
                self.local.target = None

        run.__signature__ = sig.replace(parameters=[*sig.parameters.values(), extra])  # type: ignore[attr-defined]
        run.__name__, run.__doc__ = name, fn.__doc__
        return run

    def route(self, tool: str, which: str | None, kwargs: dict[str, Any]) -> Any:
        """Where a call goes: ``vault`` if given; else the vault a ``NAME:REF`` note argument names (its
        prefix dropped); else the whole set for the reads, the primary vault for the rest."""
        if which is not None:
            try:
                member = self.group.member(which)
            except MdmemError as exc:
                raise ToolError(str(exc)) from exc
            return self.views[member.name] if tool in SET_TOOLS else member.vault
        named = {}
        for key in NOTE_ARGS:
            value = kwargs.get(key)
            split = split_ref(value, self.group.names) if isinstance(value, str) else None
            if split is not None:
                named[key] = split
        if len({n for n, _ in named.values()}) > 1:
            where = ", ".join(f"{k}: {n}" for k, (n, _) in named.items())
            raise ToolError(f"The notes are in different vaults ({where}); a link or a path stays within one vault.")
        if named:
            kwargs.update({k: ref for k, (_, ref) in named.items()})
            return self.group.member(next(iter(named.values()))[0]).vault
        return self.whole if tool in SET_TOOLS else None

    def multi_get(self, notes: Annotated[list[str], Field(min_length=1, max_length=50, description=(
                      "Note ids (NAME:id from a search across vaults), paths, file names, titles or aliases."))],
                  max_chars: Annotated[int, Field(ge=200, le=100_000, description=(
                      "Cut each note after this many characters."))] = 4000) -> CallToolResult:
        """Several whole notes in one call (e.g. the top hits of a recall), from any vault of the set (an
        id NAME:id names its vault). A note that cannot be found is reported; the others are returned."""
        chosen = getattr(self.local, "target", None)
        items: list[NoteText | MissingNote] = []
        for ref in notes:
            split = split_ref(ref, self.group.names)
            vault = self.group.member(split[0]).vault if split else (chosen or self.primary)
            try:
                items.append(self.call(lambda v=vault, r=split[1] if split else ref: whole_note(v, r, max_chars)))
            except ToolError as exc:
                items.append(MissingNote(ref, str(exc)))
        return self.answer(NoteBatch(items), warn=False)


def whole_note(vault: Vault, ref: str, max_chars: int) -> NoteText:
    """A note's file, cut after ``max_chars``, with its parsed fields."""
    n = vault.get(ref)
    text = vault.files.safe_path(n.path).read_text(encoding="utf-8", errors="replace")
    return NoteText.cut(note_doc(n, vault.dates(n)), text, max_chars)


def set_tools(group: VaultSet, primary: Member) -> Callable[[threading.Lock], Tools]:
    """What ``mcp_server.create_server`` takes to serve ``group`` (``make_tools``)."""
    return lambda lock: SetTools(group, primary, lock)


def primary_member(group: VaultSet, vault: Vault | None) -> Member:
    """The set's member that is ``vault`` (the one --vault or the current folder names), else the first."""
    for m in group.members:
        if vault is not None and m.vault.root == vault.root:
            return m
    return group.members[0]
