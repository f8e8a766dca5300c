"""The MCP server (DESIGN §8): the vault's library calls as MCP tools, over stdio or streamable HTTP.

``create_server(vault)`` builds an ``MCPServer`` (the official SDK, 2.x) whose tools call ``Vault`` only.
Results are compact — id, type, title, key line, score — as text for the model and as structured
content for programs; ``get``/``multi_get`` return whole notes. Library errors come back as tool
errors with the library's message (what is wrong and what to do), never as a crash.

The SDK runs plain functions in worker threads; a ``Vault`` is not thread-safe, so every tool holds
one lock. On stdio nothing but protocol may reach stdout: while serving, stray prints go to stderr.
"""

from __future__ import annotations

import hmac
import re
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from . import __version__
from .errors import MdmemError

if TYPE_CHECKING:
    from .results import Hit
    from .vault import Vault

INSTRUCTIONS = """\
mdmem is long-term memory kept as markdown notes in a git repository; people edit the same notes.
- Before answering anything that may depend on earlier work, preferences or decisions, call recall
  with the user's question. Hits are compact; call get (or multi_get) for whole notes.
- search finds exact words and identifiers (error codes, file names); vsearch finds meaning.
- Save what will matter in a later session with add: one decision, preference, fact or lesson per
  note, a clear title, the right type. Do not save chit-chat or what the code or git log already says.
- When a memory is wrong or outdated, correct it (never add a contradicting copy). pin only standing
  rules the user wants in every session; snooze what is noise for now; forget what is wrong for good.
"""

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
KEY_CHARS = 200

# -- parameter types: descriptions are what the model reads -----------------------------------------

Query = Annotated[str, Field(description="The question or words to look for, in any language.")]
Limit = Annotated[int, Field(ge=1, le=50, description="Most results to return.")]
Types = Annotated[str | list[str] | None, Field(
    description="Only these note types, e.g. decision, preference, fact, problem, handoff.")]
Tags = Annotated[str | list[str] | None, Field(description="Only notes with all of these tags.")]
Scope = Annotated[str | None, Field(description="Only this scope (e.g. project:acme); global notes always qualify.")]
Since = Annotated[str | None, Field(description="Only notes dated on or after this day (YYYY-MM-DD).")]
Until = Annotated[str | None, Field(description="Only notes dated on or before this day (YYYY-MM-DD).")]
Include = Annotated[list[str] | None, Field(
    description="Also show notes hidden by default: forgotten, archived, snoozed, expired.")]
NoteRef = Annotated[str, Field(description="The note: its id (from a search result), path, file name, title or alias.")]


def _strip_marks(s: str | None) -> str:
    s = " ".join((s or "").replace("**", "").split())
    return s if len(s) <= KEY_CHARS else s[: KEY_CHARS - 1].rstrip() + "…"


def compact_hit(h: Hit) -> dict[str, Any]:
    """The fields an agent needs to decide whether to open a note."""
    key = re.sub(r"^#+\s*" + re.escape(h.title) + r"\s*", "", _strip_marks(h.snippet))  # not the title again
    d = {"id": h.id, "type": h.type, "title": h.title, "key": key, "score": h.score, "path": h.path, "date": h.date}
    if h.links:  # connection hints (query, recall): typed neighbours to follow with get
        d["links"] = h.links
    return d


