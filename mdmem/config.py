"""Vault settings from ``mdmem.toml`` and ``MDMEM_*`` variables. Data only: no setting can run code."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError

CONFIG_FILE = "mdmem.toml"


@dataclass(frozen=True, slots=True)
class Config:
    """Settings of one vault."""

    exclude: tuple[str, ...] = ()  # glob patterns (vault-relative) that are not notes
    notes_dir: str = "notes"  # where `mdmem add` writes new notes
    git_commit: bool = True  # mutating commands commit the files they write
    lock_timeout: float = 30.0  # seconds a writer waits for another writer
    extra: dict[str, object] = field(default_factory=dict)


def load_config(root: Path) -> Config:
    """Read ``mdmem.toml`` (optional) and apply ``MDMEM_*`` overrides."""
    data: dict[str, object] = {}
    path = root / CONFIG_FILE
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: {exc}. Fix the TOML syntax or delete the file.") from exc
    vault = data.get("vault", {}) if isinstance(data.get("vault"), dict) else {}
    git = data.get("git", {}) if isinstance(data.get("git"), dict) else {}
    exclude = vault.get("exclude", [])  # type: ignore[union-attr]
    if not isinstance(exclude, list) or not all(isinstance(e, str) for e in exclude):
        raise ConfigError(f"{path}: [vault] exclude must be a list of glob strings.")
    notes_dir = str(vault.get("notes_dir", "notes")).strip("/")  # type: ignore[union-attr]
    if ".." in Path(notes_dir).parts or Path(notes_dir).is_absolute():
        raise ConfigError(f"{path}: [vault] notes_dir must be a folder inside the vault.")
    commit = git.get("commit", True)  # type: ignore[union-attr]
    if not isinstance(commit, bool):  # bool("no") is True
        raise ConfigError(f"{path}: [git] commit must be true or false, got {commit!r}.")
    if os.environ.get("MDMEM_GIT_COMMIT"):
        commit = os.environ["MDMEM_GIT_COMMIT"].lower() not in ("0", "false", "no", "off")
    try:
        timeout = float(os.environ.get("MDMEM_LOCK_TIMEOUT", vault.get("lock_timeout", 30.0)))  # type: ignore[union-attr, arg-type]
    except ValueError as exc:
        raise ConfigError(f"MDMEM_LOCK_TIMEOUT must be a number of seconds: {exc}") from exc
    if not 0.0 <= timeout < 86400:  # also refuses nan and inf: a writer would wait forever
        raise ConfigError(f"{path}: [vault] lock_timeout must be a number of seconds from 0 to 86400, got {timeout}.")
    return Config(exclude=tuple(exclude), notes_dir=notes_dir, git_commit=bool(commit),
                  lock_timeout=timeout, extra=data)
