"""The base of every result: ``to_dict()`` gives the fields in declaration order, ``from_dict()`` takes them back.
An ``Answer`` is a whole answer to one call (what a command prints, what a tool returns): it also carries
the warnings of that call, the things that went wrong after the work was done (a commit git refused,
vectors not updated, reads answered from an index that could not be refreshed)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, is_dataclass, replace
from typing import Any, ClassVar, Self

from ..core.note import Problem


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


class Result:
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

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        """The result ``d`` describes; keys that are not fields (e.g. ``count``) are ignored."""
        return cls(**own(cls, d))


@dataclass(frozen=True, slots=True)
class Answer(Result):
    """A whole answer to one call; ``warnings``: what went wrong after the work was done, one line each."""

    warnings: tuple[str, ...] = field(default=(), kw_only=True)


def own(cls: type[Result], d: dict[str, Any]) -> dict[str, Any]:
    """The items of ``d`` that are fields of ``cls`` (warnings as a tuple)."""
    out = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
    if "warnings" in out:
        out["warnings"] = tuple(out["warnings"])
    return out


def problems(items: list[dict[str, Any]]) -> list[Problem]:
    """Problems from their dicts."""
    return [Problem(**p) for p in items]


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
