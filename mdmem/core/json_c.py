"""JSON on the interpreter's C accelerator (``_json``) alone: the served prompt hook's codec, without ``re``.

``json`` imports ``re`` (its decoder, scanner and encoder each compile patterns at import), a tenth of
what the prompt hook costs when a server answers it. This reads and writes what the hook exchanges:
objects, arrays, strings, numbers, true, false and null, as ``json.loads``/``json.dumps`` do.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:
    import _json as _c

    encode_basestring: Any = _c.encode_basestring
    encode_basestring_ascii: Any = _c.encode_basestring_ascii
    make_scanner: Any = _c.make_scanner
except ImportError:  # an interpreter without the accelerator: the json module does the same
    from json.encoder import py_encode_basestring as encode_basestring
    from json.encoder import py_encode_basestring_ascii as encode_basestring_ascii

    make_scanner = None

_SPACE = " \t\n\r"
_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


class _Context:
    """What ``_json.make_scanner`` reads from a decoder: json.loads's defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


_scan = make_scanner(_Context()) if make_scanner is not None else None


def loads(text: str) -> object:
    """``json.loads(text)`` for a str; ``ValueError`` for anything that is not one JSON document."""
    if _scan is None:
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_SPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as exc:
        raise ValueError(f"not JSON at character {exc.value}") from None
    if text[end:].strip(_SPACE):
        raise ValueError(f"extra data after the JSON at character {end}")
    return value


def dumps(value: object, *, ensure_ascii: bool = True) -> str:
    """``json.dumps(value, ensure_ascii=...)`` for dicts (string keys), lists, tuples, strings, numbers,
    booleans and None; ``TypeError`` for anything else."""
    text = encode_basestring_ascii if ensure_ascii else encode_basestring
    parts: list[str] = []

    def put(v: object) -> None:
        if isinstance(v, str):
            parts.append(text(v))
        elif v is None:
            parts.append("null")
        elif v is True:
            parts.append("true")
        elif v is False:
            parts.append("false")
        elif isinstance(v, int):
            parts.append(int.__repr__(v))
        elif isinstance(v, float):
            parts.append(float.__repr__(v) if v == v and v not in (float("inf"), float("-inf")) else _constant(v))
        elif isinstance(v, dict):
            parts.append("{")
            for i, (k, item) in enumerate(v.items()):
                if not isinstance(k, str):
                    raise TypeError(f"keys must be str, not {type(k).__name__}")
                parts.append((", " if i else "") + text(k) + ": ")
                put(item)
            parts.append("}")
        elif isinstance(v, (list, tuple)):
            parts.append("[")
            for i, item in enumerate(v):
                if i:
                    parts.append(", ")
                put(item)
            parts.append("]")
        else:
            raise TypeError(f"Object of type {type(v).__name__} is not JSON serializable")

    put(value)
    return "".join(parts)


def _constant(v: float) -> str:
    return "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")
