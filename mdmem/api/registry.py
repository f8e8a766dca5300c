"""Named vaults: the user's own list of vaults by name, with a default.

The file is ``$MDMEM_CONFIG``, else ``$XDG_CONFIG_HOME/mdmem/vaults.toml``, else
``~/.config/mdmem/vaults.toml``::

    default = "work"
    personal = "me"

    [vaults]
    work = "/home/me/notes"
    me = "/home/me/memory"

It is read with ``tomllib`` and written by hand (no TOML writer dependency), atomically, and read back
before it replaces the old file. A file mdmem cannot read is an error naming the file and the fix; it
is never rewritten. ``--vault`` and ``$MDMEM_VAULT`` take a name or a path (``resolve``); without them
the vault at or above the current folder comes first, then the default (``default_vault``). The
``personal`` vault (``personal_vault``) is the one the prompt hook searches beside the project's.

The agent hooks import this module on every prompt: it imports nothing heavy at the top.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..adapters.plain import read_small
from ..core.errors import ConfigError, VaultNotFound

if TYPE_CHECKING:
    from ..results.vaults import VaultChange, VaultEntry, VaultList

NAME = re.compile(r"[A-Za-z0-9_-]+\Z")
FIX = "fix the file by hand or move it away (mdmem leaves it as it is)"
OK, MISSING, NOT_YET = "ok", "missing folder", "not a vault yet"


def config_path() -> Path:
    """Where the user's list of vaults lives (it need not exist)."""
    if given := os.environ.get("MDMEM_CONFIG"):
        return Path(given).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg and os.path.isabs(os.path.expanduser(xdg)) else Path.home() / ".config"
    return base / "mdmem" / "vaults.toml"


class Registry:
    """The named vaults (name → absolute path, in the file's order) and the default's name, from ``path``."""

    __slots__ = ("default", "path", "personal", "vaults")

    def __init__(
        self, path: Path, vaults: dict[str, str] | None = None, default: str | None = None, personal: str | None = None
    ) -> None:
        self.path = path
        self.vaults = dict(vaults or {})
        self.default = default
        self.personal = personal

    def get(self, name: str) -> str:
        """The path registered as ``name``; an error listing the names when there is none."""
        if name not in self.vaults:
            known = ", ".join(self.vaults) or "none yet"
            raise ConfigError(
                f"No vault named {name!r} (registered: {known}). "
                '"mdmem vaults" lists them; "mdmem vaults add NAME PATH" adds one.'
            )
        return self.vaults[name]


def check_name(name: str) -> str:
    if not NAME.match(name):
        raise ConfigError(f'A vault name takes letters, digits, "-" and "_"; {name!r} has others.')
    return name


MAX_BYTES = 1 << 20  # a list of vaults is a few hundred bytes; more is not one


def load(path: Path | None = None) -> Registry:
    """The registry in ``path`` (default: ``config_path()``); empty when the file does not exist. Only a
    plain file is read (a link to one is fine): a FIFO there blocked every command, /dev/zero never ended."""
    import tomllib

    path = path or config_path()
    try:
        text = read_small(path, MAX_BYTES, follow=True, errors="strict")  # a FIFO cannot hang it
    except FileNotFoundError:
        return Registry(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read {path} ({exc}); {FIX}.") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); {FIX}.") from exc
    return parse(path, data)


@contextmanager
def _editing() -> Iterator[Registry]:
    """The registry, read under a lock that every writer takes (``vaults.toml.lock`` beside it), so that
    concurrent ``vaults add`` keep every name (6–8 at once all said "Added"; 1–3 stayed in the file)."""
    from ..adapters.locks import flock_within

    path = config_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        raise ConfigError(f"Cannot lock {path} for writing ({exc}); {FIX}.") from exc
    try:
        if not flock_within(fd, LOCK_WAIT, poll=0.02):
            raise ConfigError(f"Another mdmem process is changing {path}; try again in a moment.")
        yield load(path)
    finally:
        os.close(fd)


