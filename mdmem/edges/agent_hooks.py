"""Claude Code hooks: ``mdmem hook prompt | session-start | stop | pre-compact``.

Claude Code runs a hook command with one JSON object on stdin (``session_id``, ``transcript_path``,
``cwd``, ``hook_event_name`` and, per event, ``prompt`` or ``source``) and reads JSON from stdout:
``{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}`` adds text to what the
model sees. A hook here never fails the agent: whatever goes wrong (no vault, bad input, a slow
machine) it exits 0 with nothing or valid JSON on stdout and says why on stderr.

- prompt (UserPromptSubmit): the memories that matter for the prompt within a token budget, under a
  time budget counted from the process's start. A running ``mdmem serve`` answers with the warm model
  (hybrid); otherwise the hook answers from BM25 first and then, when the model loads quickly, tries
  hybrid with the time left: whichever is the best answer at the deadline is printed, so a busy
  machine costs the vector leg, never the memory. Trivial prompts are skipped.
- session-start (SessionStart): pinned notes, a line when the review queue has items (as the last
  handoff counted them) and the latest handoff of this project; it also starts the
  vault's warm server unless one runs (``start_server``), so the session's prompts get hybrid answers.
- prompt and session-start stay in the session's project: its ``project:`` notes, topic notes and
  unscoped ones, never another project's (``scopes_for``).
- stop (Stop): one ``handoff`` note per session — what was asked, decided, learned and left open,
  files touched — extracted from the transcript without an LLM, secrets redacted, rewritten in place
  as the session goes on (never a second note for the same session).
- pre-compact (PreCompact, ``trigger`` manual or auto): the same capture into the same note just
  before Claude Code compacts the conversation; the SessionStart that follows (``source``
  "compact") puts that note back in front of the model.

The prompt hook is on the path of every prompt, so this module imports nothing heavy at the top; when
a server runs, the prompt is answered before this module loads at all (``hook_client``, reached from
``mdmem/__main__.py`` without click or ``site``).
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# defined where the served prompt hook needs them, which loads nothing of this module
from .hook_client import FOOTER, LOCAL_RESERVE_S, PROMPT_CHARS
from .hook_client import PROMPT_BUDGET as PROMPT_BUDGET
from .hook_client import TIME_BUDGET_MS as TIME_BUDGET_MS
from .hook_client import is_trivial as is_trivial
from .hook_client import process_started as process_started
from .hook_client import project_scope as project_scope

EVENTS = {"prompt": "UserPromptSubmit", "session-start": "SessionStart", "stop": "Stop", "pre-compact": "PreCompact"}
SESSION_BUDGET = 900  # tokens at session start (pinned notes + the last handoff)
LOCAL_VECTORS_S = 0.3  # time left after the BM25 answer that makes the vector leg worth trying here
EXIT_MARGIN_S = 0.15  # kept back from the budget: waking at the deadline, printing and exiting on a loaded machine
PERSONAL_MIN_S = 0.4  # time left that lets the hook ask the personal vault too (a cold BM25 context of a small vault)


# -- the hook protocol -----------------------------------------------------------------------------


def _diag(msg: str) -> None:
    try:
        print(f"mdmem hook: {msg}", file=sys.stderr, flush=True)
    except Exception:
        pass


def _output(event: str, context: str | None) -> str | None:
    """The JSON Claude Code reads back, or None for nothing to add."""
    if not context:
        return None
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}, ensure_ascii=False
    )


def read_payload(text: str) -> dict[str, Any]:
    """The hook's stdin as a dict; anything else is an error the caller turns into no output."""
    data = json.loads(text) if text.strip() else {}
    if not isinstance(data, dict):
        raise ValueError("hook input is not a JSON object")
    return data


def find_vault(vault_path: str | None, payload: dict[str, Any]) -> Path | None:
    """--vault, else $MDMEM_VAULT (a folder or a registered name), else the vault at or above the
    session's cwd, else the default vault (no heavy imports). None, with the reason on stderr, if none."""
    from ..api import registry
    from ..core.errors import MdmemError

    given = vault_path or os.environ.get("MDMEM_VAULT")
    try:
        if given:
            return registry.resolve(given)
        start = Path(str(payload.get("cwd") or os.getcwd())).expanduser()
        for p in (start, *start.parents):
            if (p / "mdmem.toml").is_file() or (p / ".mdmem").is_dir():
                return p
        return registry.default_vault()
    except MdmemError as exc:
        _diag(str(exc))
        return None


