"""What the commands share: the per-invocation state, options, error handling and output helpers."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from ..core.errors import MdmemError

if TYPE_CHECKING:
    from pathlib import Path

    from ..api.reader import Ask
    from ..api.vault import Vault
    from ..api.vault_set import VaultSet
    from ..edges.table import Command
    from ..results.search import Hits


class State:
    """Per-invocation state: the --vault option (a path or a registered name) and the lazily opened
    Vault (closed with the command)."""

    def __init__(self, vault_path: str | None) -> None:
        self.vault_path = vault_path
        self._vault: Vault | None = None
        self._set: VaultSet | None = None
        self._extra: list[Vault] = []  # vaults a qualified note reference opened

    def vault_set(self, vaults: str | None, all_vaults: bool) -> VaultSet | None:
        """The vaults ``--vaults a,b`` or ``--all-vaults`` name, opened (closed with the command); None
        when neither is given (the command uses its one vault)."""
        if not vaults and not all_vaults:
            return None
        if vaults and all_vaults:
            raise click.UsageError("Give --vaults or --all-vaults, not both.")
        if self._set is None:
            from ..api.vault_set import VaultSet

            self._set = VaultSet.open((vaults or "").split(","), all_vaults=all_vaults)
        return self._set

    @property
    def vault(self) -> Vault:
        """--vault NAME|PATH, else the vault at or above the current folder, else the default vault."""
        if self._vault is None:
            from ..api.vault import Vault

            self._vault = Vault(self.vault_root)
        return self._vault

    @property
    def vault_root(self) -> Path:
        """The root of the vault ``vault`` opens, found without reading its settings (``serve --stop``
        stops the server of a vault whose ``mdmem.toml`` is refused)."""
        if self._vault is not None:
            return self._vault.root
        from ..api import registry
        from ..api.vault import Vault
        from ..core.errors import VaultNotFound

        if self.vault_path:
            return Vault.root_at(registry.resolve(self.vault_path))
        try:
            return Vault.find_root()
        except VaultNotFound as exc:
            default = registry.default_vault()
            if default is None:
                raise VaultNotFound(
                    f'{exc} Or name one for use anywhere: "mdmem vaults add NAME PATH --default".'
                ) from exc
            return Vault.root_at(default)

    def vault_for(self, ref: str) -> tuple[Vault, str]:
        """The vault a note reference is in and the reference there: ``NAME:REF`` (a registered vault's
        name, as answers across vaults give ids) is vault NAME's, anything else this command's vault."""
        from ..api.vault_set import QUALIFIED, open_ref

        if not QUALIFIED.match(ref):
            return self.vault, ref
        try:
            current: Vault | None = self.vault
        except MdmemError:
            current = None  # outside any vault: NAME:REF alone says where
        vault, rest, own = open_ref(ref, current)
        if own:
            self._extra.append(vault)
        return vault, rest

    def close(self) -> None:
        if self._vault is not None:
            self._vault.close()
        if self._set is not None:
            self._set.close()
        for v in self._extra:
            v.close()


pass_state = click.make_pass_decorator(State)


def handle_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn library errors into one-line messages with exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MdmemError as exc:
            raise click.ClickException(str(exc)) from exc

    return wrapper


def output(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The one output decorator: ``--json`` and error handling (``handle_errors``)."""
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")(handle_errors(fn))


def show(result: Any, as_json: bool = False, **options: Any) -> None:
    """Print a result as a command does: with --json its JSON, else its text (``render.cli``: stdout,
    stderr); the result's exit code (doctor's problems, import's errors) becomes the command's. An
    answer's warnings go to stderr either way (and are in the JSON)."""
    from .. import render

    text = render.cli(result, **options)
    if as_json:
        click.echo(render.to_json(result), nl=False)
        click.echo(render.warning_lines(getattr(result, "warnings", ())), nl=False, err=True)
    else:
        if text.out:
            click.echo(text.out, nl=False)
        if text.err:
            click.echo(text.err, nl=False, err=True)
    if text.code:
        sys.exit(text.code)


commit_option = click.option(
    "--commit/--no-commit", default=None, help="Commit the change [default: mdmem.toml [git] commit, else yes]."
)


