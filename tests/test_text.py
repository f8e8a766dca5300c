"""Tokenizer and snippets: any language, identifiers, highlighting."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mdmem.text import estimate_tokens, index_terms, snippet, terms, tokenize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ERR_X_42", ["err_x_42", "err", "x", "42"]),
        ("Café déjà vu", ["cafe", "deja", "vu"]),
        ("deciding decisions", ["decid", "decis"]),
        ("数据库", ["数据", "据库"]),
        ("日", ["日"]),
        ("v1.2.3", ["v1.2.3", "v1", "2", "3"]),
        ("Hotwire与React", ["hotwir", "与", "react"]),
        ("what is the plan", ["plan"]),
        ("한국어 텍스트", ["한국", "국어", "텍스", "스트"]),
    ],
)
def test_tokenize(text: str, expected: list[str]) -> None:
    assert [t.text for t in tokenize(text)] == expected


def test_token_spans_point_at_source() -> None:
    text = "see ERR_X_42 now"
    tok = next(t for t in tokenize(text) if t.text == "err_x_42")
    assert text[tok.start:tok.end] == "ERR_X_42"


def test_terms_dedupe_in_order() -> None:
    assert terms("Deploy deploys deployed") == ["deploi"]  # Porter stems
    assert terms("the of and") == []


def test_snippet_picks_best_paragraph_and_marks_hits() -> None:
    body = "Intro paragraph.\n\nThe cache fails with ERR_X_42 on warmup.\n\nOutro."
    s = snippet(body, set(terms("ERR_X_42 cache")))
    assert s == "The **cache** fails with **ERR_X_42** on warmup."


def test_snippet_windows_long_paragraphs_around_the_hit() -> None:
    body = ("filler " * 200) + "needle here " + ("filler " * 200)
    s = snippet(body, {"needl"}, width=80)
    assert "**needle**" in s and len(s) < 120 and s.startswith("…")


def test_snippet_cjk_highlight() -> None:
    assert "**数据库**" in snippet("我们的数据库很好", set(terms("数据库")))


def test_estimate_tokens() -> None:
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("数据库") == 3


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_index_fast_path_agrees_with_tokenize(text: str) -> None:
    assert index_terms(text) == [t.text for t in tokenize(text)]


def test_snippet_does_not_double_bold_a_word_already_bold_in_the_note() -> None:
    out = snippet("We chose **Hotwire** over React; Hotwire ships.", set(terms("hotwire")))
    assert out == "We chose **Hotwire** over React; **Hotwire** ships."
