"""mdmem: long-term memory for AI agents and people, kept as markdown notes in git."""

from __future__ import annotations

from .core.version import __version__

TYPE_CHECKING = False  # not typing's: importing typing is a fifth of what a served prompt hook costs

__all__ = ["Vault", "Note", "Hit", "MdmemError", "__version__"]

if TYPE_CHECKING:
    from typing import Any

    from .api.vault import Vault
    from .core.errors import MdmemError
    from .core.note import Note
    from .results.search import Hit


def __getattr__(name: str) -> Any:
    # Lazy, so "import mdmem" (and "mdmem --help") stays cheap.
    if name == "Vault":
        from .api.vault import Vault

        return Vault
    if name == "Hit":
        from .results.search import Hit

        return Hit
    if name == "Note":
        from .core.note import Note

        return Note
    if name == "MdmemError":
        from .core.errors import MdmemError

        return MdmemError
    raise AttributeError(f"module 'mdmem' has no attribute {name!r}")