def vaults_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--vaults and --all-vaults: answer from several vaults, merged on one scale."""
    fn = click.option(
        "--all-vaults", is_flag=True, help='Search every vault "mdmem vaults" lists, merged on one scale.'
    )(fn)
    return click.option(
        "--vaults",
        "vaults",
        metavar="NAME,…",
        help="Search these vaults (names or folders, comma-separated), merged on one scale; "
        "each hit names its vault and its id is NAME:id.",
    )(fn)


redact_option = click.option(
    "--no-redact", is_flag=True, help="Write secrets (keys, tokens, passwords) as given instead of [REDACTED:kind]."
)


def redact_args(*texts: str | None) -> list[Any]:
    """The texts with secrets redacted, as MCP add does; the count goes to stderr."""
    from ..core.redact import redact
    from ..render import redaction_notice

    done = [redact(t) if t else None for t in texts]
    click.echo(redaction_notice(sum(r.count for r in done if r is not None)), err=True, nl=False)
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


def progress_lines(label: str, every: float = 10.0, after: float = 2.0) -> Callable[[int, int], None]:
    """A (done, total) callback for a pipe or a log (a piped embed printed nothing for
    minutes): a line on stderr every ``every`` seconds or 10% of the work, and at the end; nothing
    for work done within ``after`` seconds (a few chunks need no report)."""
    import time

    start = time.monotonic()
    last = {"t": start, "done": 0}

    def update(done: int, total: int) -> None:
        now = time.monotonic()
        step = max(1, total // 10)
        if now - start < after or (done < total and now - last["t"] < every and done - last["done"] < step):
            return
        last.update(t=now, done=done)
        rate = done / max(now - start, 1e-9)
        left = f", ~{(total - done) / rate:.0f} s left" if 0 < done < total else ""
        click.echo(f"{label}: {done}/{total} ({100 * done // max(1, total)}%), {rate:.1f}/s{left}", err=True)

    return update


def served_or_local(state: State, ask: Ask) -> Hits:
    """Ask a running ``mdmem serve`` (model already loaded), else run here; ``info`` says which."""
    from ..edges.serve import call_server
    from ..results.search import Hits

    vault = state.vault
    answer = call_server(vault.root, "ask", ask.to_dict())
    if answer is not None and "results" in answer:
        hits = Hits.from_dict(answer)
        served = True
    else:
        hits, served = ask.of(vault), False
    hits.info = {**hits.info, "served": served}
    return hits


class Local:
    """The CLI's one vault as a reader whose retrieval questions go to a running ``mdmem serve`` first
    (model already loaded); everything else is the vault's."""

    def __init__(self, state: State, vault: Vault) -> None:
        self.state, self.vault = state, vault

    def ask(self, question: Ask) -> Hits:
        return served_or_local(self.state, question)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.vault, name)


def table_command(spec: Command) -> click.Command:
    """The click command for a row of the command table (``edges.commands``): its parameters (the
    filters spelled out) as arguments and options, ``--json``, one call — a note named ``NAME:REF`` is
    vault NAME's; a reader row with ``--vaults`` asks that set; a served row asks a running server —
    and the result shown as every command shows it."""
    params: list[click.Parameter] = []
    for p in spec.expanded():
        if not p.cli:
            continue
        if p.positional:
            params.append(
                click.Argument(
                    [p.name],
                    nargs=-1 if p.words or p.many else 1,
                    required=p.required,
                    default=None if p.required else p.default,
                    metavar=p.metavar or None,
                )
            )
            continue
        kind: Any = p.type
        if p.choices:
            kind = click.Choice(p.choices)
        elif p.type is int and (p.low is not None or p.high is not None):
            kind = click.IntRange(p.low, p.high)
        flag = p.flag or "--" + p.name.replace("_", "-")
        decls = [*flag.split("/"), p.name] if "/" in flag and not flag.startswith("--") else [flag, p.name]
        params.append(
            click.Option(
                decls,
                is_flag=p.type is bool,
                multiple=p.many,
                type=None if p.type is bool else kind,
                default=p.default,
                metavar=p.metavar or None,
                help=p.help,
                show_default=p.default is not None and p.type is not bool and p.default != (),
            )
        )
    params.append(click.Option(["--json", "as_json"], is_flag=True, help="Print one JSON document."))
    named = [p for p in spec.expanded() if p.cli]

    def callback(as_json: bool, **kw: Any) -> None:
        from ..edges.table import filters_of

        state = click.get_current_context().find_object(State)
        assert state is not None
        args = {p.name: " ".join(kw[p.name]) if p.words else kw[p.name] for p in named}
        group = state.vault_set(args.pop("vaults", None), bool(args.pop("all_vaults", False)))
        vault: Vault | None = None
        for p in named:
            if p.note:  # NAME:REF is vault NAME's; a link or a path stays within one vault
                there, args[p.name] = state.vault_for(args[p.name])
                if vault is not None and there.root != vault.root:
                    raise click.UsageError("The notes are in different vaults; a path stays within one vault.")
                vault = there
        target: Any = group
        if group is None:
            vault = vault or state.vault
            target = Local(state, vault) if spec.served else vault
        shown = {p.name: args.pop(p.name) for p in named if p.render}
        view = spec.cli_view(args) if spec.cli_view else {}
        if spec.color:
            view["color"] = sys.stdout.isatty()
        if spec.takes_filters:
            args = filters_of(args)
        result = spec.run(target, **args)
        if as_json and spec.cli_json is not None:  # a part of the result, which has no display options
            show(spec.cli_json(result), as_json)
        else:
            show(result, as_json, **shown, **view)

    return click.Command(spec.name, params=params, callback=handle_errors(callback), help=spec.help)
