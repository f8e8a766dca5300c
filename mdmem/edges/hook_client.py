"""The prompt hook's served path: a running ``mdmem serve`` answers, and nothing else of mdmem loads.

Claude Code starts a new process for every prompt, so what that process imports is paid on every
prompt, and on a busy machine several times over. When the vault's warm server runs, the answer is one
request over loopback; this module asks it with what the interpreter has built in (``os``, ``_json``,
``_socket``, ``_sha256``: no ``re``, ``json``, ``socket``, ``pathlib``, ``typing`` or ``hashlib``),
and started as ``python -S …/mdmem/__main__.py`` (what ``mdmem setup claude-code`` writes) without
``site`` either. Anything it does not handle itself returns None and the whole hook runs
(``agent_hooks.run_hook``): no server, a vault given by name, a personal vault, an answer not in time.
"""

from __future__ import annotations

import os
import sys
import time

from ..core.json_c import dumps, loads
from ..core.slug import slugify
from ..index.served import STATE_DIR, server_info

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EVENT = "UserPromptSubmit"
PROMPT_BUDGET = 600  # tokens of memory added to a prompt
TIME_BUDGET_MS = 2000  # the prompt hook answers within this or not at all
LOCAL_RESERVE_S = 0.9  # what a cold BM25 answer needs (2k notes, loaded machine): kept back from the server call
PROMPT_CHARS = 2000  # a pasted log is not a query
FOOTER = "(Whole note: mdmem get ID, or the mdmem MCP tool get.)\n"

# Prompts that need no memory: acknowledgements (with trailing punctuation), compared as words, not by
# a pattern (``re`` is not loaded here).
ACKS = frozenset(
    """ok okay k y yes yep yeah no nope n sure thank thanks thx ty great cool nice good done go continue proceed
    next lgtm perfect right agreed hi hello hey""".split()
) | {"thank you", "thanks you", "go on", "go ahead", "sounds good"}


def is_trivial(prompt: str) -> bool:
    """Prompts that need no memory: empty, slash commands, acknowledgements, a few characters."""
    p = prompt.strip()
    if not p or p.startswith("/"):
        return True
    end = len(p)
    while end and not (p[end - 1].isalnum() or p[end - 1] == "_"):
        end -= 1
    word = p[:end].lower()
    if word in ACKS or (len(word) >= 3 and word.startswith("hm") and word[2:] == "m" * (len(word) - 2)):
        return True
    # A CJK character says as much as a short word (compared by code point: a character class of those
    # ranges is slow to compile, paid on every prompt).
    weight = sum(2 if "\u3040" <= ch <= "\ud7af" else 1 for ch in p if ch.isalnum())
    return weight < 6


def project_scope(cwd: str | None) -> str | None:
    """``project:NAME`` for a working directory (its folder name), as handoffs record it."""
    if not cwd:
        return None
    name = slugify(os.path.basename(os.path.normpath(cwd)))
    return f"project:{name}" if name and name != "note" else None


def served_main(argv: list[str]) -> tuple[int | None, str | None]:
    """``[--vault V] hook prompt [--budget N] [--time-budget MS] [--no-commit]`` answered by the running
    server: (0, text). (None, the stdin read, or None if not read) when the whole hook must run."""
    args = list(argv)
    vault = None
    if args[:1] == ["--vault"] and len(args) >= 2:
        vault, args = args[1], args[2:]
    if args[:2] != ["hook", "prompt"]:
        return None, None
    opts = {"--budget": PROMPT_BUDGET, "--time-budget": TIME_BUDGET_MS}
    rest = args[2:]
    while rest:
        key = rest.pop(0)
        if key in opts and rest and rest[0].isdigit():
            opts[key] = int(rest.pop(0))
        elif key != "--no-commit":
            return None, None  # the whole hook (or click) says what is wrong
    started = process_started()
    try:
        stdin_text = sys.stdin.read()
    except Exception:
        stdin_text = ""
    begun = started if started is not None else time.monotonic()
    try:
        return served_prompt(vault, stdin_text, opts["--budget"], opts["--time-budget"], begun), stdin_text
    except Exception:  # never the agent's problem: the whole hook runs and says what is wrong
        return None, stdin_text


