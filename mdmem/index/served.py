"""``.mdmem/serve.json``, a running ``mdmem serve``'s address and token, sealed: read on the prompt hook's path.

The served prompt hook reads it before anything else loads, so this module imports only what the
interpreter has built in (``os``, ``_json``, ``_sha256``), not ``pathlib``, ``json``, ``re`` or ``hashlib``.
A file counts only when this user's mdmem wrote it for this vault: sealed with the machine key over its
pid, port, token and vault, and its pid alive (a ``serve.json`` that came with a clone names no server).
"""

from __future__ import annotations

import os

from ..adapters.plain import read_small
from ..core.json_c import loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from os import PathLike
    from typing import Any

STATE_DIR = ".mdmem"
SERVE_FILE = "serve.json"  # a running ``mdmem serve``: pid, port, token (mode 0600)
KEY_FILE = "index.key"


def key_path() -> str:
    """Where this user's sealing key lives: $MDMEM_HOME, else ~/.local/state/mdmem (outside every vault)."""
    home = os.environ.get("MDMEM_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state", "mdmem")
    return os.path.join(home, KEY_FILE)


def read_key() -> bytes | None:
    """This user's sealing key as written, or None when there is none yet (nothing is sealed with it then)."""
    try:
        return bytes.fromhex(read_small(key_path(), 4096, follow=True).strip())
    except (OSError, ValueError):
        return None


def server_seal(info: dict[str, object], key: bytes) -> str:
    """The seal of a server's ``serve.json`` (its pid, port, token and vault) under ``key``."""
    what = f"mdmem serve {info.get('pid')} {info.get('port')} {info.get('token')} {info.get('vault')}"
    return hmac_sha256(key, what.encode())


def server_info(root: str | PathLike[str], key: bytes | None = None) -> dict[str, object] | None:
    """The running server's ``serve.json`` for the vault at ``root``, or None: missing, not a plain
    small file, not sealed with ``key`` (default: ``read_key()``), for another folder, or its pid gone."""
    key = key if key is not None else read_key()
    if key is None:
        return None
    try:
        info = loads(read_small(os.path.join(root, STATE_DIR, SERVE_FILE), 64 << 10))
        if not isinstance(info, dict) or not same_text(str(info.get("seal", "")), server_seal(info, key)):
            return None
        if str(info.get("vault")) != os.path.realpath(root):
            return None
        os.kill(int(info["pid"]), 0)
        return info
    except (OSError, ValueError, KeyError, TypeError):
        return None


def hmac_sha256(key: bytes, message: bytes) -> str:
    """HMAC-SHA256 (RFC 2104) on the built-in sha256, as ``hmac.new(key, message, "sha256").hexdigest()``:
    ``hmac`` imports ``hashlib`` and OpenSSL's bindings, which cost a prompt more than the hash."""
    sha256 = _builtin_sha256()
    if len(key) > 64:
        key = sha256(key).digest()
    key = key.ljust(64, b"\0")
    inner = sha256(bytes(b ^ 0x36 for b in key) + message).digest()
    return sha256(bytes(b ^ 0x5C for b in key) + inner).hexdigest()


def same_text(a: str, b: str) -> bool:
    """``a == b`` in time that does not depend on where they differ (as ``hmac.compare_digest``)."""
    diff = len(a) ^ len(b)
    for x, y in zip(a, b):
        diff |= ord(x) ^ ord(y)
    return diff == 0


def _builtin_sha256() -> Any:
    """The interpreter's own sha256 (``_sha256`` up to 3.11, ``_sha2`` from 3.12), else hashlib's."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found, unused-ignore]

        return sha256
    except ImportError:
        pass
    try:
        from _sha2 import sha256 as sha2  # type: ignore[import-not-found, unused-ignore]

        return sha2
    except ImportError:
        from hashlib import sha256 as openssl

        return openssl