def run_hook(
    event: str,
    vault_path: str | None,
    stdin_text: str,
    *,
    budget: int | None = None,
    time_budget_ms: int = TIME_BUDGET_MS,
    commit: bool | None = None,
    out: Callable[[str], None] | None = None,
    started: float | None = None,
) -> int:
    """Run one hook: parse stdin, do the work within the time budget, print JSON or nothing. Always 0.
    ``started``: when the budget began (``time.monotonic`` scale), e.g. the process's start; else now."""
    write = out or (lambda s: (sys.stdout.write(s + "\n"), sys.stdout.flush()))
    name = EVENTS.get(event, event)
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            payload = read_payload(stdin_text)
            root = find_vault(vault_path, payload)
            if root is None:
                _diag("no mdmem vault (pass --vault or set MDMEM_VAULT); nothing added")
                return
            if event == "prompt":
                result["text"] = prompt_context(
                    root,
                    payload,
                    budget or PROMPT_BUDGET,
                    deadline,
                    partial=lambda text: result.__setitem__("partial", text),
                )
            elif event == "session-start":
                result["text"] = session_context(root, payload, budget or SESSION_BUDGET)
            elif event in ("stop", "pre-compact"):
                info = capture_handoff(root, payload, commit=commit, event=event)
                if info:
                    _diag(f"handoff {info['action']}: {info['path']}")
            else:
                _diag(f"unknown hook {event!r}")
        except Exception as exc:  # fail open: the agent goes on without memory
            _diag(f"{type(exc).__name__}: {exc}")

    begun = time.monotonic() if started is None else started
    deadline = begun + time_budget_ms / 1000.0 - min(EXIT_MARGIN_S, time_budget_ms / 10000.0)
    if event in ("stop", "pre-compact"):
        work()  # writing a note is not cut short; it has no reader waiting on stdout
    else:
        worker = threading.Thread(target=work, daemon=True)
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            # The best answer ready: BM25 when the vector leg is late, the project's alone when the personal
            # vault is.
            done = _output(name, result.get("partial"))
            _diag(f"no full answer within {time_budget_ms} ms; " + ("the best one ready" if done else "nothing added"))
            if done:
                write(done)
            sys.stderr.flush()
            sys.stdout.flush()
            os._exit(0)  # the worker may be deep in an index read
    payload_out = _output(name, result.get("text"))
    if payload_out:
        write(payload_out)
    return 0


# -- prompt ------------------------------------------------------------------------------------------


def prompt_context(
    root: Path, payload: dict[str, Any], budget: int, deadline: float, partial: Callable[[str], None] | None = None
) -> str | None:
    """Memory for the prompt from this project's notes and unscoped ones (``scopes_for``): from a
    running server (hybrid, warm model), else here: hybrid when the model loads quickly (the bundled
    model once exported to ONNX) and time allows, else BM25. With a personal vault (``vaults
    personal NAME``) that is not this one, its notes of the same scopes join, merged on one scale
    (``vault_set.merge_contexts``) when time allows: the project's answer alone is given to ``partial``
    first, and stands if the personal vault fails or runs out of time."""
    prompt = str(payload.get("prompt") or "")
    if is_trivial(prompt):
        return None
    prompt = prompt[:PROMPT_CHARS]  # a pasted log is not a query
    from ..api import registry

    scope = scopes_for(payload)
    try:
        personal = registry.personal_vault()
    except Exception as exc:  # a broken config file must not cost the project's memory
        _diag(f"personal vault: {exc}")
        personal = None
    if personal is not None and personal[1].resolve() == root.resolve():
        personal = None

    def early(ctx: Any) -> None:
        if partial is not None:
            partial(_with_footer(ctx.text))

    own = vault_context(root, prompt, budget, scope, deadline, explain=personal is not None, early=early)
    if own is None or personal is None:
        return _with_footer(own.text) if own is not None else None
    if partial is not None:
        partial(_with_footer(own.text))
    if deadline - time.monotonic() < PERSONAL_MIN_S:
        _diag(f"no time left for the personal vault {personal[0]!r}; this project's memory only")
        return _with_footer(own.text)
    try:
        mine = vault_context(personal[1], prompt, budget, scope, deadline, explain=True)
        if mine is None:
            return _with_footer(own.text)
        from ..api.vault import Vault
        from ..api.vault_set import Member, merge_contexts, same_model, vault_name

        with Vault.open(root) as here, Vault.open(personal[1]) as there:
            parts = [(Member(vault_name(root), here), own), (Member(personal[0], there), mine)]
            merged = merge_contexts(parts, budget, comparable=same_model([here, there]))
        return _with_footer(merged.text)
    except Exception as exc:  # fail open for the personal vault: the project's memory stands
        _diag(f"personal vault {personal[0]!r}: {type(exc).__name__}: {exc}")
        return _with_footer(own.text)


