"""The base of every result: ``to_dict()`` gives the fields in declaration order, ``from_dict()`` takes them back.
``from_dict()`` is one function for every result, read off the dataclass's types: nested results, lists,
tuples, dicts and ``X | None`` are rebuilt from them; a field ``from_`` is the key ``from``; a field marked
``FLAT`` is written among its owner's keys (``flat()``) and read back from them; a field marked
``from_keys(...)`` is the lists under those keys, one after another.

An ``Answer`` is a whole answer to one call (what a command prints, what a tool returns): it also carries
the warnings of that call, the things that went wrong after the work was done (a commit git refused,
vectors not updated, reads answered from an index that could not be refreshed)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass, replace
from enum import Enum
from types import NoneType, UnionType
from typing import Any, ClassVar, Literal, NamedTuple, Self, TypeVar, Union, get_args, get_origin, get_type_hints

T = TypeVar("T")

FLAT: Mapping[str, Any] = {"flat": True}  # a field's metadata: its fields sit among its owner's in the JSON


def from_keys(*names: str) -> dict[str, Any]:
    """A field's metadata: the JSON holds it as the lists under ``names``, one after another."""
    return {"keys": names}


def plain(value: Any) -> Any:
    """``value`` as JSON-ready data: results by their ``to_dict()``, the core's records (``Problem``,
    ``Link``) by their fields, containers copied (as ``asdict`` does)."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


class FromDict:
    """Gives a class the one ``from_dict()``: a result dataclass, or ``Hits`` (read off its ``__init__``)."""

    __slots__ = ()

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Self:
        """The result ``d`` describes (its ``to_dict()``); keys that are not fields (e.g. ``count``) are
        ignored, and a field whose key is missing takes its default."""
        return build(cls, d)


class Result(FromDict):
    """A frozen dataclass whose JSON is its fields in order (a result whose JSON differs overrides ``data()``)."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: ``data()``, and ``warnings`` when an answer has some."""
        d = self.data()
        warnings = getattr(self, "warnings", ())
        if warnings:
            d["warnings"] = list(warnings)
        return d

    def data(self) -> dict[str, Any]:
        """The result's own fields as JSON-ready data."""
        return {f.name: plain(getattr(self, f.name)) for f in fields(self) if f.name != "warnings"}

    def __getitem__(self, key: str) -> Any:
        """A field of the JSON shape (``result["count"]``): code written for dict answers keeps working."""
        if not isinstance(key, str):
            raise TypeError(f"{type(self).__name__} fields are named, not numbered")
        return self.to_dict()[key]

    __iter__ = None  # not a sequence: ``__getitem__`` takes names (a result that is a list defines its own)


@dataclass(frozen=True, slots=True)
class Answer(Result):
    """A whole answer to one call; ``warnings``: what went wrong after the work was done, one line each."""

    warnings: tuple[str, ...] = field(default=(), kw_only=True)


class Param(NamedTuple):
    """How one constructor argument of a result is found in its JSON."""

    name: str
    hint: Any  # its type
    keys: tuple[str, ...]  # the JSON keys holding it (several: their lists joined)
    flat: bool  # its own fields are among its owner's keys
    required: bool


def params(cls: type[Any]) -> tuple[Param, ...]:
    """The arguments that build ``cls``: a dataclass's fields, else its ``__init__``'s parameters."""
    found = PARAMS.get(cls)
    if found is None:
        found = PARAMS[cls] = read_params(cls)
    return found


PARAMS: dict[type[Any], tuple[Param, ...]] = {}  # by class: reading the type hints each time would be slow


def read_params(cls: type[Any]) -> tuple[Param, ...]:
    """``params(cls)``, read off the class."""
    if is_dataclass(cls):
        hints = get_type_hints(cls)
        return tuple(
            Param(
                f.name,
                hints[f.name],
                tuple(f.metadata.get("keys", (f.name.removesuffix("_"),))),  # from_: a keyword, written "from"
                bool(f.metadata.get("flat")),
                f.default is MISSING and f.default_factory is MISSING,
            )
            for f in fields(cls)
            if f.init
        )
    import inspect  # only for Hits; a cold start does without it

    init = vars(cls)["__init__"]  # a class that is no dataclass (``Hits``) defines its own
    hints = get_type_hints(init)
    return tuple(
        Param(p.name, hints.get(p.name, Any), (p.name,), False, p.default is inspect.Parameter.empty)
        for p in list(inspect.signature(init).parameters.values())[1:]
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    )


def build(cls: type[T], d: Mapping[str, Any]) -> T:
    """``cls`` built from its JSON ``d``, each argument converted to its declared type."""
    args: dict[str, Any] = {}
    for p in params(cls):
        if p.flat:
            # the owner's warnings are the owner's, not its part's
            part = {k: v for k, v in d.items() if k != "warnings"}
            arms = union_arms(p.hint)
            kind = next(a for a in arms if a is not NoneType)
            # an optional part is there when its keys are (``AddReport.added``)
            args[p.name] = None if NoneType in arms and not fits(kind, part) else convert(kind, part)
        elif len(p.keys) > 1:
            if any(k in d for k in p.keys):
                args[p.name] = convert(p.hint, [v for k in p.keys for v in d.get(k, ())])
        elif p.keys[0] in d:
            args[p.name] = convert(p.hint, d[p.keys[0]])
    return cls(**args)


def union_arms(hint: Any) -> tuple[Any, ...]:
    """The types of ``X | Y``; a type that is no union, alone."""
    return get_args(hint) if get_origin(hint) in (Union, UnionType) else (hint,)


def fits(hint: Any, value: Any) -> bool:
    """Whether ``value`` can be of type ``hint``: for a result, a dict with every key it needs."""
    if get_origin(hint) in (Union, UnionType):
        return any(fits(a, value) for a in get_args(hint))
    hint = get_origin(hint) or hint
    if hint is Any or not isinstance(hint, type):  # Any is a class since Python 3.11
        return True
    if isinstance(value, hint):
        return True
    if is_dataclass(hint) and isinstance(value, Mapping):
        return all(fits(p.hint, value) if p.flat else p.keys[0] in value for p in params(hint) if p.required)
    return False


def convert(hint: Any, value: Any) -> Any:
    """``value``, read from JSON, as type ``hint``."""
    if value is None:
        return None
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, UnionType):
        arms = [a for a in args if a is not NoneType]
        return convert(next((a for a in arms if fits(a, value)), arms[0]), value)
    if origin in (list, Iterable, Sequence):
        return [convert(args[0], v) for v in value]
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(convert(args[0], v) for v in value)
        return tuple(convert(a, v) for a, v in zip(args, value, strict=True))
    if origin is dict:
        return {k: convert(args[1], v) for k, v in value.items()}
    if hint is Any or origin is Literal or not isinstance(hint, type) or isinstance(value, hint):
        return value
    if is_dataclass(hint) or issubclass(hint, FromDict):
        return build(hint, value)
    if issubclass(hint, Enum):
        return hint(value)
    return value


def with_warnings(result: Any, lines: list[str]) -> Any:
    """``result`` carrying ``lines`` after its own warnings: an ``Answer`` (or ``Hits``) as a new value
    with them; anything else, or no lines, as it is."""
    if not lines:
        return result
    if isinstance(result, Answer):
        return replace(result, warnings=(*result.warnings, *lines))
    if isinstance(getattr(result, "warnings", None), tuple):  # Hits: a list, with the answer's fields
        result.warnings = (*result.warnings, *lines)
    return result
