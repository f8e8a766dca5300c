"""schema: the format's vocabulary and the filter arguments are defined once, and every user takes them from there."""

from __future__ import annotations

import inspect

import click
import pytest

from mdmem.core import memory, note, schema
from mdmem.core.note import parse_note
from mdmem.core.rank import make_filters
from mdmem.features import lifecycle
from mdmem.index.store import IndexStore


def test_note_takes_its_vocabulary_from_schema() -> None:
    """One definition: note's names are schema's objects, not copies that could drift."""
    assert note.TYPES is schema.TYPES
    assert note.STATUSES is schema.STATUSES
    assert note.DATE_KEYS is schema.DATE_KEYS


def test_lifecycle_checks_types_against_schema() -> None:
    """``add --type`` accepts exactly the types the parser knows."""
    assert lifecycle.TYPES is schema.TYPES


def test_every_type_has_a_half_life() -> None:
    """Decay is defined for each type of the format, and for no type outside it."""
    assert set(memory.HALF_LIFE_DAYS) == set(schema.TYPES)


@pytest.mark.parametrize("type_", sorted(schema.TYPES))
def test_every_schema_type_parses_without_a_problem(type_: str) -> None:
    """A note of any schema type keeps it."""
    n = parse_note(f"---\ntype: {type_.upper()}\n---\nbody\n", "a.md")
    assert (n.type, n.problems) == (type_, [])


def test_an_unknown_type_lists_the_schema_types() -> None:
    """An unknown type is read as 'note' and the fix names every schema type."""
    n = parse_note("---\ntype: memo\n---\nbody\n", "a.md")
    [problem] = n.problems
    assert n.type == "note" and problem.fix == "use one of: " + ", ".join(sorted(schema.TYPES))


@pytest.mark.parametrize("status", schema.STATUSES)
def test_every_schema_status_parses_without_a_problem(status: str) -> None:
    """A note of any schema status keeps it."""
    n = parse_note(f"---\nstatus: {status}\n---\nbody\n", "a.md")
    assert (n.status, n.problems) == (status, [])


def test_an_unknown_status_names_every_schema_status() -> None:
    """The fix for a bad status mentions each status there is."""
    [problem] = parse_note("---\nstatus: deleted\n---\nbody\n", "a.md").problems
    assert all(s in problem.fix for s in schema.STATUSES)


@pytest.mark.parametrize("key", schema.DATE_KEYS)
def test_every_date_key_is_read_as_a_date(key: str) -> None:
    """Each date key is normalised to ISO, whatever YAML made of it."""
    n = parse_note(f"---\n{key}: 2026-01-31\n---\nbody\n", "a.md")
    assert getattr(n, key) == "2026-01-31" and n.problems == []


def test_the_filter_names_are_the_fields_of_one_value() -> None:
    """``FILTER_ARGS`` is ``FilterArgs``' fields, in order; the store and the Vault take that value."""
    import dataclasses

    from mdmem.api.vault import Vault

    assert schema.FILTER_ARGS == tuple(f.name for f in dataclasses.fields(schema.FilterArgs))
    assert "args" in inspect.signature(IndexStore.filters).parameters
    for method in (Vault.search, Vault.vsearch, Vault.query, Vault.recall, Vault.why, Vault.similar, Vault.timeline):
        assert "filters" in inspect.signature(method).parameters, method


def test_make_filters_takes_the_filter_value_and_a_time() -> None:
    """``make_filters`` takes a ``FilterArgs`` and ``as_of`` already turned into ``visible_at``."""
    assert tuple(inspect.signature(make_filters).parameters) == ("args", "visible_at")


def test_the_cli_filter_options_give_the_filter_arguments() -> None:
    """``search``'s options include one per filter, named as the filter; its choices are schema's."""
    from mdmem.cli import cli

    search = cli.get_command(click.Context(cli), "search")  # the group builds its commands on first use
    assert search is not None
    names = [p.name for p in search.params]
    assert [n for n in names if n in schema.FILTER_ARGS] == list(schema.FILTER_ARGS)
    choices = {p.name: tuple(p.type.choices) for p in search.params if isinstance(p.type, click.Choice)}
    assert choices["include"] == schema.INCLUDE_CHOICES
    assert choices["status"] == schema.STATUSES