def vault_context(
    root: Path,
    prompt: str,
    budget: int,
    scope: list[str] | None,
    deadline: float,
    *,
    explain: bool = False,
    early: Callable[[Any], None] | None = None,
) -> Any:
    """One vault's ``MemoryContext`` for the prompt: from its running server, else computed here; None
    while its index is rebuilt (in the background). Computed here, BM25 comes first and is given to
    ``early`` before the hybrid answer is tried (when the model loads quickly and time is left), so a
    caller cut off by its deadline still has an answer."""
    from .serve import call_server, read_info

    if read_info(root) is not None:
        wait = deadline - time.monotonic() - LOCAL_RESERVE_S
        if wait > 0.05:
            params: dict[str, Any] = {
                "prompt": prompt,
                "budget": budget,
                **({"scope": scope} if scope else {}),
                **({"explain": True} if explain else {}),
            }
            answer = call_server(root, "context", params, timeout=wait)
            if answer is not None and isinstance(answer.get("context"), dict):
                ctx = answer["context"]
                if not explain:  # the text is all a prompt needs: the result types cost their imports
                    return ServedText(str(ctx.get("text") or ""))
                from ..results.search import MemoryContext

                try:
                    return MemoryContext.from_dict(ctx)
                except (KeyError, TypeError):  # a server that sends the text alone
                    return MemoryContext(str(ctx.get("text") or ""), 0, budget)
            _diag("mdmem serve did not answer in time; BM25 only")
    from ..api.vault import Vault

    vault = Vault.open(root)
    # A background catch-up (a big checkout) is waited for only as long as the time budget leaves room
    # for the answer itself; past that the answer says what it could not see yet.
    waited = os.environ.get("MDMEM_CATCHUP_WAIT")
    os.environ["MDMEM_CATCHUP_WAIT"] = f"{max(0.0, deadline - time.monotonic() - LOCAL_RESERVE_S):.2f}"
    try:
        if vault.rebuild_reason() is not None:
            _spawn_reindex(vault)
            return None
        lexical = vault.context(prompt, budget=budget, scope=scope, vectors=False, explain=explain)
        if deadline - time.monotonic() < LOCAL_VECTORS_S:
            return lexical
        if early is not None:
            early(lexical)
        try:  # vectors=None: hybrid when the model loads quickly here, else BM25 again (cheap once warm)
            return vault.context(prompt, budget=budget, scope=scope, vectors=None, explain=explain)
        except Exception as exc:  # a model that fails to load or read: the BM25 answer stands
            _diag(f"vector leg: {type(exc).__name__}: {exc}; BM25 only")
            return lexical
    finally:
        if waited is None:
            os.environ.pop("MDMEM_CATCHUP_WAIT", None)
        else:
            os.environ["MDMEM_CATCHUP_WAIT"] = waited
        vault.close()


class ServedText:
    """The text of a server's memory context (the prompt's answer when no other vault joins it)."""

    def __init__(self, text: str) -> None:
        self.text = text


def _with_footer(text: str) -> str:
    if not text:
        return ""
    return text + FOOTER


def _spawn_reindex(vault: Any) -> None:
    """No usable index: build it in the background (minutes on a big vault), never in the hook."""
    from .githook import rebuild_in_background

    rebuild_in_background(vault)
    _diag("the vault has no usable index yet; building it in the background")


# -- session start -----------------------------------------------------------------------------------


def scopes_for(payload: dict[str, Any]) -> list[str] | None:
    """What the prompt and session-start hooks draw on: the session's project (``project_scope`` of its
    cwd), topic notes and unscoped (global) ones, never another project's; None (all) outside a project."""
    scope = project_scope(payload.get("cwd"))
    return [scope, "topic:*"] if scope else None