def process_started() -> float | None:
    """When this process started, on the ``time.monotonic`` scale (Linux: /proc), or None: Claude Code
    waits from the spawn, so the interpreter's start-up is part of the hook's time budget."""
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        ticks = int(fields[19])  # starttime: clock ticks after boot (field 22 of stat, counted from state)
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return time.monotonic() - age if 0 <= age < 60 else None


def served_prompt(vault: str | None, stdin_text: str, budget: int, time_budget_ms: int, started: float) -> int | None:
    """Answer the prompt hook from the vault's running server: 0 once answered (the JSON printed, or
    nothing for a trivial prompt), None when the whole hook must run instead. ``started``: when the
    time budget began (``time.monotonic`` scale)."""
    try:
        payload = loads(stdin_text) if stdin_text.strip() else {}
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
    prompt = payload.get("prompt") or ""
    if not isinstance(prompt, str):
        return None
    if is_trivial(prompt):
        return 0
    root = _vault_root(vault, payload)
    if root is None or _personal_vault_set():
        return None
    info = server_info(root)
    if info is None:
        return None
    wait = started + time_budget_ms / 1000 - time.monotonic() - LOCAL_RESERVE_S
    if wait <= 0.05:
        return None
    scope = project_scope(payload.get("cwd") if isinstance(payload.get("cwd"), str) else None)
    params: dict[str, Any] = {"prompt": prompt[:PROMPT_CHARS], "budget": budget}
    if scope:
        params["scope"] = [scope, "topic:*"]
    now = os.environ.get("MDMEM_NOW")
    if now:  # the server judges "last month" and visibility at the asker's now
        params["as_of"] = now
    answer = ask(info, {"method": "context", "params": params}, wait)
    ctx = answer.get("context") if isinstance(answer, dict) else None
    if not isinstance(ctx, dict):
        return None
    text = ctx.get("text") or ""
    if text:
        out = {"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": str(text) + FOOTER}}
        sys.stdout.write(dumps(out, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


def ask(info: dict[str, Any], request: dict[str, Any], timeout: float) -> object:
    """One HTTP/1.0 exchange with the server over loopback; its JSON answer, or None."""
    import _socket

    body = dumps(request).encode()
    head = (
        f"POST /call HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {info['token']}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(("127.0.0.1", int(info["port"])))
        sock.sendall(head + body)
        chunks = []
        while chunk := sock.recv(1 << 16):
            chunks.append(chunk)
        header, _, data = b"".join(chunks).partition(b"\r\n\r\n")
        if header.split(None, 2)[1] != b"200":
            return None
        return loads(data.decode("utf-8"))
    except (OSError, ValueError, IndexError, KeyError, TypeError):
        return None
    finally:
        sock.close()


def _vault_root(vault: str | None, payload: dict[str, Any]) -> str | None:
    """The vault's folder when it is given as a folder (``--vault``, $MDMEM_VAULT) or found at or above
    the session's cwd; None otherwise (a registered name, the default vault: the whole hook reads them)."""
    given = vault or os.environ.get("MDMEM_VAULT")
    if given:
        path = os.path.expanduser(given)
        return os.path.realpath(path) if os.path.isdir(path) else None
    cwd = payload.get("cwd")
    here = os.path.expanduser(cwd) if isinstance(cwd, str) and cwd else os.getcwd()
    while True:
        if os.path.isfile(os.path.join(here, "mdmem.toml")) or os.path.isdir(os.path.join(here, STATE_DIR)):
            return os.path.realpath(here)
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up


def _personal_vault_set() -> bool:
    """Whether the user's vault list may name a personal vault (read as lines, not as TOML: a "personal"
    anywhere sends the prompt the whole way, which merges the two vaults' answers)."""
    from ..adapters.plain import read_small

    given = os.environ.get("MDMEM_CONFIG")
    if given:
        path = os.path.expanduser(given)
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME")
        base = os.path.expanduser(xdg) if xdg and os.path.isabs(os.path.expanduser(xdg)) else None
        path = os.path.join(base or os.path.join(os.path.expanduser("~"), ".config"), "mdmem", "vaults.toml")
    try:
        text = read_small(path, 1 << 20, follow=True)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # the whole hook says what is wrong with it
    return "personal" in text
