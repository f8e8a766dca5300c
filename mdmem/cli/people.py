"""External references and people (issue 17): refs, cites, person."""

from __future__ import annotations

import click

from .options import State, output, pass_state, show, visibility_options


@click.command()
@click.argument("note")
@output
@pass_state
def refs(state: State, note: str, as_json: bool) -> None:
    """What NOTE cites outside the vault: its `refs:` (URLs, e-mail addresses, tickets such as
    PAY-1234, DOIs, file paths, ids such as github:alice) and the URLs and e-mail addresses in its
    body (not in code). Each with its kind, canonical value, as written, and where it is written."""
    show(state.vault.refs(note), as_json)


@click.command()
@click.argument("ref")
@visibility_options
@output
@pass_state
def cites(state: State, ref: str, include: tuple[str, ...], as_of: str | None, as_json: bool) -> None:
    """The notes that cite REF — a URL, e-mail address, ticket, DOI or path — however each wrote it.

    \b
    http and https, www., a trailing slash, a #fragment and the host's case do not matter; nor does
    an e-mail address's case; tickets match in any case (pay-1234 is PAY-1234); a DOI as doi:10.x
    or https://doi.org/10.x. File paths match as written.
    """
    show(state.vault.cites(ref, include=list(include), as_of=as_of), as_json)


@click.command()
@click.argument("name", nargs=-1, required=True)
@visibility_options
@output
@pass_state
def person(state: State, name: tuple[str, ...], include: tuple[str, ...], as_of: str | None, as_json: bool) -> None:
    """Who NAME is — by any identity: a name, e-mail address, @handle or service:handle — from their
    person note (`type: person`, `identities: [...]`): identities, summary, the notes that mention
    them (in `entities`, a link, or an e-mail in `refs:` or the body) and their timeline."""
    show(state.vault.person(" ".join(name), include=list(include), as_of=as_of), as_json)
