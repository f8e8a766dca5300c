"""Issue 17, the pure part: external references normalised in one place (``refs.classify``), found in a
note's frontmatter and body (not in code), and person identities with their derived forms and clashes."""

from __future__ import annotations

import pytest

from mdmem.core.links import analyze_body
from mdmem.core.note import parse_note
from mdmem.core.refs import (
    AS_WRITTEN,
    BODY,
    DERIVED,
    FRONTMATTER,
    IdentityClash,
    Ref,
    classify,
    identity_keys,
    mention_key,
    note_refs,
    person_index,
    text_refs,
)


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        # URLs: http and https alike, host case, www., default port, fragment, trailing slash, path encoding
        ("https://example.com/a", ("url", "https://example.com/a")),
        ("http://example.com/a/", ("url", "https://example.com/a")),
        ("HTTPS://WWW.Example.COM/a#section", ("url", "https://example.com/a")),
        ("https://example.com:443/a", ("url", "https://example.com/a")),
        ("http://example.com:80/a", ("url", "https://example.com/a")),
        ("http://example.com:8080/a", ("url", "https://example.com:8080/a")),
        ("https://example.com/", ("url", "https://example.com")),
        ("www.example.com/a", ("url", "https://example.com/a")),
        ("<https://example.com/a>", ("url", "https://example.com/a")),
        ("https://example.com/ü", ("url", "https://example.com/%C3%BC")),
        ("https://example.com/%c3%bc", ("url", "https://example.com/%C3%BC")),
        ("https://example.com/Path/Case", ("url", "https://example.com/Path/Case")),  # a path's case matters
        ("https://example.com/search?q=Mdmem", ("url", "https://example.com/search?q=Mdmem")),
        ("ftp://Files.Example.com/pub/", ("url", "ftp://files.example.com/pub")),
        # e-mail addresses: case-insensitive, mailto: and its query dropped
        ("alice@example.com", ("email", "alice@example.com")),
        ("Alice@Example.COM", ("email", "alice@example.com")),
        ("mailto:Alice@example.com?subject=hi", ("email", "alice@example.com")),
        ("<alice@example.com>", ("email", "alice@example.com")),
        # tickets upper-case; an issue of a repository
        ("PAY-1234", ("ticket", "PAY-1234")),
        ("pay-1234", ("ticket", "PAY-1234")),
        ("Acme/Web#42", ("ticket", "acme/web#42")),
        # DOIs in every form, case-insensitive as DOIs are
        ("doi:10.1000/XYZ.1", ("doi", "10.1000/xyz.1")),
        ("DOI: 10.1000/xyz.1", ("doi", "10.1000/xyz.1")),
        ("https://doi.org/10.1000/xyz.1", ("doi", "10.1000/xyz.1")),
        ("http://dx.doi.org/10.1000/XYZ.1", ("doi", "10.1000/xyz.1")),
        ("10.1000/xyz.1", ("doi", "10.1000/xyz.1")),
        # file paths as written
        ("/etc/hosts", ("path", "/etc/hosts")),
        ("~/notes/Plan.md", ("path", "~/notes/Plan.md")),
        ("docs/Spec.pdf", ("path", "docs/Spec.pdf")),
        ("spec.pdf", ("path", "spec.pdf")),
        ("docs/Retry Plan.pdf", ("path", "docs/Retry Plan.pdf")),
        ("Q3 budget / forecast", ("other", "q3 budget / forecast")),
        ("C:\\Users\\a.txt", ("path", "C:\\Users\\a.txt")),
        ("file:///tmp/x.pdf", ("path", "/tmp/x.pdf")),
        # handles and ids in other systems, case-folded
        ("@Alice", ("handle", "@alice")),
        ("github:Alice", ("id", "github:alice")),
        ("hey:inv-2026-003", ("id", "hey:inv-2026-003")),
        # anything else: its words, case-folded
        ("The  Big Report", ("other", "the big report")),
        ("   ", None),
    ],
)
def test_classify_normalises_every_written_form(written: str, expected: tuple[str, str] | None) -> None:
    assert classify(written) == expected


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://www.example.com/docs/#intro", "https://EXAMPLE.com/docs"),
        ("mailto:Bob@Example.org", "bob@example.org"),
        ("ops-7", "OPS-7"),
        ("doi:10.5555/ABC", "https://doi.org/10.5555/abc"),
    ],
)
def test_written_forms_of_one_thing_are_one(a: str, b: str) -> None:
    assert classify(a) == classify(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://example.com/a", "https://example.com/b"),
        ("https://example.com/Docs", "https://example.com/docs"),  # a path's case is the server's business
        ("https://example.com:8080/a", "https://example.com/a"),
        ("docs/Spec.pdf", "docs/spec.pdf"),  # paths as written
        ("PAY-1234", "PAY-12345"),
    ],
)
def test_different_things_stay_apart(a: str, b: str) -> None:
    assert classify(a) != classify(b)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("See https://example.com/a.", ["https://example.com/a"]),
        ("(see https://en.wikipedia.org/wiki/Foo_(bar))", ["https://en.wikipedia.org/wiki/Foo_(bar)"]),
        ("at www.example.com/x, then", ["www.example.com/x"]),
        ("mail Alice@Example.com; or bob@x.org!", ["Alice@Example.com", "bob@x.org"]),
        ("https://user@example.com/x", ["https://user@example.com/x"]),  # the address is the URL's
        ("@alice and alice@ and https:// alone", []),
    ],
)
def test_text_refs_in_prose(text: str, found: list[str]) -> None:
    assert text_refs(text) == found


