"""mdmem: long-term memory for AI agents and people, kept as markdown notes in git."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .version import __version__

__all__ = ["Vault", "Note", "Hit", "MdmemError", "__version__"]

if TYPE_CHECKING:
    from .errors import MdmemError
    from .note import Note
    from .vault import Hit, Vault


def __getattr__(name: str) -> Any:
    # Lazy, so "import mdmem" (and "mdmem --help") stays cheap.
    if name in ("Vault", "Hit"):
        from . import vault

        return getattr(vault, name)
    if name == "Note":
        from .note import Note

        return Note
    if name == "MdmemError":
        from .errors import MdmemError

        return MdmemError
    raise AttributeError(f"module 'mdmem' has no attribute {name!r}")