LOCK_WAIT = 10.0  # seconds a change of the list waits for another one


def parse(path: Path, data: dict[str, object]) -> Registry:
    """The registry ``data`` describes, checked: known keys, good names, absolute paths, a registered default."""

    def bad(problem: str) -> ConfigError:
        return ConfigError(f"{path}: {problem}; {FIX}.")

    unknown = sorted(set(data) - {"default", "personal", "vaults"})
    if unknown:
        raise bad(f'unknown key {unknown[0]!r} (mdmem reads "default", "personal" and a [vaults] table)')
    vaults = data.get("vaults", {})
    if not isinstance(vaults, dict):
        raise bad('"vaults" must be a table of name = "absolute path"')
    for name, where in vaults.items():
        if not NAME.match(name):
            raise bad(f'vault name {name!r} may only have letters, digits, "-" and "_"')
        if not isinstance(where, str) or not os.path.isabs(where):
            raise bad(f"vault {name!r} must be an absolute path in quotes")
    default = data.get("default")
    if default is not None and (not isinstance(default, str) or default not in vaults):
        raise bad(f"default {default!r} is not a vault of the [vaults] table")
    personal = data.get("personal")
    if personal is not None and (not isinstance(personal, str) or personal not in vaults):
        raise bad(f"personal {personal!r} is not a vault of the [vaults] table")
    return Registry(path, vaults, default, personal)


def dumps(reg: Registry) -> str:
    """The file's text for ``reg`` (TOML basic strings: JSON's escapes are TOML's, DEL added)."""
    import json

    def quoted(s: str) -> str:
        return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")

    lines = ['# mdmem\'s named vaults: "mdmem vaults" lists them; add, remove and default change this file.', ""]
    if reg.default is not None:
        lines += [f"default = {quoted(reg.default)}", ""]
    if reg.personal is not None:
        lines += [f"personal = {quoted(reg.personal)}", ""]
    lines.append("[vaults]")
    lines += [f"{check_name(name)} = {quoted(where)}" for name, where in reg.vaults.items()]
    return "\n".join(lines) + "\n"


def save(reg: Registry) -> None:
    """Write ``reg`` to its file atomically (temp file + rename), after reading the text back."""
    import tomllib

    from ..adapters.files import atomic_write

    text = dumps(reg)
    try:
        back = parse(reg.path, tomllib.loads(text))
        same = back.vaults == reg.vaults and back.default == reg.default and back.personal == reg.personal
    except (tomllib.TOMLDecodeError, ConfigError):
        same = False
    if not same:  # a path TOML cannot hold (e.g. bytes that are not UTF-8)
        raise ConfigError(f"Cannot write these vaults to {reg.path} as TOML; use plainer folder names.")
    try:
        reg.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(reg.path, text)
    except (OSError, UnicodeEncodeError) as exc:
        raise ConfigError(f"Cannot write {reg.path} ({exc}).") from exc


def absolute(path: str | os.PathLike[str]) -> str:
    """``path`` as it is stored: user expanded, absolute, symlinks resolved (it need not exist)."""
    return str(Path(path).expanduser().resolve())


def status(path: str | os.PathLike[str]) -> str:
    """``ok`` (a vault: mdmem.toml or .mdmem/), ``missing folder`` or ``not a vault yet`` (a folder)."""
    from ..adapters.config import CONFIG_FILE
    from ..index.state import STATE_DIR

    p = Path(path)
    if not p.is_dir():
        return MISSING
    return OK if (p / CONFIG_FILE).is_file() or (p / STATE_DIR).is_dir() else NOT_YET


