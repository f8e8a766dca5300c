"""Note parsing and writing: bad input never stops a note, writes keep the user's text."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mdmem.core.note import parse_note, render_note, set_fields, split_frontmatter

WITH_COMMENTS = """---
id: m-1   # stable id
title: Use Hotwire
custom: {nested: [1, 2]}   # unknown key
tags:
  - frontend
  - arch
salience: 0.8
---
# Use Hotwire

Body with  double  spaces, trailing space 
and a [[Link|label]].
"""


def test_full_frontmatter_is_read() -> None:
    n = parse_note(WITH_COMMENTS, "notes/a.md")
    assert (n.id, n.title, n.salience, n.tags) == ("m-1", "Use Hotwire", 0.8, ["frontend", "arch"])
    assert n.has_id and not n.problems
    assert [(ln.target, ln.label, ln.type) for ln in n.links] == [("Link", "label", "mentions")]
    assert [h.text for h in n.headings] == ["Use Hotwire"]


def test_no_frontmatter_uses_h1_then_stem_for_title() -> None:
    assert parse_note("# Heading title\n\nx", "a/b.md").title == "Heading title"
    n = parse_note("just text", "a/some-note.md")
    assert (n.title, n.id, n.type, n.salience) == ("some-note", "a/some-note", "note", 0.5)


@pytest.mark.parametrize(
    ("frontmatter", "field", "check"),
    [
        ("salience: 7", "salience", lambda n: n.salience == 0.5),
        ("pinned: maybe", "pinned", lambda n: n.pinned is False),
        ("created: next tuesday", "created", lambda n: n.created is None),
        ("links: just a string", "links", lambda n: [ln for ln in n.links if ln.type != "mentions"] == []),
        ("type: banana", "type", lambda n: n.type == "note"),
        ("scope: everywhere!", "scope", lambda n: n.scope == "global"),
        ("tags: {a: 1}", "tags", lambda n: n.tags == []),
        ("status: deleted", "status", lambda n: n.status == "active"),
    ],
)
def test_bad_values_get_defaults_and_a_problem(frontmatter: str, field: str, check) -> None:  # type: ignore[no-untyped-def]
    n = parse_note(f"---\n{frontmatter}\n---\nbody words\n", "x.md")
    assert check(n)
    assert [p.field for p in n.problems] == [field]
    assert n.problems[0].fix
    assert "body words" in n.text


def test_broken_yaml_keeps_the_body_and_names_the_line() -> None:
    n = parse_note("---\ntitle: ok\ntags: [unclosed\n---\nzebra migration\n", "b.md")
    assert "zebra migration" in n.text
    assert n.problems[0].field == "frontmatter" and "line" in n.problems[0].message


def test_unclosed_frontmatter_is_reported() -> None:
    n = parse_note("---\ntitle: x\nno closing fence\n", "u.md")
    assert n.problems and n.problems[0].field == "frontmatter"


def test_merge_conflict_markers_are_reported() -> None:
    n = parse_note("a\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> b\n", "c.md")
    assert [p.field for p in n.problems] == ["body"]


def test_yaml_dates_become_iso_strings() -> None:
    n = parse_note("---\ncreated: 2025-10-24\nupdated: 2025-10-24T10:00:00+02:00\n---\n", "d.md")
    assert (n.created, n.updated) == ("2025-10-24", "2025-10-24T08:00:00Z")


def test_links_frontmatter_forms() -> None:
    text = (
        '---\nlinks:\n  - {to: "[[Budget]]", type: depends_on, reason: money}\n  - m-2\n'
        "  - [[Bare wikilink]]\nsupersedes: m-0\n---\n"
    )
    n = parse_note(text, "l.md")
    got = [(ln.target, ln.type, ln.reason) for ln in n.links]
    assert got == [
        ("m-0", "supersedes", None),
        ("Budget", "depends_on", "money"),
        ("m-2", "related", None),
        ("Bare wikilink", "related", None),
    ]


def test_body_links_ignore_code_and_external_urls() -> None:
    body = "[[A]] [b](b.md) [c](https://x.org/c.md) `[[D]]`\n\n```\n[[E]]\n```\n#tag #123 x#no"
    n = parse_note(body, "n.md")
    assert [ln.target for ln in n.links] == ["A", "b.md"]
    assert n.tags == ["tag"]


def test_a_markdown_links_words_are_its_label() -> None:
    # Like a wikilink's ``[[target|label]]``: the anchor text another note names this one with (the
    # graph's edges, ``eval --self``'s anchor queries), beyond MARKDOWN_MAX too; an image has none.
    from mdmem.core.links import MARKDOWN_MAX, analyze_body

    body = "See [the **deploy** `runbook`](ops/deploy.md#Steps), ![a chart](c.png) and [](e.md)."
    want = [("ops/deploy.md", "the deploy runbook", "Steps"), ("c.png", None, None), ("e.md", None, None)]
    assert [(ln.target, ln.label, ln.heading) for ln in analyze_body(body).links] == want
    far = "word " * (MARKDOWN_MAX // 5) + "\n\nand [the runbook](ops/deploy.md)"
    assert [(ln.target, ln.label) for ln in analyze_body(far).links] == [("ops/deploy.md", "the runbook")]


def test_set_fields_edits_only_the_keys_it_sets() -> None:
    out = set_fields(WITH_COMMENTS, {"salience": 0.9, "pinned": True, "id": "m-2"})
    assert out == WITH_COMMENTS.replace("salience: 0.8", "salience: 0.9").replace(
        "id: m-1   # stable id", "id: m-2   # stable id"
    ).replace("salience: 0.9\n", "salience: 0.9\npinned: true\n")


def test_set_fields_replaces_block_values_and_removes_keys() -> None:
    out = set_fields(WITH_COMMENTS, {"tags": ["x"], "custom": None})
    assert "tags: [x]\nsalience: 0.8" in out
    assert "custom" not in out and "# stable id" in out
    assert out.endswith(WITH_COMMENTS.split("---\n", 2)[2])


def test_set_fields_on_a_note_without_frontmatter_prepends_a_block() -> None:
    out = set_fields("plain body\n", {"pinned": True})
    assert out == "---\npinned: true\n---\nplain body\n"


def test_crlf_notes_keep_their_line_endings() -> None:
    text = "---\r\ntitle: a\r\n---\r\nbody\r\n"
    out = set_fields(text, {"pinned": True})
    assert out == "---\r\ntitle: a\r\npinned: true\r\n---\r\nbody\r\n"
    assert parse_note(out, "c.md").pinned


def test_render_note_round_trips() -> None:
    meta = {
        "id": "m-1",
        "title": "T: with colon #hash",
        "tags": ["a b", "c"],
        "created": "2026-01-01T10:00:00Z",
        "salience": 0.25,
        "entities": ["Ü"],
    }
    n = parse_note(render_note(meta, "body"), "r.md")
    assert (n.id, n.title, n.tags, n.created, n.salience, n.entities) == (
        "m-1",
        "T: with colon #hash",
        ["a b", "c"],
        "2026-01-01T10:00:00Z",
        0.25,
        ["Ü"],
    )


scalars = st.one_of(
    st.text(alphabet=string.ascii_letters + string.digits + " :#-'\"[]{}é数", min_size=0, max_size=20),
    st.integers(-1000, 1000),
    st.booleans(),
    st.floats(0, 1, allow_nan=False),
    st.lists(st.text(alphabet=string.ascii_letters + " ", max_size=8), max_size=3),
)
keys = st.sampled_from(["title", "salience", "pinned", "custom", "tags", "x_y", "notes"])


@settings(max_examples=200, deadline=None)
@given(updates=st.dictionaries(keys, scalars, max_size=4), body=st.text(max_size=200))
def test_set_fields_round_trip(updates: dict, body: str) -> None:  # type: ignore[type-arg]
    """Any update leaves other keys and the body untouched and reads back as written."""
    import yaml

    original = WITH_COMMENTS.replace("Body with", body.replace("---", "- - -") + " Body with")
    out = set_fields(original, updates)
    fm, new_body, _ = split_frontmatter(out)
    assert new_body == split_frontmatter(original)[1]
    data = yaml.safe_load(fm or "") or {}
    before = yaml.safe_load(split_frontmatter(original)[0] or "")
    for k, v in before.items():
        if k not in updates:
            assert data[k] == v
    for k, v in updates.items():
        assert data[k] == v


# -- ids and timestamps ----------------------------------------------------------------------------

CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def id_number(nid: str) -> int:
    """The number a note id spells in Crockford base32."""
    n = 0
    for ch in nid.removeprefix("m-"):
        n = n * 32 + CROCKFORD.index(ch)
    return n


def test_new_id_has_its_shape() -> None:
    """``m-`` and 12 lower-case Crockford base32 characters (no i, l, o, u)."""
    import re

    from mdmem.core.note import new_id

    ids = [new_id() for _ in range(100)]
    assert all(re.fullmatch(r"m-[0-9a-hjkmnp-tv-z]{12}", i) for i in ids), ids[:3]


def test_new_ids_of_one_millisecond_differ_only_in_the_last_three_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nine characters of time, then three random ones (15 bits: a repeat within a millisecond is possible,
    which is why ``IndexStore.new_id`` checks the catalogue)."""
    import time

    from mdmem.core.note import new_id

    monkeypatch.setattr(time, "time", lambda: 1_764_511_351.1235)
    ids = {new_id() for _ in range(50)}
    assert len({i[:11] for i in ids}) == 1 and len({i[11:] for i in ids}) > 1


