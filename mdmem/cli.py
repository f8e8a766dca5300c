"""The mdmem command line: parse arguments → one Vault call → render text or JSON."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from . import __version__
from .errors import MdmemError

if TYPE_CHECKING:
    from .vault import Hit, Vault


class State:
    """Per-invocation state: the --vault option and the lazily opened Vault."""

    def __init__(self, vault_path: str | None) -> None:
        self.vault_path = vault_path
        self._vault: Vault | None = None

    @property
    def vault(self) -> Vault:
        if self._vault is None:
            from .vault import Vault

            self._vault = Vault.open(self.vault_path) if self.vault_path else Vault.discover()
        return self._vault

    def close(self) -> None:
        """Close the vault this invocation opened, if any."""
        if self._vault is not None:
            self._vault.close()


pass_state = click.make_pass_decorator(State)


def handle_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn library errors into one-line messages with exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            result = fn(*args, **kwargs)
        except MdmemError as exc:
            raise click.ClickException(str(exc)) from exc
        finally:
            # Work that was done but not finished (a commit git refused): one line each, exit 0.
            vault = next((a._vault for a in args if isinstance(a, State)), None)
            for line in vault.warnings if vault is not None else ():
                click.echo(f"mdmem: warning: {line}", err=True)
        if vault is not None and vault.index_warning:  # answered, but from an index that is not fresh
            click.echo(f"mdmem: {vault.index_warning}", err=True)
        return result

    return wrapper


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def json_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")(fn)


def filters_from(kw: dict[str, Any]) -> dict[str, Any]:
    """The Vault filter arguments from the options ``filter_options`` added (popped from ``kw``)."""
    return dict(type=list(kw.pop("types")), tag=list(kw.pop("tags")), scope=list(kw.pop("scopes")),
                status=list(kw.pop("statuses")), since=kw.pop("since"), until=kw.pop("until"),
                path=kw.pop("path_glob"), include=list(kw.pop("include")), as_of=kw.pop("as_of"))


def filter_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The filters shared by every retrieval command."""
    opts = [
        click.option("-n", "--limit", default=10, show_default=True, type=click.IntRange(1, 1000),
                     help="Most results to show."),
        click.option("--type", "types", multiple=True, metavar="TYPE",
                     help="Only notes of this type (repeatable: any of them)."),
        click.option("--tag", "tags", multiple=True, metavar="TAG",
                     help="Only notes with this tag (repeatable: all of them)."),
        click.option("--scope", "scopes", multiple=True, metavar="SCOPE",
                     help="Only notes in this scope, e.g. project:acme (global notes always qualify)."),
        click.option("--status", "statuses", multiple=True,
                     type=click.Choice(["active", "archived", "forgotten"]), help="Only notes with this status."),
        click.option("--since", metavar="DATE", help="Only notes dated on or after DATE (YYYY-MM-DD)."),
        click.option("--until", metavar="DATE", help="Only notes dated on or before DATE (YYYY-MM-DD)."),
        click.option("--path", "path_glob", metavar="FOLDER|GLOB", help="Only notes under this folder or matching this glob."),
        click.option("--include", "include", multiple=True,
                     type=click.Choice(["forgotten", "archived", "snoozed", "expired"]),
                     help="Also show notes hidden by default (repeatable)."),
        click.option("--as-of", "as_of", metavar="DATE", help="Judge snoozes and validity at DATE instead of today."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--vault", "vault_path", envvar="MDMEM_VAULT", metavar="PATH",
              help="The vault to use [env MDMEM_VAULT; default: found by walking up from the current folder].")
@click.version_option(__version__, prog_name="mdmem")
@click.pass_context
def cli(ctx: click.Context, vault_path: str | None) -> None:
    """mdmem — long-term memory as markdown notes in git, with a rebuildable search index.

    \b
    Start:     mdmem init ~/notes
    Write:     mdmem add --title "Use Hotwire" --type decision < body.md
    Find:      mdmem search "why hotwire"      (add --json for machines)
    Keep it:   git commit — the hooks reindex; "mdmem reindex" catches uncommitted edits.
    """
    ctx.obj = State(vault_path)
    # A process that exits frees the vault anyway; a caller that runs many commands in one process
    # (tests, via click's CliRunner) would otherwise leak its SQLite connections and index files.
    ctx.call_on_close(ctx.obj.close)


# -- init ----------------------------------------------------------------------------------------


@cli.command()
@click.argument("path", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--git/--no-git", "use_git", default=True, show_default=True,
              help="Run git init (if the folder is not in a repository yet) and install the hooks.")
@json_option
@handle_errors
def init(path: Path, use_git: bool, as_json: bool) -> None:
    """Create a vault at PATH, or adopt an existing folder of notes (no note is rewritten)."""
    from .scaffold import init_vault

    result = init_vault(path, use_git=use_git)
    if as_json:
        emit_json(result)
        return
    for line in result["messages"]:
        click.echo(line)
    click.echo(f"\nNext: mdmem --vault {_shell_path(result['vault'])} search \"WORDS\"")


def _shell_path(p: str) -> str:
    import shlex

    try:
        rel = os.path.relpath(p)
        return shlex.quote(rel if not rel.startswith("..") else p)
    except ValueError:
        return shlex.quote(p)


# -- add -----------------------------------------------------------------------------------------

redact_option = click.option("--no-redact", is_flag=True,
                             help="Write secrets (keys, tokens, passwords) as given instead of [REDACTED:kind].")


def redact_args(*texts: str | None) -> list[Any]:
    """The texts with secrets redacted, as MCP add does (issue 7); the count goes to stderr."""
    from .redact import redact

    done = [redact(t) if t else None for t in texts]
    count = sum(r.count for r in done if r is not None)
    if count:
        click.echo(f"mdmem: redacted {count} secret(s); pass --no-redact to keep them.", err=True)
    return [r.text if r is not None else None for r in done]



@cli.command()
@click.option("-t", "--title", required=True, help="The note's title (also names the file).")
@click.option("-b", "--body", help="The body in markdown; '-' or omitted with piped input reads stdin.")
@click.option("--type", "note_type", default="note", show_default=True, help="decision, fact, preference, …")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--entity", "entities", multiple=True, help="An entity the note is about (repeatable).")
@click.option("--alias", "aliases", multiple=True, help="Another name for the note (repeatable).")
@click.option("--scope", help="global, project:NAME or topic:NAME (default global).")
@click.option("--salience", type=float, help="Importance from 0 to 1 (default 0.5).")
@click.option("--confidence", type=float, help="How sure, from 0 to 1 (default 1).")
@click.option("--pinned", is_flag=True, help="Pin the note (always considered first).")
@click.option("--path", "note_path", help="Vault-relative file to create (default notes/<title>.md).")
@click.option("--commit/--no-commit", default=None, help="Commit the new note [default: mdmem.toml, else yes].")
@click.option("--force", is_flag=True, help="Write even if a near duplicate exists (never when identical).")
@click.option("--no-dedupe", is_flag=True, help="Skip the duplicate check.")
@redact_option
@json_option
@pass_state
@handle_errors
def add(state: State, title: str, body: str | None, note_type: str, tags: tuple[str, ...],
        entities: tuple[str, ...], aliases: tuple[str, ...], scope: str | None, salience: float | None,
        confidence: float | None, pinned: bool, note_path: str | None, commit: bool | None,
        force: bool, no_dedupe: bool, no_redact: bool, as_json: bool) -> None:
    """Write a new note (atomically, with an id), index it and commit it.

    \b
    First checks for duplicates: ADD (written), UPDATE (a near duplicate exists: not written
    unless --force; "mdmem correct ID" is suggested), NOOP (identical text exists: not written).
    Secrets (keys, tokens, passwords) in the title and body are redacted unless --no-redact.
    """
    if body == "-" or (body is None and not sys.stdin.isatty()):
        body = sys.stdin.read()
    if not no_redact:
        title, body = redact_args(title, body)
    from .lifecycle import add_checked

    check, result = add_checked(
        state.vault, title, body or "", force=force, dedupe=not no_dedupe, type=note_type, tags=list(tags),
        scope=scope, salience=salience, confidence=confidence, pinned=pinned, entities=list(entities),
        aliases=list(aliases), path=note_path, commit=commit,
    )
    if result is None:
        if as_json:
            emit_json({**check, "written": False})
        else:
            m = check["matches"][0]
            click.echo(f"{check['decision']}: not written — {check['reason']}. Existing: {m['path']} (id {m['id']})")
        return
    # Likely links to existing notes, as commands to run; never written by add itself (issue 5).
    suggested = state.vault.suggest_links(result.path)
    if as_json:
        emit_json({"decision": check["decision"], "written": True, "id": result.id, "path": result.path,
                   "title": result.title, "commit": result.commit, "matches": check["matches"],
                   "suggested_links": suggested})
    else:
        click.echo(f"added {result.path}  (id {result.id})" + (f"  commit {result.commit[:8]}" if result.commit else ""))
        if suggested:
            click.echo("maybe link it (pick the --type that fits: caused_by, depends_on, led_to, …):")
            for sg in suggested:
                click.echo(f"  {sg['command']}    # {sg['title']}")


# -- get -----------------------------------------------------------------------------------------


@cli.command()
@click.argument("note")
@click.option("--meta", is_flag=True, help="Show the parsed fields instead of the file.")
@json_option
@pass_state
@handle_errors
def get(state: State, note: str, meta: bool, as_json: bool) -> None:
    """Show NOTE, named by id, path, file name, title or alias."""
    n = state.vault.get(note)
    data = note_dict(n)
    if as_json:
        emit_json(data)
    elif meta:
        for key, value in data.items():
            if key not in ("body",) and value not in (None, [], ""):
                click.echo(f"{key}: {value}")
    else:
        click.echo((state.vault.root / n.path).read_text(encoding="utf-8", errors="replace"), nl=False)


def note_dict(n: Any) -> dict[str, Any]:
    """A parsed note as JSON-ready fields."""
    from dataclasses import asdict

    return {
        "id": n.id, "path": n.path, "title": n.title, "type": n.type, "status": n.status,
        "scope": n.scope, "salience": n.salience, "confidence": n.confidence, "pinned": n.pinned,
        "tags": n.tags, "aliases": n.aliases, "entities": n.entities,
        "created": n.created, "updated": n.updated, "authored": n.authored,
        "snoozed_until": n.snoozed_until, "valid_from": n.valid_from, "valid_until": n.valid_until,
        "supersedes": n.supersedes, "links": [asdict(ln) for ln in n.links],
        "headings": [h.text for h in n.headings], "problems": [asdict(p) for p in n.problems],
        "body": n.body,
    }


# -- search --------------------------------------------------------------------------------------


@cli.command()
@click.argument("query", nargs=-1, required=True)
@filter_options
@json_option
@pass_state
@handle_errors
def search(state: State, query: tuple[str, ...], limit: int, as_json: bool, **kw: Any) -> None:
    """Full-text (BM25) search for exact words, names and identifiers. No model is loaded."""
    text = " ".join(query)
    hits = state.vault.search(text, limit, **filters_from(kw))
    render_hits(text, hits, as_json)


@cli.command()
@click.argument("query", nargs=-1, required=True)
@filter_options
@click.option("--explain", is_flag=True, help="Show each score's parts (cosine, chunk).")
@json_option
@pass_state
@handle_errors
def vsearch(state: State, query: tuple[str, ...], limit: int, explain: bool, as_json: bool, **kw: Any) -> None:
    """Vector search: notes close in meaning to QUERY, whatever words they use (loads the model)."""
    text = " ".join(query)
    hits, info = _served_or_local(state, "vsearch", text, limit, explain, filters_from(kw))
    render_hits(text, hits, as_json, explain=explain, info=info)


@cli.command()
@click.argument("query", nargs=-1, required=True)
@filter_options
@click.option("--explain", is_flag=True, help="Show each score's parts: bm25, cosine, ranks, rrf, priors, final.")
@click.option("--no-vectors", is_flag=True, help="BM25 only (no model), with the rest of the pipeline.")
@json_option
@pass_state
@handle_errors
def query(state: State, query: tuple[str, ...], limit: int, explain: bool, no_vectors: bool, as_json: bool,
          **kw: Any) -> None:
    """Hybrid search: BM25 and vectors fused (RRF), priors, optional rerank, diversity."""
    _run_hybrid(state, "query", query, limit, explain, no_vectors, as_json, kw)


@cli.command()
@click.argument("query", nargs=-1, required=True)
@filter_options
@click.option("--explain", is_flag=True, help="Show the intent, the route and each score's parts.")
@click.option("--no-vectors", is_flag=True, help="No model: BM25 and the graph only.")
@json_option
@pass_state
@handle_errors
def recall(state: State, query: tuple[str, ...], limit: int, explain: bool, no_vectors: bool, as_json: bool,
           **kw: Any) -> None:
    """What an agent should call first: classifies QUERY (why/when/who/recent/general) and routes it."""
    _run_hybrid(state, "recall", query, limit, explain, no_vectors, as_json, kw)


def _run_hybrid(state: State, method: str, query: tuple[str, ...], limit: int, explain: bool,
                no_vectors: bool, as_json: bool, kw: dict[str, Any]) -> None:
    """query and recall: filters from the options, the warm server if running, then render."""
    text = " ".join(query)
    filters = filters_from(kw)
    if no_vectors:
        filters["vectors"] = False
    hits, info = _served_or_local(state, method, text, limit, explain, filters)
    if explain and not as_json and "intent" in info:
        click.echo(f"intent: {info.get('intent')}  route: {info.get('route')}")
    render_hits(text, hits, as_json, explain=explain, info=info)


@cli.command()
@click.argument("prompt", nargs=-1, required=True)
@click.option("--budget", default=600, show_default=True, type=click.IntRange(50, 100_000),
              help="Most tokens of memory to return (estimated, ~4 characters a token).")
@click.option("--scope", "scopes", multiple=True, metavar="SCOPE", help="Only this scope (global notes always qualify).")
@click.option("--no-vectors", is_flag=True, help="No model: BM25 only (what a cold hook does).")
@json_option
@pass_state
@handle_errors
def context(state: State, prompt: tuple[str, ...], budget: int, scopes: tuple[str, ...], no_vectors: bool,
            as_json: bool) -> None:
    """The memories worth injecting for PROMPT within a token budget: pinned first, then relevant."""
    from .recall import build_context

    ctx = build_context(state.vault, " ".join(prompt), budget=budget, scope=list(scopes) or None,
                        vectors=not no_vectors)
    if as_json:
        emit_json(ctx)
    else:
        click.echo(ctx["text"], nl=False)


def _served_or_local(state: State, method: str, text: str, limit: int, explain: bool,
                     filters: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """Ask a running ``mdmem serve`` (model already loaded), else run here."""
    from .serve import call_server

    vault = state.vault
    answer = call_server(vault.root, method, {"text": text, "limit": limit, "explain": explain, **filters})
    if answer is not None and "hits" not in answer:
        answer = None
    if answer is not None:
        from .vault import Hit

        return [Hit(**h) for h in answer["hits"]], {**answer["info"], "served": True}
    hits = getattr(vault, method)(text, limit, explain=explain, **filters)
    return hits, {**vault.last_info, "served": False}


@cli.command()
@click.option("--max", "max_new", type=click.IntRange(1), help="Embed at most this many new chunks now.")
@json_option
@pass_state
@handle_errors
def embed(state: State, max_new: int | None, as_json: bool) -> None:
    """Compute missing vectors (reused from the cache where the text is unchanged). Ctrl-C resumes later."""
    vault = state.vault
    progress = _progress_bar("Embedding chunks") if not as_json and sys.stderr.isatty() else None
    try:
        report = vault.embed(progress, max_new=max_new)
    except KeyboardInterrupt:
        done, total = vault.semantic.coverage()
        raise click.ClickException(f"Interrupted; {done}/{total} chunks have vectors. Run \"mdmem embed\" "
                                   "again to resume.") from None
    if as_json:
        emit_json(report.to_dict())
        return
    click.echo(f"Embedded {report.embedded} chunk(s), reused {report.reused} from the cache, removed "
               f"{report.removed}; {report.done}/{report.total} chunks have vectors ({report.seconds:.1f}s, "
               f"model {report.model}).")


def render_hits(query: str, hits: list[Hit], as_json: bool, *, explain: bool = False,
                info: dict[str, Any] | None = None) -> None:
    if as_json:
        doc: dict[str, Any] = {"query": query, "count": len(hits), "results": [h.to_dict() for h in hits]}
        if info:
            doc["info"] = info
        emit_json(doc)
        return
    cov = (info or {}).get("coverage")
    if cov and not cov.get("complete"):
        click.echo(f"note: only {cov['chunks_with_vectors']}/{cov['chunks']} chunks have vectors; "
                   "results lean on BM25. Run \"mdmem embed\" to finish.", err=True)
    if not hits:
        click.echo(f"No notes match {query!r}.", err=True)
        return
    color = sys.stdout.isatty()
    for i, h in enumerate(hits, 1):
        title = click.style(h.title, bold=True) if color else h.title
        click.echo(f"{i:>2}. {title}  [{h.type}]  {h.path}  score {h.score:.4g}")
        if h.snippet:
            snip = h.snippet
            if color:
                parts = snip.split("**")
                snip = "".join(click.style(p, fg="yellow", bold=True) if j % 2 else p for j, p in enumerate(parts))
            click.echo(f"    {snip}")
        click.echo(f"    id: {h.id}")
        if h.links:
            click.echo("    links: " + "; ".join(
                f"{ln['type']} {'→' if ln['direction'] == 'out' else '←'} {ln['title']} ({ln['id']})" for ln in h.links))
        if explain and h.explain:
            click.echo("    explain: " + ", ".join(f"{k}={v}" for k, v in h.explain.items()))
    if explain and info and info.get("stages"):
        click.echo("pipeline: " + " → ".join(info["stages"]) + (" (served)" if info.get("served") else ""))


# -- reindex -------------------------------------------------------------------------------------


@cli.command()
@click.option("--full", is_flag=True, help="Rebuild the index from scratch instead of only what changed.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing unless something is wrong.")
@click.option("--git-hook", metavar="NAME", hidden=True, help="Run from a git hook: never fail, never block.")
@json_option
@pass_state
def reindex(state: State, full: bool, quiet: bool, git_hook: str | None, as_json: bool) -> None:
    """Update the index from the files: new, changed, moved and deleted notes, committed or not."""
    if git_hook:
        from .githook import run_git_hook

        run_git_hook(state.vault_path, git_hook)
        return
    try:
        vault = state.vault
        progress = None
        if not quiet and not as_json and sys.stderr.isatty():
            progress = _progress_bar()
        report = vault.reindex(full=full, progress=progress)
    except MdmemError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        emit_json(report.to_dict())
        return
    if quiet and not report.problems:
        return
    kind = "Rebuilt" if report.full else "Updated"
    why = f" ({report.reason})" if report.reason and report.reason != "requested" else ""
    click.echo(
        f"{kind} index{why}: {len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.deleted)} deleted, {report.unchanged} unchanged in {report.seconds:.2f}s."
    )
    if report.problems:
        files = len({p.path for p in report.problems})
        click.echo(f"{len(report.problems)} problem(s) in {files} note(s) (indexed anyway): "
                   "run \"mdmem doctor\" for details.", err=True)


def _progress_bar(label: str = "Indexing notes") -> Callable[[int, int], None]:
    bar: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if "bar" not in bar:
            bar["bar"] = click.progressbar(length=total, label=label, file=sys.stderr)
            bar["bar"].__enter__()
            bar["done"] = 0
        bar["bar"].update(done - bar["done"])
        bar["done"] = done
        if done >= total:
            bar["bar"].__exit__(None, None, None)

    return update


@cli.command()
@click.option("--idle-timeout", default=900.0, show_default=True, type=click.FloatRange(1),
              help="Exit after this many seconds without a request.")
@click.option("--port", default=0, type=click.IntRange(0, 65535), help="Port on 127.0.0.1 (default: any free one).")
@click.option("--detach", is_flag=True, help="Run in the background and return once it is listening.")
@click.option("--stop", is_flag=True, help="Stop the vault's running server.")
@pass_state
@handle_errors
def serve(state: State, idle_timeout: float, port: int, detach: bool, stop: bool) -> None:
    """Keep the index and model warm for this vault on 127.0.0.1; query/vsearch use it automatically."""
    import signal
    import subprocess
    import time

    from .serve import Server, read_info

    vault = state.vault
    running = read_info(vault.root)
    if stop:
        if running is None:
            click.echo("No server is running for this vault.")
            return
        os.kill(int(running["pid"]), signal.SIGTERM)
        click.echo(f"Stopped the server (pid {running['pid']}).")
        return
    if running is not None:
        click.echo(f"Already serving on 127.0.0.1:{running['port']} (pid {running['pid']}).")
        return
    if detach:
        log = vault.state / "serve.log"
        vault.state.mkdir(exist_ok=True)
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "mdmem", "--vault", str(vault.root), "serve",
                 "--idle-timeout", str(idle_timeout), "--port", str(port)],
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True)
        for _ in range(200):
            info = read_info(vault.root)
            if info is not None and info["pid"] == proc.pid:
                click.echo(f"Serving {vault.root} on 127.0.0.1:{info['port']} (pid {proc.pid}); "
                           f"exits after {idle_timeout:.0f}s idle. Log: {log}")
                return
            if proc.poll() is not None:
                raise MdmemError(f"The server exited at start (code {proc.returncode}); see {log}.")
            time.sleep(0.05)
        raise MdmemError(f"The server did not start within 10 s; see {log}.")
    server = Server(vault.root, idle_timeout=idle_timeout, port=port)
    signal.signal(signal.SIGTERM, lambda *a: server.stop())
    click.echo(f"Serving {vault.root} on 127.0.0.1 (Ctrl-C to stop; exits after {idle_timeout:.0f}s idle).", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


# -- lifecycle ------------------------------------------------------------------------------------

commit_option = click.option("--commit/--no-commit", default=None,
                             help="Commit the change [default: mdmem.toml [git] commit, else yes].")


def render_change(change: Any, as_json: bool) -> None:
    if as_json:
        emit_json(change.to_dict())
    elif not change.changed:
        click.echo(f"{change.path}: already so, nothing to do.")
    else:
        fields = ", ".join(f"{k}={v}" for k, v in change.fields.items())
        click.echo(f"{change.action}: {change.path}  ({fields})" + (f"  commit {change.commit[:8]}" if change.commit else ""))


def _note_change_command(name: str, doc: str, call: Callable[[Any, str, bool | None], Any]) -> None:
    """A command that changes one note's frontmatter: NOTE, --commit/--no-commit, --json."""

    @cli.command(name, help=doc)
    @click.argument("note")
    @commit_option
    @json_option
    @pass_state
    @handle_errors
    def command(state: State, note: str, commit: bool | None, as_json: bool) -> None:
        render_change(call(state.vault, note, commit), as_json)


_note_change_command("pin", "Pin NOTE: it comes first in context and gets a prior boost.",
                     lambda v, n, c: v.pin(n, True, commit=c))
_note_change_command("unpin", "Unpin NOTE: it no longer comes first in context.",
                     lambda v, n, c: v.pin(n, False, commit=c))

@cli.command()
@click.argument("note")
@click.option("--until", metavar="DATE", help="Hide until this date (YYYY-MM-DD).")
@click.option("--for", "duration", metavar="DURATION", help="Hide for a while: 30d, 2w, 6m, 1y.")
@commit_option
@json_option
@pass_state
@handle_errors
def snooze(state: State, note: str, until: str | None, duration: str | None, commit: bool | None,
           as_json: bool) -> None:
    """Hide NOTE from retrieval until a date; it comes back by itself (or with restore)."""
    from .lifecycle import parse_until

    render_change(state.vault.snooze(note, parse_until(until, duration), commit=commit), as_json)


_note_change_command("forget", "Mark NOTE forgotten: hidden from retrieval, kept on disk and in git "
                     "(restore undoes it).", lambda v, n, c: v.forget(n, commit=c))
_note_change_command("restore", "Make NOTE active and visible again (undoes forget, archive and snooze).",
                     lambda v, n, c: v.restore(n, commit=c))


@cli.command()
@click.argument("note")
@click.option("-b", "--body", help="The corrected text; '-' or omitted with piped input reads stdin.")
@click.option("-t", "--title", help="A new title (default: the old one).")
@commit_option
@redact_option
@json_option
@pass_state
@handle_errors
def correct(state: State, note: str, body: str | None, title: str | None, commit: bool | None,
            no_redact: bool, as_json: bool) -> None:
    """Replace NOTE with a corrected successor; the old one keeps its text and is archived.

    Secrets in the new title and body are redacted unless --no-redact.
    """
    if body == "-" or (body is None and not sys.stdin.isatty()):
        body = sys.stdin.read()
    if not body or not body.strip():
        raise MdmemError("Give the corrected text with --body TEXT or on stdin.")
    if not no_redact:
        body, title = redact_args(body, title)
    added, old = state.vault.correct(note, body, title=title, commit=commit)
    if as_json:
        emit_json({"new": {"id": added.id, "path": added.path, "title": added.title},
                   "old": old.to_dict(), "commit": old.commit})
    else:
        click.echo(f"corrected {old.path} → {added.path} (id {added.id}); the old note is archived"
                   + (f"  commit {old.commit[:8]}" if old.commit else ""))


@cli.command()
@click.argument("note")
@json_option
@pass_state
@handle_errors
def history(state: State, note: str, as_json: bool) -> None:
    """The version chain of NOTE (oldest first) and each version's git log."""
    h = state.vault.history(note)
    if as_json:
        emit_json(h)
        return
    for v in h["versions"]:
        mark = "*" if v["current"] else " "
        click.echo(f"{mark} {v['id']}  {v['title']}  [{v['status']}]  {v['path']}")
        for c in v["git_log"][:5]:
            click.echo(f"      {c['commit'][:8]} {c['date'][:10]} {c['subject']}")


@cli.command()
@click.option("--apply", is_flag=True, help="Archive the notes (default: only list them).")
@click.option("--min-age", default=180.0, show_default=True, help="Days since the note's date.")
@click.option("--max-salience", default=0.3, show_default=True, help="Only notes less important than this.")
@commit_option
@json_option
@pass_state
@handle_errors
def sweep(state: State, apply: bool, min_age: float, max_salience: float, commit: bool | None,
          as_json: bool) -> None:
    """Archive stale notes: active, unpinned, low salience, old, of a decaying type. Dry run by default.

    \b
    Decisions, preferences, facts and other durable types are never swept; nothing is deleted.
    """
    from .lifecycle import SweepRule, sweep as run_sweep

    r = run_sweep(state.vault, SweepRule(min_age_days=min_age, max_salience=max_salience), apply=apply,
                  commit=commit, now=state.vault.now())
    if as_json:
        emit_json(r)
        return
    for n in r["notes"]:
        click.echo(f"{'archived' if apply else 'would archive'}: {n['path']}  [{n['type']}, salience "
                   f"{n['salience']}, {n['age_days']} days]")
    if not r["notes"]:
        click.echo("Nothing to sweep.")
    elif not apply:
        click.echo(f"\n{len(r['notes'])} note(s). Run with --apply to archive them.")


# -- status / doctor -----------------------------------------------------------------------------


@cli.command()
@json_option
@pass_state
@handle_errors
def status(state: State, as_json: bool) -> None:
    """Note counts, index freshness and the last indexed commit."""
    s = state.vault.status()
    if as_json:
        emit_json(s)
        return
    pend = s["pending"]
    click.echo(f"vault     {s['vault']}")
    types = ", ".join(f"{k} {v}" for k, v in s["types"].items())
    click.echo(f"notes     {s['notes']}" + (f"  ({types})" if types else ""))
    idx = s["index"]
    click.echo(f"index     {idx['engine']}, schema {idx['schema']}, {idx['size_bytes'] / 1e6:.1f} MB, "
               f"updated {idx['indexed_at']}")
    vec = s["vectors"]
    if "error" in vec:
        click.echo(f"vectors   unavailable: {vec['error']}")
    else:
        todo = "" if vec["complete"] else " — run \"mdmem embed\" (or \"mdmem serve\") to finish"
        click.echo(f"vectors   {vec['chunks_with_vectors']}/{vec['chunks']} chunks embedded ({vec['model']}){todo}")
    if s["serve"]:
        click.echo(f"serve     running on 127.0.0.1:{s['serve']['port']} (pid {s['serve']['pid']})")
    if s["fresh"]:
        click.echo("freshness up to date")
    else:
        n = len(pend["new"]) + len(pend["changed"]) + len(pend["deleted"])
        detail = f"{n} file change(s) not indexed" if n else "HEAD moved since the last index"
        click.echo(f"freshness STALE: {detail} — run \"mdmem reindex\"")
    g = s["git"]
    if g["repository"]:
        head = (g["head"] or "none")[:10]
        last = (g["last_indexed_commit"] or "none")[:10]
        hooks = "installed" if g["hooks"] else "NOT installed (run \"mdmem hooks install\")"
        click.echo(f"git       HEAD {head}, last indexed {last}, hooks {hooks}")
    else:
        click.echo("git       not a git repository")
    if s["problems"]:
        click.echo(f"problems  {s['problems']} in {s['notes_with_problems']} note(s) — run \"mdmem doctor\"")


@cli.command()
@json_option
@pass_state
@handle_errors
def doctor(state: State, as_json: bool) -> None:
    """List every problem: broken notes (file, field, fix) and vault setup. Exits 1 if any."""
    problems = state.vault.doctor()
    if as_json:
        from dataclasses import asdict

        emit_json({"count": len(problems), "problems": [asdict(p) for p in problems]})
    elif not problems:
        click.echo("No problems found.")
    else:
        for p in problems:
            click.echo(f"{p.path}: {p.field}: {p.message}")
            if p.fix:
                click.echo(f"    fix: {p.fix}")
        click.echo(f"\n{len(problems)} problem(s). Notes with problems are still indexed with defaults.")
    if problems:
        sys.exit(1)


# -- hooks ---------------------------------------------------------------------------------------


@cli.group()
def hooks() -> None:
    """Install or remove the git hooks that keep the index fresh."""


@hooks.command("install")
@pass_state
@handle_errors
def hooks_install(state: State) -> None:
    """Add post-commit, post-merge, post-checkout and post-rewrite hooks (existing ones keep running)."""
    from .git import install_hooks

    for line in install_hooks(state.vault.root):
        click.echo(line)


@hooks.command("uninstall")
@pass_state
@handle_errors
def hooks_uninstall(state: State) -> None:
    """Remove mdmem's hooks and restore the hooks they replaced."""
    from .git import uninstall_hooks

    for line in uninstall_hooks(state.vault.root):
        click.echo(line)


class _LazyEval(click.Command):
    """``mdmem eval``, imported only when run (it is the largest module)."""

    def __init__(self) -> None:
        super().__init__("eval", help="Measure retrieval quality (recall@k, MRR, nDCG@10) on LoCoMo and the gold set.",
                         context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                           "help_option_names": []}, add_help_option=False)

    def invoke(self, ctx: click.Context) -> Any:
        from .evaluate import eval_command

        return eval_command.main(ctx.args, prog_name="mdmem eval", standalone_mode=False)


cli.add_command(_LazyEval())


from . import cli_graph  # noqa: E402,F401  (registers links, why, link, graph export, …)
from . import cli_agents  # noqa: E402,F401  (registers hook, mcp, setup, import)


def main() -> None:
    cli(prog_name="mdmem")