def _result(text: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def render_hits(tool: str, query: str, hits: list[Hit], info: dict[str, Any] | None = None) -> CallToolResult:
    """Compact hits: one line each plus its key line; the structured content has the same fields."""
    items = [compact_hit(h) for h in hits]
    data: dict[str, Any] = {"query": query, "count": len(items), "results": items}
    head = f"{tool}: {len(items)} note(s) for {query!r}"
    if info and info.get("intent"):
        data["intent"], data["route"] = info["intent"], info.get("route")
        head += f" (intent {info['intent']}: {info.get('route')})"
    if not items:
        return _result(head + ". Nothing matches: try other words, search for exact identifiers, or vsearch "
                       "for meaning.", data)
    lines = [head + ". Whole note: get(id)."]
    for i, it in enumerate(items, 1):
        lines.append(f"{i}. [{it['type']}] {it['title']} (id {it['id']}, score {it['score']:.3g})")
        if it["key"]:
            lines.append(f"   {it['key']}")
        if it.get("links"):
            lines.append("   links: " + "; ".join(f"{ln['type']} {'→' if ln['direction'] == 'out' else '←'} "
                                                  f"{ln['title']} ({ln['id']})" for ln in it["links"]))
    return _result("\n".join(lines), data)


def _filters(type: Any, tag: Any, scope: Any, since: Any, until: Any, include: Any) -> dict[str, Any]:
    return {k: v for k, v in (("type", type), ("tag", tag), ("scope", scope), ("since", since),
                              ("until", until), ("include", include)) if v}


def create_server(vault: Vault, *, lock: threading.Lock | None = None,
                  lifespan: Callable[[Any], Any] | None = None) -> MCPServer:
    """An MCP server whose tools call ``vault``, one at a time (under ``lock``)."""
    server: MCPServer = MCPServer("mdmem", instructions=INSTRUCTIONS, version=__version__,
                                  lifespan=lifespan, log_level="WARNING")
    lock = lock or threading.Lock()
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    additive = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
    idempotent = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                 open_world_hint=False)

    local = threading.local()  # a tool runs call() and builds its result in one worker thread

    def call(fn: Callable[[], Any]) -> Any:
        with lock:
            vault.warnings.clear()
            try:
                return fn()
            except MdmemError as exc:
                raise ToolError(str(exc)) from exc
            finally:
                local.warnings = list(vault.warnings)
                vault.warnings.clear()
                if vault.index_warning:  # answered from the previous index (e.g. the disk is full)
                    local.warnings.append(vault.index_warning)
                    vault.index_warning = None

    def warned(result: CallToolResult, sep: str = " ") -> CallToolResult:
        """``result`` with the last call's warnings (a commit git refused, an index not refreshed)."""
        warnings: list[str] = getattr(local, "warnings", [])
        if warnings:
            result.content[0].text += f"{sep}Warning: " + " ".join(warnings)  # type: ignore[union-attr]
            result.structured_content = {**(result.structured_content or {}), "warnings": warnings}
        return result

    def written(text: str, data: dict[str, Any]) -> CallToolResult:
        """A writing tool's result, with what went wrong after the write."""
        return warned(_result(text, data))

    def found(tool: str, query: str, hits: list[Hit], info: dict[str, Any] | None = None) -> CallToolResult:
        """A retrieval tool's hits, saying so when they came from an index that could not be refreshed."""
        return warned(render_hits(tool, query, hits, info), "\n")

    # -- retrieval -------------------------------------------------------------------------------

    @server.tool(annotations=read_only)
    def recall(query: Query, limit: Limit = 8, type: Types = None, tag: Tags = None, scope: Scope = None,
               since: Since = None, until: Until = None, include: Include = None) -> CallToolResult:
        """Look up memory: call this FIRST when the request may depend on earlier decisions, preferences,
        facts, problems or sessions. It classifies the question (why / when / who / recent / general) and
        routes it: causes and consequences for "why", a time window for "when", entity matches for "who",
        newest first for "latest / last time", hybrid search otherwise. Returns compact hits (id, type,
        title, key line, score); call get(id) for a whole note."""
        hits, info = call(lambda: (vault.recall(query, limit, **_filters(type, tag, scope, since, until, include)),
                                   dict(vault.last_info)))
        return found("recall", query, hits, info)

    @server.tool(annotations=read_only)
    def query(query: Query, limit: Limit = 8, type: Types = None, tag: Tags = None, scope: Scope = None,
              since: Since = None, until: Until = None, include: Include = None) -> CallToolResult:
        """Hybrid search (BM25 words + vector meaning, fused), without recall's intent routing. Use for a
        plain topical lookup, usually with filters (type, tag, scope, dates)."""
        hits = call(lambda: vault.query(query, limit, **_filters(type, tag, scope, since, until, include)))
        return found("query", query, hits)

    @server.tool(annotations=read_only)
    def search(query: Query, limit: Limit = 8, type: Types = None, tag: Tags = None, scope: Scope = None,
               since: Since = None, until: Until = None, include: Include = None) -> CallToolResult:
        """Exact-word full-text search (BM25, no model; fast). Best for identifiers, error codes, file and
        function names, people and product names, e.g. ERR_PAY_504 or max_pool_size."""
        hits = call(lambda: vault.search(query, limit, **_filters(type, tag, scope, since, until, include)))
        return found("search", query, hits)

    @server.tool(annotations=read_only)
    def vsearch(query: Query, limit: Limit = 8, type: Types = None, tag: Tags = None, scope: Scope = None,
                since: Since = None, until: Until = None, include: Include = None) -> CallToolResult:
        """Meaning-only search (vectors): finds notes that say the same thing in other words. Use when
        search finds nothing because you do not know the vault's wording."""
        hits = call(lambda: vault.vsearch(query, limit, **_filters(type, tag, scope, since, until, include)))
        return found("vsearch", query, hits)

    # -- reading ---------------------------------------------------------------------------------

    def whole(ref: str, max_chars: int) -> dict[str, Any]:
        from .cli.options import note_dict

        n = vault.get(ref)
        text = vault.files.safe_path(n.path).read_text(encoding="utf-8", errors="replace")
        cut = len(text) > max_chars
        d = note_dict(n)
        del d["body"], d["problems"], d["headings"]
        return {**d, "text": text[:max_chars] + ("\n… (cut; raise max_chars for more)" if cut else ""),
                "truncated": cut}

    @server.tool(annotations=read_only)
    def get(note: NoteRef, max_chars: Annotated[int, Field(ge=200, le=200_000,
            description="Cut the note after this many characters.")] = 12_000) -> CallToolResult:
        """The whole note — frontmatter and body as in the file — by id, path, file name, title or alias.
        Use after recall/search when the key line is not enough."""
        d = call(lambda: whole(note, max_chars))
        return _result(f"{d['path']} (id {d['id']})\n{d['text']}", d)

    @server.tool(annotations=read_only)
    def multi_get(notes: Annotated[list[str], Field(min_length=1, max_length=50,
                  description="Note ids, paths, file names, titles or aliases.")],
                  max_chars: Annotated[int, Field(ge=200, le=100_000,
                  description="Cut each note after this many characters.")] = 4000) -> CallToolResult:
        """Several whole notes in one call (e.g. the top hits of a recall). A note that cannot be found is
        reported in the result; the others are still returned."""
        found, missing, parts = [], [], []
        for ref in notes:
            try:
                d = call(lambda ref=ref: whole(ref, max_chars))
            except ToolError as exc:
                missing.append({"ref": ref, "error": str(exc)})
                parts.append(f"=== {ref}: {exc}")
                continue
            found.append(d)
            parts.append(f"=== {d['path']} (id {d['id']})\n{d['text']}")
        return _result("\n\n".join(parts), {"notes": found, "missing": missing})

    # -- writing ---------------------------------------------------------------------------------

    @server.tool(annotations=additive)
    def add(title: Annotated[str, Field(min_length=1, description="A clear, specific title: the claim itself, "
                                        "e.g. 'Use Postgres 16 for the billing service'.")],
            body: Annotated[str, Field(description="The memory in markdown: what, why, and where it applies. "
                                       "Link related notes with [[Their title]].")] = "",
            type: Annotated[str, Field(description="decision, preference, fact, context, idea, feedback, "
                                       "problem, antipattern, milestone, research, handoff or note.")] = "note",
            tags: Annotated[list[str] | None, Field(description="A few topic tags.")] = None,
            scope: Annotated[str | None, Field(description="global (default), project:NAME or topic:NAME.")] = None,
            salience: Annotated[float | None, Field(ge=0, le=1, description="Importance: 0.8+ critical, 0.5 "
                                                    "ordinary (default), 0.3 minor.")] = None,
            pinned: Annotated[bool, Field(description="Pin it (only for standing rules the user wants in "
                                          "every session).")] = False,
            entities: Annotated[list[str] | None, Field(description="People, systems, products it is about.")] = None,
            aliases: Annotated[list[str] | None, Field(description="Other names for the note.")] = None,
            force: Annotated[bool, Field(description="Write even though a near duplicate exists.")] = False,
            ) -> CallToolResult:
        """Save a new memory that will matter in a later session: one decision, preference, fact or lesson
        per note. Checks the vault first: ADD (written and committed), UPDATE (a near duplicate exists, so
        nothing is written: correct that note instead, or pass force=true), NOOP (the same text is already
        there). Secrets (keys, tokens, passwords) are redacted before writing."""
        from .redact import redact

        clean_title, clean_body = redact(title), redact(body)

        def run() -> dict[str, Any]:
            check, r = vault.add_checked(clean_title.text, clean_body.text, force=force, type=type, tags=tags,
                                   scope=scope, salience=salience, pinned=pinned, entities=entities, aliases=aliases)
            if r is None:
                return {**check, "written": False}
            return {"decision": check["decision"], "written": True, "id": r.id, "path": r.path, "title": r.title,
                    "commit": r.commit, "matches": check["matches"],
                    "suggested_links": [{k: sg[k] for k in ("id", "title", "similarity")}
                                        for sg in vault.suggest_links(r.path)]}

        d = call(run)
        d["redacted"] = clean_title.count + clean_body.count
        if d["written"]:
            text = f"{d['decision']}: wrote {d['path']} (id {d['id']})" + (
                f", commit {d['commit'][:8]}" if d.get("commit") else "") + "."
            if d["suggested_links"]:
                text += " Similar notes it may relate to (link it if one explains or depends on it): " + "; ".join(
                    f"{sg['title']} (id {sg['id']})" for sg in d["suggested_links"]) + "."
        else:
            m = d["matches"][0]
            text = (f"{d['decision']}: not written — {d['reason']}. Existing: {m['title']} (id {m['id']}). "
                    + ("Call correct on it to change it, or add with force=true." if d["decision"] == "UPDATE"
                       else ""))
        if d["redacted"]:
            text += f" {d['redacted']} secret(s) redacted."
        return written(text, d)

    @server.tool(annotations=additive)
    def correct(note: NoteRef,
                body: Annotated[str, Field(min_length=1, description="The corrected memory, in full.")],
                title: Annotated[str | None, Field(description="A new title (default: the old one).")] = None,
                ) -> CallToolResult:
        """Replace a memory that is wrong or outdated: writes a successor that supersedes it; the old note
        keeps its text, is archived and points to the new one (both committed). Use when the user says
        something changed or was wrong — never add a second, contradicting note."""
        from .redact import redact

        clean, clean_title = redact(body), redact(title) if title else None
        new_title = clean_title.text if clean_title else None
        added, old = call(lambda: vault.correct(note, clean.text, title=new_title))
        d = {"new": {"id": added.id, "path": added.path, "title": added.title}, "old": old.to_dict(),
             "commit": old.commit, "redacted": clean.count + (clean_title.count if clean_title else 0)}
        return written(f"corrected {old.path} → {added.path} (id {added.id}); the old note is archived.", d)

    def change(text_fn: Callable[[], Any]) -> CallToolResult:
        c = call(text_fn)
        d = c.to_dict()
        if not c.changed:
            return written(f"{c.path}: already so, nothing changed.", d)
        fields = ", ".join(f"{k}={v}" for k, v in c.fields.items())
        return written(f"{c.action}: {c.path} ({fields})" + (f", commit {c.commit[:8]}" if c.commit else ""), d)

    @server.tool(annotations=idempotent)
    def pin(note: NoteRef, pinned: Annotated[bool, Field(description="false unpins.")] = True) -> CallToolResult:
        """Pin a memory so it comes first in every session's context: standing constraints, key
        decisions, preferences the user asked you to remember. Pin sparingly; pinned=false unpins."""
        return change(lambda: vault.pin(note, pinned))

    @server.tool(annotations=idempotent)
    def snooze(note: NoteRef,
               until: Annotated[str | None, Field(description="Hide until this day (YYYY-MM-DD).")] = None,
               days: Annotated[int | None, Field(ge=1, le=3650, description="Or hide for this many days.")] = None,
               ) -> CallToolResult:
        """Hide a memory that keeps surfacing but does not matter now, until a date or for some days; it
        comes back by itself. Give until or days."""
        from .memory import parse_until

        return change(lambda: vault.snooze(note, parse_until(until, f"{days}d" if days else None)))

    @server.tool(annotations=idempotent)
    def forget(note: NoteRef) -> CallToolResult:
        """Hide a memory that is wrong or obsolete for good (status forgotten; the file stays in git and
        restore undoes it). Prefer correct when there is a right version, snooze when it is only noise now."""
        return change(lambda: vault.forget(note))

    @server.tool(annotations=idempotent)
    def restore(note: NoteRef) -> CallToolResult:
        """Make a forgotten, archived or snoozed memory visible again."""
        return change(lambda: vault.restore(note))

    # -- graph (connect.py) ----------------------------------------------------------------------

    @server.tool(annotations=read_only)
    def why(query: Query, limit: Limit = 8, depth: Annotated[int, Field(ge=1, le=6, description=(
            "Causal hops to follow from each match, each way."))] = 3,
            type: Types = None, tag: Tags = None, scope: Scope = None) -> CallToolResult:
        """Why something is so: the notes that best match the question, then their causes and effects
        along causal links (caused_by, depends_on, because, led_to, supersedes, …). Each result says
        whether it is a match, a cause or an effect, with the chain of links (and their reasons) to it.
        Use for "why did we …", "what led to …", "what depends on …"."""
        from .cli.graph import _edge_text, _name, _reason

        doc = call(lambda: vault.why(query, limit, depth=depth, **_filters(type, tag, scope, None, None, None)))
        lines = [f"why: {doc['count']} note(s) for {query!r}. Whole note: get(id)."]
        for i, r in enumerate(doc["results"], 1):
            lines.append(f"{i}. {_name(r)} — {r['role']}")
            lines += [f"   {_edge_text(c)}{_reason(c)}" for c in r["chain"]]
        return _result("\n".join(lines), doc)

    @server.tool(annotations=read_only)
    def timeline(note: Annotated[str, Field(description="A note (id, path, title, alias) or a question whose best "
                                            "match is used.")],
                 window: Annotated[int, Field(ge=1, le=50, description="Notes before and after.")] = 5,
                 all_notes: Annotated[bool, Field(description="Among all notes, not only related ones.")] = False,
                 ) -> CallToolResult:
        """What came before and after a note in time, among its related notes (links, mentions, versions,
        shared entities, same subject). Use for "what happened around …", "what came after …"."""
        from .cli.graph import _name

        doc = call(lambda: vault.timeline(note, window, all_notes=all_notes))

        def line(mark: str, n: dict[str, Any]) -> str:
            return f"{mark} {(n.get('date') or '?')[:10]}  {_name(n)}"

        lines = [f"best match for {note!r}:"] if doc["from_query"] else []
        lines += [line(" ", n) for n in doc["before"]] + [line("▶", doc["anchor"])]
        lines += [line(" ", n) for n in doc["after"]]
        return _result("\n".join(lines), doc)

    @server.tool(annotations=read_only)
    def neighbors(note: NoteRef,
                  depth: Annotated[int, Field(ge=1, le=4, description="Hops to go out.")] = 1,
                  types: Annotated[list[str] | None, Field(description="Follow only these link types, e.g. "
                                                           "caused_by, depends_on, mentions, about.")] = None,
                  limit: Limit = 20) -> CallToolResult:
        """The notes and entities linked to a note within a few hops, nearest first, each with the link
        that reached it. Use to explore what a memory is connected to."""
        from .cli.graph import _edge_text, _name, _reason

        doc = call(lambda: vault.neighbors(note, depth, types=types, limit=limit))
        lines = [f"{_name(doc['note'])}: {doc['count']} neighbour(s) within {depth} hop(s)"]
        for n in doc["neighbors"]:
            lines.append(f"{n['distance']}  {_name(n)}\n   via {_edge_text(n['via'])}{_reason(n['via'])}")
        return _result("\n".join(lines), doc)

    @server.tool(annotations=idempotent)
    def link(source: Annotated[str, Field(description="The note the link goes from (id, path, title).")],
             target: Annotated[str, Field(description="The note it points to.")],
             type: Annotated[str, Field(description="The relation, e.g. caused_by, depends_on, supports, "
                                        "contradicts, part_of, related.")] = "related",
             reason: Annotated[str | None, Field(description="Why they are linked, in a few words.")] = None,
             ) -> CallToolResult:
        """Record how two memories relate: adds {to, type, reason} to the source note's links (committed).
        Use causal types (caused_by, depends_on, led_to) when one explains the other: why follows them."""
        c = call(lambda: vault.link(source, target, type, reason))
        to = c.fields.get("to") or {}
        if not c.changed:
            return written(f"{c.path} already links to {to.get('title', '?')}; nothing changed.", c.to_dict())
        return written(f"linked {c.path} -{type}-> {to.get('title')}" + (f", commit {c.commit[:8]}" if c.commit else ""),
                       c.to_dict())

    # -- health ----------------------------------------------------------------------------------

    @server.tool(annotations=read_only)
    def status() -> CallToolResult:
        """Vault health: notes by type, index freshness, vector coverage, git state, problems. Use when
        results look stale or empty."""
        s = call(vault.status)
        pend = s["pending"]
        vec = s["vectors"]
        d = {"vault": s["vault"], "notes": s["notes"], "types": s["types"], "fresh": s["fresh"],
             "pending": {k: len(v) for k, v in pend.items()}, "vectors": vec, "problems": s["problems"],
             "git": s["git"]}
        lines = [f"{s['notes']} notes in {s['vault']} (" + ", ".join(f"{k} {v}" for k, v in s["types"].items()) + ")",
                 "index: " + ("up to date" if s["fresh"] else
                              f"stale ({sum(d['pending'].values())} file change(s) not indexed)"),
                 "vectors: " + (vec["error"] if "error" in vec else
                                f"{vec['chunks_with_vectors']}/{vec['chunks']} chunks ({vec['model']})")]
        if s["problems"]:
            lines.append(f"problems: {s['problems']} (run mdmem doctor)")
        return _result("\n".join(lines), d)

    return server