def test_body_urls_count_outside_code_only() -> None:
    body = (
        "See [the docs](http://www.Example.com/docs/#intro) and https://bare.example/x.\n\n"
        "Inline `https://inline.example/no` is code.\n\n"
        "```\nhttps://fenced.example/no\nalice@fenced.example\n```\n\n"
        "    https://indented.example/no\n\n"
        "Mail <carol@example.com> or [Dan](mailto:dan@example.com); a [[Wiki link]]; ![img](https://img.example/i.png)\n"
    )
    assert analyze_body(body).refs == [
        "http://www.Example.com/docs/#intro",
        "https://bare.example/x",
        "mailto:carol@example.com",
        "carol@example.com",
        "mailto:dan@example.com",
    ]


def test_note_refs_from_frontmatter_and_body_once_per_origin() -> None:
    note = parse_note(
        "---\nrefs: [PAY-1234, 'https://www.example.com/a/', pay-1234]\n---\n"
        "Fixed in https://example.com/a#x and http://example.com/a.\n",
        "n.md",
    )
    assert note.refs == ["PAY-1234", "https://www.example.com/a/", "pay-1234"]
    assert note_refs(note.refs, note.body_refs) == [
        Ref("ticket", "PAY-1234", "PAY-1234", FRONTMATTER),
        Ref("url", "https://example.com/a", "https://www.example.com/a/", FRONTMATTER),
        Ref("url", "https://example.com/a", "https://example.com/a#x", BODY),
    ]


def test_refs_and_identities_read_as_lists_or_comma_separated_text() -> None:
    note = parse_note(
        "---\ntype: person\nrefs: https://a.example, PAY-1\nidentities: Alice Smith, alice@example.com\n---\n", "p.md"
    )
    assert note.refs == ["https://a.example", "PAY-1"]
    assert note.identities == ["Alice Smith", "alice@example.com"]  # a name with a space is one identity
    assert not note.problems


def test_identities_belong_on_person_notes() -> None:
    note = parse_note("---\nidentities: [alice@example.com]\n---\n", "n.md")
    assert [(p.field, "person" in p.fix) for p in note.problems] == [("identities", True)]


def test_a_bad_refs_item_is_reported_and_the_rest_kept() -> None:
    note = parse_note("---\nrefs: [PAY-1, {a: b}, https://x.example]\n---\n", "n.md")
    assert note.refs == ["PAY-1", "https://x.example"]
    assert [p.field for p in note.problems] == ["refs[1]"]


@pytest.mark.parametrize(
    ("written", "keys"),
    [
        ("Alice Smith", [("alice smith", AS_WRITTEN)]),
        ("alice@Example.com", [("alice@example.com", AS_WRITTEN)]),
        ("mailto:alice@example.com", [("alice@example.com", AS_WRITTEN)]),
        ("@Alice", [("@alice", AS_WRITTEN), ("alice", DERIVED)]),
        ("github:Alice", [("github:alice", AS_WRITTEN), ("@alice", DERIVED), ("alice", DERIVED)]),
        ("https://www.github.com/alice/", [("https://github.com/alice", AS_WRITTEN)]),
        ("", []),
    ],
)
def test_identity_keys(written: str, keys: list[tuple[str, int]]) -> None:
    assert identity_keys(written) == keys


@pytest.mark.parametrize(
    ("mention", "key"),
    [
        ("ALICE  Smith", "alice smith"),
        ("[[Alice Smith|Al]]", "alice smith"),
        ("mailto:Alice@Example.com", "alice@example.com"),
        ("@alice", "@alice"),
        ("http://www.github.com/alice/", "https://github.com/alice"),
    ],
)
def test_mention_key(mention: str, key: str) -> None:
    assert mention_key(mention) == key


def test_person_index_resolves_clashes_deterministically() -> None:
    rows = [
        ("people/b.md", "alice@example.com", AS_WRITTEN),
        ("people/a.md", "alice@example.com", AS_WRITTEN),
        ("people/a.md", "alice", DERIVED),
        ("people/c.md", "alice", AS_WRITTEN),  # a name beats a derived form
        ("people/b.md", "@bo", AS_WRITTEN),
    ]
    index, clashes = person_index(rows)
    assert index == {"alice@example.com": "people/a.md", "alice": "people/c.md", "@bo": "people/b.md"}
    assert clashes == [IdentityClash("alice@example.com", "people/a.md", ("people/b.md",))]
    assert person_index(reversed(rows)) == (index, clashes)  # the order rows come in does not matter


@pytest.mark.parametrize(
    ("url", "target"),
    [
        ("https://til.example.net/sqlite/enabling-wal", "sqlite/enabling-wal"),
        ("https://til.example.net/sqlite/enabling-wal?x=1", "sqlite/enabling-wal"),
        ("https://til.example.net/python/pip%20cache.html", "python/pip cache"),
        ("https://til.example.net/python/index", "python"),
        ("https://til.example.net/sqlite/reindex", "sqlite/reindex"),
        ("https://til.example.net", None),  # the site's home page is no note
        ("https://til.example.network/sqlite/wal", None),  # another host that only starts alike
        ("https://example.com/sqlite/wal", None),
        ("https://docs.example.com/guide/setup", "handbook/setup"),  # under a folder's own site
    ],
)
def test_site_target_maps_a_published_page_to_its_note(url: str, target: str | None) -> None:
    from mdmem.core.refs import normalize_url, site_target

    sites = (("https://til.example.net", ""), ("https://docs.example.com/guide", "handbook"))
    assert site_target(normalize_url(url), sites) == target
