"""What the commands share: the per-invocation state, options, error handling and output helpers."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from ..errors import MdmemError
from ..schema import INCLUDE_CHOICES, STATUSES

if TYPE_CHECKING:
    from ..results import Hit
    from ..vault import Vault


class State:
    """Per-invocation state: the --vault option and the lazily opened Vault (closed with the command)."""

    def __init__(self, vault_path: str | None) -> None:
        self.vault_path = vault_path
        self._vault: Vault | None = None

    @property
    def vault(self) -> Vault:
        if self._vault is None:
            from ..vault import Vault

            self._vault = Vault.open(self.vault_path) if self.vault_path else Vault.discover()
        return self._vault

    @property
    def opened(self) -> Vault | None:
        """The vault if a command opened it."""
        return self._vault

    def close(self) -> None:
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
            vault = next((a.opened for a in args if isinstance(a, State)), None)
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


commit_option = click.option("--commit/--no-commit", default=None,
                             help="Commit the change [default: mdmem.toml [git] commit, else yes].")


def filters_from(kw: dict[str, Any]) -> dict[str, Any]:
    """The Vault filter arguments (``schema.FILTER_ARGS``) from the options ``filter_options`` added
    (popped from ``kw``)."""
    return dict(type=list(kw.pop("types")), tag=list(kw.pop("tags")), scope=list(kw.pop("scopes")),
                status=list(kw.pop("statuses")), since=kw.pop("since"), until=kw.pop("until"),
                path=kw.pop("path_glob"), include=list(kw.pop("include")), as_of=kw.pop("as_of"))


def visibility_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--include and --as-of: which hidden notes may appear (forgotten, archived, snoozed, expired)."""
    fn = click.option("--as-of", "as_of", metavar="DATE", help="Judge snoozes and validity at DATE instead of today.")(fn)
    return click.option("--include", "include", multiple=True, type=click.Choice(INCLUDE_CHOICES),
                        help="Also show notes hidden by default (repeatable).")(fn)


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
                     type=click.Choice(STATUSES), help="Only notes with this status."),
        click.option("--since", metavar="DATE", help="Only notes dated on or after DATE (YYYY-MM-DD)."),
        click.option("--until", metavar="DATE", help="Only notes dated on or before DATE (YYYY-MM-DD)."),
        click.option("--path", "path_glob", metavar="FOLDER|GLOB", help="Only notes under this folder or matching this glob."),
    ]
    fn = visibility_options(fn)  # listed after the others
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


redact_option = click.option("--no-redact", is_flag=True,
                             help="Write secrets (keys, tokens, passwords) as given instead of [REDACTED:kind].")


def redact_args(*texts: str | None) -> list[Any]:
    """The texts with secrets redacted, as MCP add does (issue 7); the count goes to stderr."""
    from ..redact import redact

    done = [redact(t) if t else None for t in texts]
    count = sum(r.count for r in done if r is not None)
    if count:
        click.echo(f"mdmem: redacted {count} secret(s); pass --no-redact to keep them.", err=True)
    return [r.text if r is not None else None for r in done]


def read_body(body: str | None) -> str | None:
    """--body, or stdin when it is '-' or omitted with piped input."""
    if body == "-" or (body is None and not sys.stdin.isatty()):
        return sys.stdin.read()
    return body


def progress_bar(label: str = "Indexing notes") -> Callable[[int, int], None]:
    """A (done, total) callback drawing a progress bar on stderr."""
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


def served_or_local(state: State, method: str, text: str, limit: int, explain: bool,
                    filters: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """Ask a running ``mdmem serve`` (model already loaded), else run here."""
    from ..serve import call_server

    vault = state.vault
    answer = call_server(vault.root, method, {"text": text, "limit": limit, "explain": explain, **filters})
    if answer is not None and "hits" not in answer:
        answer = None
    if answer is not None:
        from ..results import Hit

        return [Hit(**h) for h in answer["hits"]], {**answer["info"], "served": True}
    hits = getattr(vault, method)(text, limit, explain=explain, **filters)
    return hits, {**vault.last_info, "served": False}


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


def render_change(change: Any, as_json: bool) -> None:
    if as_json:
        emit_json(change.to_dict())
    elif not change.changed:
        click.echo(f"{change.path}: already so, nothing to do.")
    else:
        fields = ", ".join(f"{k}={v}" for k, v in change.fields.items())
        click.echo(f"{change.action}: {change.path}  ({fields})" + (f"  commit {change.commit[:8]}" if change.commit else ""))
