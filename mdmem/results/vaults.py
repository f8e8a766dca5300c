"""Named vaults (``mdmem vaults``): the user's list of vaults and what a change to it did."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import Answer, Result


@dataclass(frozen=True, slots=True)
class VaultEntry(Result):
    """One named vault: its absolute path, whether it is the default, and ``status``: ``ok`` (a vault),
    ``missing folder`` or ``not a vault yet`` (a folder without mdmem.toml or .mdmem/)."""

    name: str
    path: str
    default: bool
    status: str
    personal: bool = False  # the prompt hook's personal vault (in the JSON only when true)

    def data(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "path": self.path, "default": self.default, "status": self.status}
        if self.personal:
            d["personal"] = True
        return d


@dataclass(frozen=True, slots=True)
class VaultList(Answer):
    """The named vaults in the user's config file (``config``, which need not exist yet)."""

    config: str
    vaults: list[VaultEntry]


@dataclass(frozen=True, slots=True)
class VaultChange(Answer):
    """What ``vaults add``, ``remove``, ``default`` or ``personal`` did (``action``: added, removed, default,
    personal, unset: no personal vault now) to ``vault``;
    no vault's files are touched, only ``config``."""

    action: str
    vault: VaultEntry
    config: str