def session_context(root: Path, payload: dict[str, Any], budget: int) -> str | None:
    """Pinned notes of this project (``scopes_for``), then the latest handoff of this project (or of any
    project) in full. After a compaction (``source`` "compact") it is this session's own handoff, which the
    pre-compact hook has just written."""
    from ..api.vault import Vault
    from ..core.errors import MdmemError
    from ..core.text import estimate_tokens

    vault = Vault.open(root)
    try:
        if vault.rebuild_reason() is not None:
            _spawn_reindex(vault)
            return None
        start_server(vault)
        pinned = vault.context("", budget=budget // 2, scope=scopes_for(payload), vectors=False)
        parts = [pinned.text] if pinned.text else []
        used = pinned.tokens
        rows = vault.handoffs(project_scope(payload.get("cwd")), 3)
        own = session_note(vault, str(payload.get("session_id") or "")) if payload.get("source") == "compact" else None
        try:
            note = vault.get(own) if own is not None else None
        except Exception as exc:  # a broken note: the project's latest handoff, as at any start
            _diag(f"{own}: {exc}")
            note = own = None
        if note is not None:
            rows = [{"path": own, "title": note.title, "id": note.id}] + [r for r in rows if r["path"] != own][:2]
        nudge = review_nudge(vault, rows[0]["path"] if rows else None)
        if nudge:
            parts.append(nudge)
            used += estimate_tokens(nudge)
        for i, row in enumerate(rows):
            if i == 0:
                try:
                    body = vault.body(row["path"])
                except (OSError, MdmemError):
                    continue
                label = "This session before compaction" if row["path"] == own else "Last handoff"
                head = f"{label}: {row['title']} (id: {row['id']})\n"
                room = max(0, (budget - used - estimate_tokens(head)) * 4)
                text = body.strip()
                if len(text) > room:
                    text = text[: max(0, room - 1)].rstrip() + "…"
                block = head + text + "\n"
            else:
                block = f"Earlier handoff: {row['title']} (id: {row['id']})\n"
            cost = estimate_tokens(block)
            if used + cost > budget:
                break
            parts.append(block)
            used += cost
    finally:
        vault.close()
    if not parts:
        return None
    return "mdmem memory for this session.\n" + "\n".join(parts)


SERVE_IDLE_S = 900  # a server the session-start hook started exits after this long without a request
SERVE_START_LOCK = "serve.start"  # held by that server for its life: one per vault, whoever starts it


def start_server(vault: Any) -> bool:
    """At a session's start, the vault's warm server (``mdmem serve``, exiting after ``SERVE_IDLE_S``
    idle) unless one runs or is starting, so the session's later prompts get hybrid answers at once;
    $MDMEM_AUTOSERVE=0 turns this off. The server inherits a lock on ``SERVE_START_LOCK`` and keeps it
    while it lives, so two hooks never start two. Never waits; False when none was started."""
    from .serve import read_info

    if os.environ.get("MDMEM_AUTOSERVE", "1") == "0" or read_info(vault.root) is not None:
        return False
    try:
        started = _spawn_holding(vault, SERVE_START_LOCK, ["serve", "--idle-timeout", str(SERVE_IDLE_S)], "serve.log")
    except Exception as exc:  # the session goes on; its prompts answer from BM25
        _diag(f"could not start mdmem serve: {type(exc).__name__}: {exc}")
        return False
    if started:
        _diag("started mdmem serve for this vault (warm in a few seconds; exits after 15 min idle)")
    return started


def _spawn_holding(vault: Any, lock: str, args: list[str], log_name: str, *, nice: int = 0) -> bool:
    """``mdmem --vault V ARGS`` in the background, holding a lock on ``.mdmem/LOCK`` for its life (so
    there is one at a time, whoever starts it), output to ``.mdmem/LOG_NAME``; False when one holds it."""
    import fcntl
    import shutil
    import subprocess

    from ..adapters.plain import open_plain
    from ..index.state import STATE_DIR

    state = vault.root / STATE_DIR
    if state.is_symlink() or not state.is_dir():  # never through a link someone committed
        return False
    fd = open_plain(state / lock)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False  # one is starting or running
    try:
        log = open_plain(state / log_name, log=True)
        try:
            # Lowered by nice(1), not by a function run between fork and exec (preexec_fn): that is safe
            # only while no other thread runs, which a hook that opened a vault cannot promise.
            lower = shutil.which("nice") if nice else None
            subprocess.Popen(
                [*([lower, "-n", str(nice)] if lower else []), sys.executable, "-m", "mdmem"]
                + ["--vault", str(vault.root), *args],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                pass_fds=(fd,),
            )
        finally:
            os.close(log)
    finally:
        os.close(fd)  # the child holds the lock now
    return True


# -- stop and pre-compact: the handoff --------------------------------------------------------------


def _handoff_folder(vault: Any) -> str:
    return f"{vault.config.notes_dir}/handoffs" if vault.config.notes_dir else "handoffs"


def session_note(vault: Any, session_id: str) -> str | None:
    """The vault path of a session's handoff note, if it has one (``handoffs/DAY-SESSION.md``: found by
    the session part, so a transcript whose first date changed still finds its note)."""
    from ..core.text import slugify

    session = slugify(session_id)[:12] if session_id else ""
    if not session:
        return None
    base = _handoff_folder(vault)
    name = re.compile(r"\d{4}-\d{2}-\d{2}-" + re.escape(session) + r"\.md")
    found = [n for n in vault.files_in(base, f"*-{session}.md") if name.fullmatch(n)]
    return f"{base}/{found[0]}" if found else None


def capture_handoff(
    root: Path, payload: dict[str, Any], *, commit: bool | None = None, dry_run: bool = False, event: str = "stop"
) -> dict[str, Any] | None:
    """Write (or rewrite) this session's handoff note from its transcript: at each Stop, and before a
    compaction (``event`` "pre-compact") so that what the session decided, learned and left open is
    not lost with the turns the compaction drops. One note per session, whichever hook comes first."""
    path = payload.get("transcript_path")
    if not path:
        _diag("no transcript_path in the hook input; no handoff written")
        return None
    from ..core.handoff import build_handoff, parse_transcript
    from ..core.redact import redact_text

    with open(Path(str(path)).expanduser(), encoding="utf-8", errors="replace") as fh:
        t = parse_transcript(fh)
    t.session_id = str(payload.get("session_id") or t.session_id or "")
    t.cwd = redact_text(str(payload.get("cwd") or t.cwd or ""))
    handoff = build_handoff(t)
    if handoff is None:
        return None
    from dataclasses import replace

    cands = transcript_candidates(Path(str(path)).expanduser())
    if cands:
        from ..core.candidates import section

        handoff = replace(handoff, body=handoff.body.rstrip("\n") + "\n\n" + section(cands))
    if dry_run:
        return {
            "action": "dry-run",
            "path": None,
            "title": handoff.title,
            "body": handoff.body,
            "redacted": handoff.redacted,
            "candidates": [{"kind": c.kind, "text": c.text} for c in cands],
        }
    from ..api.vault import Vault

    when = " before compaction" if event == "pre-compact" else ""
    vault = Vault.open(root)
    try:
        return _write_handoff(vault, t, handoff, commit, when)
    finally:
        try:
            recount_in_background(vault)  # after the write: its count includes this handoff
        finally:
            vault.close()


def _write_handoff(vault: Any, t: Any, handoff: Any, commit: bool | None, when: str) -> dict[str, Any]:
    from ..core.text import slugify

    session = slugify(t.session_id)[:12] or "session"
    day = (t.started or "")[:10] or time.strftime("%Y-%m-%d")
    rel = session_note(vault, t.session_id) or f"{_handoff_folder(vault)}/{day}-{session}.md"
    pending = review_items(vault)
    if vault.exists(rel):
        change = vault.replace_body(
            rel,
            handoff.body,
            "handoff",
            updates={"title": handoff.title, REVIEW_KEY: pending},
            commit=commit,
            message=f'mdmem: handoff "{handoff.title}" (updated{when})',
        )
        action = "updated" if change.changed else "unchanged"
        return {
            "action": action,
            "path": rel,
            "id": change.id,
            "commit": change.commit,
            "redacted": handoff.redacted,
        }
    scope = project_scope(t.cwd)
    extra: dict[str, Any] = {
        "session": t.session_id or None,
        "cwd": t.cwd or None,
        "source": "claude-code",
        REVIEW_KEY: pending,
    }
    if t.started:
        extra["created"] = t.started
    added = vault.add(handoff.title, handoff.body, type="handoff", scope=scope, path=rel, commit=commit, extra=extra)
    return {
        "action": "written",
        "path": added.path,
        "id": added.id,
        "commit": added.commit,
        "redacted": handoff.redacted,
    }


def transcript_candidates(path: Path, limit: int | None = None) -> list[Any]:
    """Decisions, preferences and facts said in the session (``core.candidates``), from at most the last
    ``TAIL_BYTES`` of its transcript (a partial first line dropped), secrets redacted; [] if unreadable."""
    from ..core.candidates import TAIL_BYTES, find_candidates
    from ..core.handoff import parse_transcript, redacted

    limit = limit or TAIL_BYTES
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            start = max(0, size - limit)
            fh.seek(start)
            lines = fh.read(limit).decode("utf-8", "replace").splitlines()
    except OSError as exc:
        _diag(f"transcript not read for candidates: {exc}")
        return []
    t, _ = redacted(parse_transcript(lines[1:] if start else lines))
    prompts = set(t.prompts)
    return find_candidates((text, text in prompts) for text in t.turns)


REVIEW_KEY = "review_items"  # in a handoff: how many items the review queue held when it was written
RECOUNT_LOCK = "review.count"  # held by the background review that refreshes the cached count
RECOUNT_NICE = 10


def review_items(vault: Any) -> int | None:
    """The review queue's size for the handoff (None, and no key, when not known to be true or empty):
    the count the last whole review left (``Vault.review_count``), only while it still holds. A few
    stat calls; the stop hook never runs a review itself (``recount_in_background`` does, after it)."""
    try:
        found = vault.review_count()
    except Exception as exc:  # the handoff matters more than the count
        _diag(f"review not counted: {exc}")
        return None
    return found[0] or None if found and found[1] else None


def recount_in_background(vault: Any) -> bool:
    """Refresh the cached review count (``mdmem review -n 1``, niced, one at a time) unless it holds;
    $MDMEM_RECOUNT=0 turns this off."""
    if os.environ.get("MDMEM_RECOUNT", "1") == "0":
        return False
    try:
        found = vault.review_count()
        if found is not None and found[1]:
            return False
        return _spawn_holding(vault, RECOUNT_LOCK, ["review", "-n", "1"], "review.log", nice=RECOUNT_NICE)
    except Exception as exc:  # the count is a nudge; the hook's work is done
        _diag(f"review count not refreshed: {type(exc).__name__}: {exc}")
        return False


def review_nudge(vault: Any, path: str | None) -> str | None:
    """One line when the review queue has items: the count the last whole review left (``about`` when
    the index changed since, and a recount is started), else as the latest handoff recorded it."""
    try:
        found = vault.review_count()
    except Exception:
        found = None
    if found is not None:
        n, fresh = found
        if not fresh:
            recount_in_background(vault)
    else:
        try:
            head = vault.text(path).split("\n---", 1)[0] if path else ""
            line = re.search(rf"(?m)^{REVIEW_KEY}:\s*(\d+)\s*$", head)
        except OSError:
            line = None
        n, fresh = (int(line.group(1)) if line else 0), False
    if n <= 0:
        return None
    about = "" if fresh else "about "
    return f"{about}{n} memor{'y' if n == 1 else 'ies'} to review: mdmem review (the review tool)\n"


# -- entry points -----------------------------------------------------------------------------------


def fast_main(argv: list[str], stdin_text: str | None = None) -> int | None:
    """``[--vault V] hook EVENT [--budget N] [--time-budget MS] [--no-commit]`` without click, or None
    (anything else, e.g. ``--help``, goes to the click CLI). ``stdin_text``: the hook's input when the
    served path (``hook_client``) has read it already."""
    args = list(argv)
    vault_path = None
    if args[:1] == ["--vault"] and len(args) >= 2:
        vault_path = args[1]
        args = args[2:]
    if len(args) < 2 or args[0] != "hook" or args[1] not in EVENTS:
        return None
    event, rest = args[1], args[2:]
    opts: dict[str, Any] = {}
    while rest:
        key = rest.pop(0)
        if key == "--no-commit":
            opts["commit"] = False
        elif key in ("--budget", "--time-budget") and rest and rest[0].isdigit():
            opts["budget" if key == "--budget" else "time_budget_ms"] = int(rest.pop(0))
        else:
            return None
    if stdin_text is None:
        try:
            stdin_text = sys.stdin.read()
        except Exception:
            stdin_text = ""
    return run_hook(event, vault_path, stdin_text, started=process_started(), **opts)
