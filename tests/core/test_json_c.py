"""The served hook's codecs without ``re``: JSON on ``_json``, slugs by character class; each as the
library or the regular expressions it stands in for."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mdmem.core.json_c import dumps, loads
from mdmem.core.slug import slugify

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON)
def test_dumps_and_loads_are_the_json_modules(value: object) -> None:
    for ascii_only in (True, False):
        text = dumps(value, ensure_ascii=ascii_only)
        assert text == json.dumps(value, ensure_ascii=ascii_only)
        assert loads(text) == json.loads(text)


@pytest.mark.parametrize("text", ["", "nope", '{"a": 1} x', "[1,", '{"a": "\x01"}', "{'a': 1}"])
def test_loads_refuses_what_json_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        loads(text)


def test_loads_reads_whitespace_and_constants_as_json_does() -> None:
    for text in (' \n {"a": [1, 2.5, "é", null, true]}\r\n', "NaN", "-Infinity"):
        assert repr(loads(text)) == repr(json.loads(text))


def _slug_by_patterns(title: str) -> str:
    s = re.sub(r"[^\w\s-]", "", title.casefold(), flags=re.UNICODE)
    s = re.sub(r"[\s_-]+", "-", s).strip("-")[:80]
    while len(s.encode()) > 200:
        s = s[:-1]
    return s.rstrip("-") or "note"


@pytest.mark.parametrize(
    "title",
    [
        "Use Hotwire!",
        "  --a__b  c--  ",
        "Ünïcödé ß straße",
        "为什么 超时",
        "a\u00a0b\u2003c",
        "x" * 90,
        "𠀀" * 80,
        "!!!",
        "",
    ],
)
def test_slugify_reads_characters_as_the_patterns_did(title: str) -> None:
    assert slugify(title) == _slug_by_patterns(title)


@given(st.text())
def test_slugify_of_any_text_is_the_patterns(title: str) -> None:
    assert slugify(title) == _slug_by_patterns(title)
