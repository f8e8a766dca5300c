"""People named in prose, the pure part: the forms a person's identities take in text, and finding
them outside code (a first name two people share is ambiguous)."""

from __future__ import annotations

import pytest

from mdmem.core.mentions import GIVEN, WRITTEN, find_names, name_forms, prose_names, prose_of


@pytest.mark.parametrize(
    ("written", "forms"),
    [
        ("Ada Lovelace", [("ada lovelace", WRITTEN), ("ada", GIVEN)]),
        ("@countess_ada", [("@countess_ada", WRITTEN)]),
        ("github:adal", [("@adal", WRITTEN)]),
        ("Seán O'Brien", [("seán o brien", WRITTEN), ("seán", GIVEN)]),
        ("Ali", [("ali", WRITTEN)]),
        ("ada@example.com", []),  # an e-mail address is a reference, found as one
        ("https://ada.example.com", []),
        ("R2-D2", []),  # digits: no name people write in prose
    ],
)
def test_name_forms(written: str, forms: list[tuple[str, int]]) -> None:
    assert name_forms(written) == forms


PEOPLE = prose_names(
    [
        ("people/ada.md", ["Ada Lovelace", "@countess_ada"]),
        ("people/yonath.md", ["Ada Yonath"]),
        ("people/will.md", ["Will Turner"]),
        ("people/grace.md", ["Grace Hopper", "Grace"]),
    ]
)


def test_a_name_written_as_such_beats_a_first_name_and_a_shared_first_name_is_ambiguous() -> None:
    assert PEOPLE.who("Ada") == ("people/ada.md", "people/yonath.md")
    assert PEOPLE.who("ada  lovelace") == ("people/ada.md",)
    assert PEOPLE.who("@Countess_Ada") == ("people/ada.md",)
    assert PEOPLE.who("Grace") == ("people/grace.md",)
    assert PEOPLE.who("Lovelace") == ()


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Ada Lovelace reviewed the table.", [("ada lovelace", "Ada Lovelace")]),
        ("Pinged @countess_ada about the order.", [("@countess_ada", "@countess_ada")]),
        ("Ada's numbers were right.", [("ada", "Ada")]),  # found; a shared first name (the caller decides)
        ("I will ask Will tomorrow.", [("will", "Will")]),  # a one-word name counts only capitalised
        ("mail Ada@example.com or see @countess_ada_2 at https://x.org/Ada", []),  # addresses, another handle
        ("Grace  Hopper and GRACE hopper", [("grace hopper", "Grace  Hopper"), ("grace hopper", "GRACE hopper")]),
    ],
)
def test_find_names_in_prose(text: str, found: list[tuple[str, str]]) -> None:
    assert find_names(text, PEOPLE) == found


def test_code_and_wikilinks_are_not_prose() -> None:
    body = (
        "Ada Lovelace wrote it.\n```python\nada = 'Ada Lovelace'\n```\nSee `Ada Lovelace` in the log, "
        "and [[Ada Lovelace]] (a link, an edge of its own).\n"
    )
    assert [f for f, _ in find_names(prose_of(body), PEOPLE)] == ["ada lovelace"]


def test_a_note_full_of_addresses_is_read_in_linear_time() -> None:
    """Each address was blanked by a replace over the whole text, O(addresses × text): 228 KB of
    addresses took 2.5 s, this megabyte would take about a minute. Now one pass."""
    import time

    text = " ".join(f"user{i}@example.com" for i in range(50_000)) + " Ada Lovelace reviewed it."
    start = time.thread_time()
    found = find_names(text, PEOPLE)
    assert time.thread_time() - start < 5.0
    assert ("ada lovelace", "Ada Lovelace") in found
