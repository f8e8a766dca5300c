"""Errors the library raises; the CLI turns each into a one-line message (exit 1)."""

from __future__ import annotations


class MdmemError(Exception):
    """Base class: a problem the user can fix; the message says what to do next."""


class VaultNotFound(MdmemError):
    """No vault at or above the given path."""


class NoteNotFound(MdmemError):
    """A note reference matched nothing; carries suggestions."""

    def __init__(self, ref: str, suggestions: list[str] | None = None) -> None:
        self.ref = ref
        self.suggestions = suggestions or []
        msg = f"No note matches {ref!r}."
        if self.suggestions:
            msg += " Did you mean: " + ", ".join(self.suggestions) + "?"
        else:
            import shlex

            msg += f' Try "mdmem search {shlex.quote(ref)}" to find it.'
        super().__init__(msg)


class AmbiguousNote(MdmemError):
    """A note reference matched several notes."""

    def __init__(self, ref: str, candidates: list[str]) -> None:
        self.ref = ref
        self.candidates = candidates
        super().__init__(
            f"{ref!r} matches {len(candidates)} notes: " + ", ".join(candidates)
            + ". Use the id or the path to pick one."
        )


class LockHeld(MdmemError):
    """Another process is writing the index."""


class CommitFailed(MdmemError):
    """Git refused a commit of files mdmem had written and indexed (they stay on disk)."""


class ConfigError(MdmemError):
    """mdmem.toml or an MDMEM_* variable is invalid."""


class IndexError_(MdmemError):
    """The index could not be read or written."""