def resolve(value: str) -> Path:
    """What ``--vault VALUE`` names: an existing folder is a path, else a registered name.

    Nothing else is looked up: the registry is read only when ``value`` is not a folder."""
    p = Path(value).expanduser()
    if p.is_dir():
        return p.resolve()
    if not NAME.match(value):  # a path (it has a separator or a dot) to a folder that does not exist
        raise VaultNotFound(
            f'No folder at {p}. Create one with "mdmem init {p}", '
            'or name a registered vault ("mdmem vaults" lists them).'
        )
    reg = load()
    if value not in reg.vaults:
        known = ", ".join(reg.vaults) or "none registered yet"
        raise VaultNotFound(
            f"No folder and no registered vault named {value!r} (vaults: {known}). "
            f'"mdmem vaults" lists them; "mdmem vaults add {value} PATH" adds one.'
        )
    where = Path(reg.vaults[value])
    if not where.is_dir():
        raise VaultNotFound(
            f"Vault {value!r} is registered at {where}, but there is no folder there. "
            f'Move it back, or "mdmem vaults remove {value}".'
        )
    return where


def default_vault() -> Path | None:
    """The default vault's folder, or None when no default is set; an error when its folder is gone."""
    reg = load()
    if reg.default is None:
        return None
    where = Path(reg.vaults[reg.default])
    if not where.is_dir():
        raise VaultNotFound(
            f"The default vault {reg.default!r} is registered at {where}, but there is no "
            f'folder there. Move it back, or "mdmem vaults default NAME" to pick another.'
        )
    return where


# -- the commands' work: each returns its result -----------------------------------------------------------


def personal_vault() -> tuple[str, Path] | None:
    """The personal vault's name and folder (``personal`` in the file), when one is set and is a vault."""
    reg = load()
    if reg.personal is None:
        return None
    where = reg.vaults[reg.personal]
    return (reg.personal, Path(where)) if status(where) == OK else None


def entry(reg: Registry, name: str) -> VaultEntry:
    from ..results.vaults import VaultEntry

    where = reg.get(name)
    return VaultEntry(name, where, name == reg.default, status(where), name == reg.personal)


def listing() -> VaultList:
    """Every named vault with its status (``mdmem vaults``)."""
    from ..results.vaults import VaultList

    reg = load()
    return VaultList(str(reg.path), [entry(reg, name) for name in reg.vaults])


def add(name: str, path: str | os.PathLike[str], *, make_default: bool = False) -> VaultChange:
    """Register ``path`` (stored absolute; it need not be a vault yet) as ``name``; a name is taken once."""
    from ..results.vaults import VaultChange

    check_name(name)
    with _editing() as reg:
        if name in reg.vaults:
            raise ConfigError(
                f"A vault named {name!r} is already registered (at {reg.vaults[name]}). "
                f'"mdmem vaults remove {name}" first to point it elsewhere.'
            )
        reg.vaults[name] = absolute(path)
        if make_default:
            reg.default = name
        save(reg)
    return VaultChange("added", entry(reg, name), str(reg.path))


def remove(name: str) -> VaultChange:
    """Forget ``name`` (and the default, if it was); the vault's folder and files are not touched."""
    from ..results.vaults import VaultChange

    with _editing() as reg:
        gone = entry(reg, name)
        del reg.vaults[name]
        if reg.default == name:
            reg.default = None
        if reg.personal == name:
            reg.personal = None
        save(reg)
    return VaultChange("removed", gone, str(reg.path))


def set_default(name: str) -> VaultChange:
    """Make ``name`` the vault used outside any vault without ``--vault``."""
    from ..results.vaults import VaultChange

    with _editing() as reg:
        reg.get(name)
        reg.default = name
        save(reg)
    return VaultChange("default", entry(reg, name), str(reg.path))


def set_personal(name: str | None) -> VaultChange | None:
    """Make ``name`` the personal vault (None: no personal vault); the prompt hook searches it beside the
    project's vault. Returns the change: ``personal`` with the new vault, ``unset`` with the vault that was
    personal; None when there was none to unset (nothing is written then)."""
    from ..results.vaults import VaultChange

    with _editing() as reg:
        if name is None:
            was = reg.personal
            if was is None:
                return None
            reg.personal = None
            save(reg)
            return VaultChange("unset", entry(reg, was), str(reg.path))
        reg.get(name)
        reg.personal = name
        save(reg)
    return VaultChange("personal", entry(reg, name), str(reg.path))
