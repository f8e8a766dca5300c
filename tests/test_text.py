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


@pytest.mark.parametrize(("title", "slug"), [
    ("Use Hotwire!", "use-hotwire"),
    ("  Hello,   World  ", "hello-world"),
    ("snake_case and--dashes", "snake-case-and-dashes"),
    ("Café Déjà Vu", "café-déjà-vu"),
    ("Straße", "strasse"),
    ("数据库迁移计划", "数据库迁移计划"),
    ("C# tips: v1.2", "c-tips-v12"),
    ("🚀 Launch day", "launch-day"),
    ("../../etc/passwd", "etcpasswd"),
    ("!!!", "note"),
    ("", "note"),
    ("___", "note"),
    ("a" * 100, "a" * 80),
    ("a" * 79 + " b", "a" * 79),  # cut at 80 characters, then no dash left at the end
    ("𠀀" * 100, "𠀀" * 50),  # 4-byte characters: cut to 200 bytes
])
def test_slugify(title: str, slug: str) -> None:
    """A file-name slug keeps letters of every script, drops the rest, and fits a file name."""
    from mdmem.text import slugify

    assert slugify(title) == slug


@settings(max_examples=200)
@given(st.text())
def test_slugify_always_gives_a_safe_file_name(title: str) -> None:
    """Words joined by single dashes: no separator, no dot, no empty name, at most 80 chars and 200 bytes."""
    import re

    from mdmem.text import slugify

    slug = slugify(title)
    assert re.fullmatch(r"[^\W_]+(-[^\W_]+)*", slug), slug
    assert len(slug) <= 80 and len(slug.encode()) <= 200