@pytest.mark.parametrize("ms", [0, 1, 999, 1_700_000_000_000, 1_764_511_351_123, 32_000_000_000_000])
def test_new_id_carries_its_millisecond(monkeypatch: pytest.MonkeyPatch, ms: int) -> None:
    """All but the last 15 bits of an id are the creation time in milliseconds."""
    import time

    from mdmem.core.note import new_id

    monkeypatch.setattr(time, "time", lambda: (ms + 0.5) / 1000)
    assert id_number(new_id()) >> 15 == ms


def test_new_ids_sort_by_creation_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ids made a millisecond or more apart sort as they were made (as text, the way files list)."""
    import time

    from mdmem.core.note import new_id

    ids = []
    for ms in (0, 1, 31, 32, 1023, 1024, 1_700_000_000_000, 1_700_000_000_001, 1_700_000_001_000, 32_000_000_000_000):
        monkeypatch.setattr(time, "time", lambda ms=ms: (ms + 0.5) / 1000)
        ids.append(new_id())
    assert sorted(ids) == ids


@pytest.mark.parametrize(
    ("ts", "iso"),
    [
        (None, None),
        (0, "1970-01-01T00:00:00Z"),
        (0.999, "1970-01-01T00:00:00Z"),  # to the second, never rounded up
        (-1, "1969-12-31T23:59:59Z"),
        (951782400, "2000-02-29T00:00:00Z"),
        (1764511351, "2025-11-30T14:02:31Z"),
        (1764511351.7, "2025-11-30T14:02:31Z"),
    ],
)
def test_iso_from_timestamp(ts: float | None, iso: str | None) -> None:
    """Timestamps as mdmem writes times: ISO 8601, UTC, to the second, with a Z."""
    from mdmem.core.note import iso_from_timestamp

    assert iso_from_timestamp(ts) == iso


@given(st.integers(min_value=-(2**31), max_value=2**35))
def test_iso_from_timestamp_round_trips(ts: int) -> None:
    """Reading back a written time gives the same second."""
    from mdmem.core.note import iso_from_timestamp, iso_to_timestamp

    assert iso_to_timestamp(iso_from_timestamp(ts)) == ts


def test_now_iso_is_the_current_second_in_the_written_format() -> None:
    """``now_iso`` is ``iso_from_timestamp`` of the clock."""
    import time

    from mdmem.core.note import iso_from_timestamp, now_iso

    before = iso_from_timestamp(time.time())
    now = now_iso()
    after = iso_from_timestamp(time.time())
    assert before is not None and after is not None and before <= now <= after
    assert len(now) == 20 and now.endswith("Z")


def test_list_field_errors_name_the_item_what_yaml_made_of_it_and_how_to_quote_it() -> None:
    """Issue 13: "aliases must be a list of strings, got list" when the list held ``Yes`` (a boolean to
    YAML) and a ``key: value`` string (a mapping). Each bad item is named; the good ones are kept."""
    n = parse_note("---\naliases:\n  - Yes\n  - Obsidian: the app\n  - Fine\n  - 2024-01-02\n---\nbody\n", "x.md")
    assert n.aliases == ["Fine", "2024-01-02"]
    by_field = {p.field: p for p in n.problems}
    assert set(by_field) == {"aliases[0]", "aliases[1]"}
    yes, mapping = by_field["aliases[0]"], by_field["aliases[1]"]
    assert "item 1" in yes.message and "boolean true" in yes.message and "quote" in yes.fix and '"Yes"' in yes.fix
    assert "item 2" in mapping.message and "'Obsidian: the app'" in mapping.message
    assert mapping.fix == 'quote it: - "Obsidian: the app"'


@pytest.mark.parametrize(
    ("frontmatter", "field", "words"),
    [
        ("tags: [ok, no]", "tags[1]", ["item 2", "boolean false", '"No"']),
        ("entities: [[a, b]]", "entities[0]", ["item 1", "a list ['a', 'b']"]),
        ("tags: {a: 1}", "tags", ["a mapping 'a: 1'", 'tags: "a: 1"']),
        ("aliases: on", "aliases", ["boolean true", 'aliases: "yes"']),
        ("links: just a string", "links", ["the text 'just a string'"]),
    ],
)
def test_every_list_field_says_what_yaml_read(frontmatter: str, field: str, words: list[str]) -> None:
    n = parse_note(f"---\n{frontmatter}\n---\n", "x.md")
    [problem] = n.problems
    assert problem.field == field
    for w in words:
        assert w in problem.message + " " + problem.fix, (w, problem)


@pytest.mark.parametrize(
    ("front", "links"),
    [
        ('parent: ["[[habit]]"]', [("habit", "parent", None, None)]),
        ('up: "[[A|the a]]"', [("A", "up", "the a", None)]),
        ("up: [[A]]", [("A", "up", None, None)]),  # unquoted: YAML reads [["A"]]
        ("up:\n  - [[A]]\n  - '[[B#Part]]'", [("A", "up", None, None), ("B", "up", None, "Part")]),
        ("related: [[[A]], [[B|b]]]", [("A", "related", None, None), ("B", "related", "b", None)]),
        ('related: "[[A]], [[B]]"', [("A", "related", None, None), ("B", "related", None, None)]),
        ('See Also: "see [[A#h|x]] too"', [("A", "See Also", "x", "h")]),
        ('tags: ["[[A]]"]\naliases: ["[[B]]"]', []),  # types of their own, no links
        ("meta: {up: '[[A]]'}\nn: 3\nok: true\nday: 2024-01-02\nplain: [A, B]", []),
        ('links: ["[[A]]"]\nsupersedes: "[[B]]"', [("B", "supersedes", None, None), ("A", "related", None, None)]),
    ],
)
def test_links_in_properties(front: str, links: list[tuple[str, str, str | None, str | None]]) -> None:
    note = parse_note(f"---\n{front}\n---\nBody.\n", "n.md")
    assert [(ln.target, ln.type, ln.label, ln.heading) for ln in note.links] == links
    assert all(ln.property == ln.type for ln in note.links if ln.type not in ("related", "supersedes"))
