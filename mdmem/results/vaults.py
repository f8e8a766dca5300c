"""Named vaults (``mdmem vaults``): the user's list of vaults and what a change to it did."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Result


@dataclass(frozen=True, slots=True)
class VaultEntry(Result):
    """One named vault: its absolute path, whether it is the default, and ``status``: ``ok`` (a vault),
    ``missing folder`` or ``not a vault yet`` (a folder without mdmem.toml or .mdmem/)."""

    name: str
    path: str
    default: bool
    status: str


@dataclass(frozen=True, slots=True)
class VaultList(Result):
    """The named vaults in the user's config file (``config``, which need not exist yet)."""

    config: str
    vaults: list[VaultEntry]


@dataclass(frozen=True, slots=True)
class VaultChange(Result):
    """What ``vaults add``, ``remove`` or ``default`` did (``action``: added, removed, default) to ``vault``;
    no vault's files are touched, only ``config``."""

    action: str
    vault: VaultEntry
    config: str
