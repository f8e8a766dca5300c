"""``from_dict`` is one function read off the types: every result type, built with every field set to a
value other than its default, comes back from its ``to_dict()`` (and through JSON) as it was."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from importlib import import_module
from typing import Any

import pytest

from mdmem.results import MODULES
from mdmem.results.base import Result
from mdmem.results.changes import AddReport, AddResult, Correction, DuplicateCheck
from mdmem.results.notes import MissingNote, NoteBatch, NoteDoc, NoteText
from mdmem.results.reports import VectorStatus
from mdmem.results.search import Hits

# An error stands alone in the JSON of vectors: the counts are left out (the error alone: ``SHAPES``).
COUNTS = {VectorStatus: {"error": None}}


def value(hint: Any, default: Any = dataclasses.MISSING) -> Any:
    """A value of type ``hint`` that is not ``default``: never None, never empty."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return value(next(a for a in args if a is not types.NoneType))
    if origin is list:
        return [value(args[0])]
    if origin is tuple:
        return (value(args[0]),)
    if origin is dict:
        return {"k": value(args[1])}
    if hint is Any:
        return "any"
    if hint is bool:
        return not default if isinstance(default, bool) else True
    if hint is int:
        return 7
    if hint is float:
        return 0.25  # not whole: JSON keeps it a float
    if hint is str:
        return "some text"
    if dataclasses.is_dataclass(hint):
        return populated(hint, **COUNTS.get(hint, {}))
    raise AssertionError(f"no sample value for {hint!r}")


def populated(cls: Any, **given: Any) -> Any:
    """``cls`` with every field set (``given`` overrides)."""
    hints = typing.get_type_hints(cls)
    args = {f.name: value(hints[f.name], f.default) for f in dataclasses.fields(cls) if f.name not in given}
    return cls(**args, **given)


def defaults_kept(x: Any) -> list[str]:
    """The fields of ``x`` still at their default (a sample must set each one)."""
    out = []
    for f in dataclasses.fields(x):
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        if getattr(x, f.name) == default:
            out.append(f.name)
    return out


# What a JSON shape leaves out on purpose, so a sample holds the default there.
NOTE_READ = populated(
    NoteDoc, body="", headings=[], problems=[], warnings=()
)  # the text holds them; warnings: the answer's
LEFT_OUT = {
    NoteText: {"note": NOTE_READ},
    # the new note of a correction is written without its commit (the old note's commit is the answer's)
    Correction: {"new": populated(AddResult, commit=None, warnings=())},
    # found notes first, then missing ones: the JSON does not keep the order asked
    NoteBatch: {"items": [populated(NoteText, note=NOTE_READ), populated(MissingNote)]},
    # a written note's JSON has no reason for its check; the note written carries no warnings of its own
    AddReport: {"check": populated(DuplicateCheck, reason=""), "added": populated(AddResult, warnings=())},
    **COUNTS,
}


def result_types() -> list[type]:
    """Every result dataclass the modules of ``mdmem.results`` define."""
    out = []
    for name in MODULES:
        module = import_module(f"mdmem.results.{name}")
        for cls in vars(module).values():
            if isinstance(cls, type) and cls.__module__ == module.__name__ and dataclasses.is_dataclass(cls):
                out.append(cls)
    return out


POPULATED = [populated(cls, **LEFT_OUT.get(cls, {})) for cls in result_types()]
SHAPES = [
    VectorStatus(error="no model"),
    AddReport(populated(DuplicateCheck), None, [], 7),  # not written: the check's reason is kept
]


def test_there_is_a_sample_of_every_result() -> None:
    types_ = result_types()
    assert len(types_) > 60 and Result in {b for t in types_ for b in t.__mro__}
    assert all(issubclass(t, Result) for t in types_)


@pytest.mark.parametrize("result", POPULATED, ids=lambda r: type(r).__name__)
def test_every_field_is_set(result: Any) -> None:
    assert defaults_kept(result) == (["error"] if isinstance(result, VectorStatus) else [])


@pytest.mark.parametrize("result", POPULATED + SHAPES, ids=lambda r: type(r).__name__)
def test_a_result_comes_back_from_its_dict(result: Any) -> None:
    d = result.to_dict()
    assert type(result).from_dict(d) == result
    assert type(result).from_dict(json.loads(json.dumps(d))) == result


def test_hits_come_back_with_their_query_info_and_warnings() -> None:
    from mdmem.results.search import Hit

    hits = Hits([populated(Hit)], "q", {"stages": ["bm25"]}, warnings=["late"])
    back = Hits.from_dict(json.loads(json.dumps(hits.to_dict())))
    assert back == hits and (back.query, back.info, back.warnings) == ("q", {"stages": ["bm25"]}, ("late",))
    assert all(isinstance(h, Hit) for h in back)


def test_one_from_dict_for_every_result() -> None:
    """No result module writes its own: the one in ``results.base`` reads the types."""
    for name in MODULES:
        module = import_module(f"mdmem.results.{name}")
        for cls in vars(module).values():
            if isinstance(cls, type) and cls.__module__ == module.__name__:
                assert "from_dict" not in vars(cls) or name == "base", cls
