"""Tokenizer and snippets: any language, identifiers, highlighting."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mdmem.core.links import display_text
from mdmem.core.text import edit_distance, estimate_tokens, index_terms, looks_like_name, snippet, terms, tokenize


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
        # Stop words are words as written: the stemmer makes "does" and "why" into "doe" and "whi",
        # which no stop list holds, so they were indexed; a name spelled like a stem stays.
        ("why does it fail", ["fail"]),
        ("Why_Does fail", ["why_does", "fail"]),
        ("John Doe is doing it", ["john", "doe"]),
        ("한국어 텍스트", ["한국", "국어", "텍스", "스트"]),
    ],
)
def test_tokenize(text: str, expected: list[str]) -> None:
    assert [t.text for t in tokenize(text)] == expected


def test_token_spans_point_at_source() -> None:
    text = "see ERR_X_42 now"
    tok = next(t for t in tokenize(text) if t.text == "err_x_42")
    assert text[tok.start : tok.end] == "ERR_X_42"


def test_no_stop_word_reaches_the_index_as_written_or_stemmed() -> None:
    from mdmem.core.text import STOPWORDS, normalize_term

    for word in STOPWORDS:
        assert index_terms(word) == [] and index_terms(word.title()) == [], word
        assert [t.text for t in tokenize(word, stopwords=False)] == [normalize_term(word)]


def test_terms_dedupe_in_order() -> None:
    assert terms("Deploy deploys deployed deployment") == ["deploy"]  # Snowball English stems
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


def test_snippet_never_nests_a_match_in_the_authors_emphasis() -> None:
    # Issue 13: "**Open local **graph****" — a reader could not tell the match from the bold.
    assert snippet(display_text("**Open local graph** today"), {"graph"}) == "Open local **graph** today"
    out = snippet(display_text("We chose **Hotwire** over React; Hotwire ships."), set(terms("hotwire")))
    assert out == "We chose **Hotwire** over React; **Hotwire** ships."
    # Asterisks that are text (code) are never taken for marks.
    out = snippet("x = 2**10 graph **", {"graph"})
    assert out.count("**") == 2 and "**graph**" in out and "2\u2217\u221710" in out


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab *_#[]|<>\n`", max_size=60))
def test_snippet_marks_are_only_the_matches(text: str) -> None:
    """Split at the marks, the odd parts are exactly the query's matches: nothing nests, nothing leaks."""
    parts = snippet(text, {"a"}).split("**")
    assert len(parts) % 2 == 1
    assert all(p == "a" for p in parts[1::2])
    assert all("a" not in [t.text for t in tokenize(p)] for p in parts[0::2])


@pytest.mark.parametrize(
    ("markdown", "shown"),
    [
        ("**Open local graph**", "Open local graph"),
        ("*it* _em_ ***both*** ~~gone~~ ==hi== snake_case_name 2*3*4", "it em both gone hi snake_case_name 2*3*4"),
        ("## Heading ##", "Heading"),
        ('see <span class="git-footer">the footer</span><br>next', "see the footer next"),
        ("<div>\nInside &amp; out\n</div>", "Inside & out"),
        (
            "[[target|label]] [[Plain]] [[Note#Part]] [[#Local]] [[Note#^block1]]",
            "label Plain Note › Part Local Note › block1",
        ),
        ("![[image.png]] ![[lucide-table.svg#icon]] before ![alt](img/x.png) after", "before  after"),
        ("[text](https://example.com) [ref][1] <https://x.org/a>", "text ref https://x.org/a"),
        ("- [ ] task\n* bullet\n1. first\n> quoted", "task\nbullet\nfirst\nquoted"),
        ("> [!warning]- Callout title\n> body", "Callout title\nbody"),
        ("| Name | Link |\n| --- | :-: |\n| a \\| b | [[x\\|shown]] |", "Name · Link\na | b · shown"),
        ("a | b but no table", "a | b but no table"),
        ("text <!-- hidden\nstill hidden --> %%secret%% end ^abc-1", "text   end"),
        ("before\n\n---\n\nafter", "before\n\n\n\nafter"),
        ("`**code**` and `a|b`", "**code** and a|b"),
        ("```python\nx = 2**10  # <b>\n```\n**after**", "x = 2**10  # <b>\nafter"),
        ("\\*not em\\* \\[[x]]", "*not em* [[x]]"),
        ("footnote[^1] here", "footnote here"),
    ],
)
def test_display_text_shows_text_not_syntax(markdown: str, shown: str) -> None:
    assert display_text(markdown) == shown


@pytest.mark.parametrize(
    ("title", "slug"),
    [
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
    ],
)
def test_slugify(title: str, slug: str) -> None:
    """A file-name slug keeps letters of every script, drops the rest, and fits a file name."""
    from mdmem.core.text import slugify

    assert slugify(title) == slug


@settings(max_examples=200)
@given(st.text())
def test_slugify_always_gives_a_safe_file_name(title: str) -> None:
    """Words joined by single dashes: no separator, no dot, no empty name, at most 80 chars and 200 bytes."""
    import re

    from mdmem.core.text import slugify

    slug = slugify(title)
    assert re.fullmatch(r"[^\W_]+(-[^\W_]+)*", slug), slug
    assert len(slug) <= 80 and len(slug.encode()) <= 200


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("dataview", "dataview", 0),
        ("dataveiw", "dataview", 1),  # swapped neighbours: one edit
        ("obsidain", "obsidian", 1),
        ("lokki", "loki", 1),
        ("recent", "retent", 1),
        ("kitten", "sitting", 3),
        ("", "abc", 3),
        ("ca", "abc", 3),  # optimal string alignment: no edit of a swapped pair again
    ],
)
def test_edit_distance(a: str, b: str, expected: int) -> None:
    assert edit_distance(a, b) == expected == edit_distance(b, a)


@pytest.mark.parametrize(
    ("word", "first", "expected"),
    [
        ("GDPR", False, True),
        ("iOS", True, True),
        ("PagerDuty", True, True),  # capitals inside: a name anywhere
        ("Datadog", False, True),
        ("Datadog", True, False),  # a capital first letter: a name unless it starts the query
        ("account", False, False),
        ("Q2", False, False),
        ("ERR_PAY_504", False, False),
        ("", False, False),
    ],
)
def test_looks_like_name(word: str, first: bool, expected: bool) -> None:
    assert looks_like_name(word, first=first) is expected