# -- running ---------------------------------------------------------------------------------------------


def warm_up(vault: Vault, lock: threading.Lock) -> None:
    """Catch edits made while no one was watching, then load the model, so the first call is quick."""
    from .errors import LockHeld

    with lock:
        try:
            vault.reindex(wait=False)
        except LockHeld:
            pass
        except Exception as exc:  # the tools report index problems themselves
            print(f"mdmem mcp: reindex at start failed: {exc}", file=sys.stderr)
        try:
            vault.semantic.embedder.embed(["warm up"], query=True)
        except Exception as exc:  # BM25 still works; vector tools will say what is wrong
            print(f"mdmem mcp: the embedding model is not available: {exc}", file=sys.stderr)


@asynccontextmanager
async def _stdout_to_stderr(_: Any) -> AsyncIterator[dict[str, Any]]:
    """While serving stdio, print() goes to stderr: the SDK already owns the wire, and buffered stray
    output would otherwise be flushed onto it when the descriptors are restored at exit."""
    real = sys.stdout
    real.flush()
    sys.stdout = sys.stderr
    try:
        yield {}
    finally:
        sys.stdout = real


def run_stdio(vault: Vault, *, warm: bool = True) -> None:
    """Serve MCP on stdin/stdout until the client closes the pipe."""
    lock = threading.Lock()
    server = create_server(vault, lock=lock, lifespan=_stdout_to_stderr)
    if warm:
        threading.Thread(target=warm_up, args=(vault, lock), daemon=True).start()
    server.run("stdio")


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine (and under the SDK's Host checks)."""
    return host in LOOPBACK_HOSTS


class BearerAuth:
    """ASGI middleware: HTTP requests must carry ``Authorization: Bearer TOKEN`` (401 otherwise)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            got = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(got, self.expected):
                body = b'{"error": "missing or wrong bearer token"}'
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="mdmem"')]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve beyond loopback without a token (issue 6)."""
    if not is_loopback(host) and not token:
        raise MdmemError(f"Binding {host} exposes the vault beyond this machine: give a bearer token with "
                         "--token TOKEN or $MDMEM_MCP_TOKEN (clients send \"Authorization: Bearer TOKEN\").")


def http_app(vault: Vault, *, host: str, token: str | None, lock: threading.Lock | None = None) -> Any:
    """The streamable-HTTP ASGI app at /mcp, behind the bearer check when a token is set."""
    check_bind(host, token)
    app = create_server(vault, lock=lock).streamable_http_app(host=host)
    return BearerAuth(app, token) if token else app


def run_http(vault: Vault, *, host: str, port: int, token: str | None, warm: bool = True) -> None:
    """Serve MCP over streamable HTTP at http://HOST:PORT/mcp until interrupted."""
    import uvicorn

    lock = threading.Lock()
    app = http_app(vault, host=host, token=token, lock=lock)
    if warm:
        threading.Thread(target=warm_up, args=(vault, lock), daemon=True).start()
    print(f"mdmem mcp: serving {vault.root} at http://{host}:{port}/mcp"
          + (" (bearer token required)" if token else ""), file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
