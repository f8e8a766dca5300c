"""``mdmem vaults``: the user's named vaults (list, add, remove, default). Edits only the user's config file
(``registry``: $MDMEM_CONFIG, else $XDG_CONFIG_HOME/mdmem/vaults.toml, else ~/.config/mdmem/vaults.toml)."""

from __future__ import annotations

import json

import click

from .options import handle_errors, output, show


@click.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.pass_context
@handle_errors
def vaults(ctx: click.Context, as_json: bool) -> None:
    """Named vaults: list them (name, path, default, status); add, remove, pick the default and the personal one.

    \b
    mdmem vaults add work ~/notes --default
    mdmem --vault work search "postgres"     # --vault and MDMEM_VAULT take a name or a path
    mdmem search "postgres"                  # outside any vault: the default vault
    mdmem query --vaults work,me "postgres"  # several vaults, merged on one scale (or --all-vaults)
    mdmem vaults personal me                 # the prompt hook adds vault "me" to each project's

    The list lives in $MDMEM_CONFIG, else $XDG_CONFIG_HOME/mdmem/vaults.toml, else
    ~/.config/mdmem/vaults.toml. Status: ok, "missing folder", or "not a vault yet" (run mdmem init)."""
    if ctx.invoked_subcommand is None:
        from ..api.registry import listing

        show(listing(), as_json)


@vaults.command("add")
@click.argument("name")
@click.argument("path", type=click.Path(file_okay=False))
@click.option("--default", "make_default", is_flag=True, help="Also make it the default vault.")
@output
def vaults_add(name: str, path: str, make_default: bool, as_json: bool) -> None:
    """Register the folder PATH as NAME (letters, digits, - and _). PATH is stored absolute."""
    from ..api.registry import add

    show(add(name, path, make_default=make_default), as_json)


@vaults.command("remove")
@click.argument("name")
@output
def vaults_remove(name: str, as_json: bool) -> None:
    """Forget NAME; its folder and notes are not touched."""
    from ..api.registry import remove

    show(remove(name), as_json)


@vaults.command("default")
@click.argument("name")
@output
def vaults_default(name: str, as_json: bool) -> None:
    """Use the vault NAME when no --vault is given outside any vault."""
    from ..api.registry import set_default

    show(set_default(name), as_json)


@vaults.command("personal")
@click.argument("name", required=False)
@click.option("--unset", is_flag=True, help="No personal vault.")
@output
def vaults_personal(name: str | None, unset: bool, as_json: bool) -> None:
    """Make NAME the personal vault: the prompt hook ("mdmem hook prompt") searches it beside the
    project's vault and merges the two (its global notes and this project's). --unset: none."""
    from ..api.registry import set_personal

    if bool(name) == unset:
        raise click.UsageError("Give a vault NAME, or --unset.")
    change = set_personal(None if unset else name)
    if change is None:
        if as_json:
            click.echo(json.dumps({"action": "unset", "vault": None}))
        else:
            click.echo("No personal vault was set; nothing changed.")
        return
    show(change, as_json)
