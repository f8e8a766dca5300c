"""rank's filters (``make_filters`` of ``schema.FilterArgs``, ``date_bound``) and fusion arithmetic (pure, tested with tables)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from mdmem.core.errors import MdmemError
from mdmem.core.note import iso_to_timestamp
from mdmem.core.rank import (
    Filters,
    blend,
    clear_winner,
    date_bound,
    flatness,
    make_filters,
    no_answer,
)
from mdmem.core.schema import FILTER_ARGS, INCLUDE_CHOICES, FilterArgs

DAY_END = 86399.999  # a bare date as an upper bound means its last millisecond


def ts(iso: str) -> float:
    value = iso_to_timestamp(iso)
    assert value is not None
    return value


@pytest.mark.parametrize(
    ("value", "end", "expected"),
    [
        (None, False, None),
        ("", False, None),
        (None, True, None),
        ("2026-01-31", False, ts("2026-01-31")),
        ("2026-01-31", True, ts("2026-01-31") + DAY_END),
        ("  2026-01-31 ", False, ts("2026-01-31")),
        (dt.date(2026, 1, 31), False, ts("2026-01-31")),
        (dt.date(2026, 1, 31), True, ts("2026-01-31") + DAY_END),
        ("2026-01-31T10:00:00Z", True, ts("2026-01-31T10:00:00Z")),  # a time is exact, even as an end
        ("2026-01-31T12:00:00+02:00", False, ts("2026-01-31T10:00:00Z")),
        ("2026-01-31T10:00:00", False, ts("2026-01-31T10:00:00Z")),  # no zone: UTC
        (dt.datetime(2026, 1, 31, 10, tzinfo=dt.UTC), False, ts("2026-01-31T10:00:00Z")),
    ],
)
def test_date_bound(value: Any, end: bool, expected: float | None) -> None:
    """A --since/--until/--as-of value as a timestamp; a bare date ends at its last second."""
    assert date_bound(value, "since", end=end) == expected


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("tomorrow", "since"),
        ("31/01/2026", "until"),
        ("2026-02-30", "as-of"),
        ("2026-1-5", "since"),
        (42, "until"),
    ],
)
def test_date_bound_refuses_what_is_not_a_date(value: Any, name: str) -> None:
    """A bad date names the option, the form a date takes and the value given."""
    with pytest.raises(MdmemError, match=rf"^--{name} must be a date like 2026-01-31, got {value!r}\.$"):
        date_bound(value, name)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, Filters()),
        ({"type": "decision"}, Filters(types=("decision",))),
        ({"type": ["decision", "fact"]}, Filters(types=("decision", "fact"))),
        ({"tag": ("a", "b")}, Filters(tags=("a", "b"))),
        ({"scope": "project:x"}, Filters(scopes=("project:x", "global"))),
        ({"scope": ["project:x", "topic:y"]}, Filters(scopes=("project:x", "topic:y", "global"))),
        ({"scope": []}, Filters()),
        ({"status": "archived"}, Filters(statuses=("archived",))),
        (
            {"since": "2026-01-01", "until": "2026-01-31"},
            Filters(since=ts("2026-01-01"), until=ts("2026-01-31") + DAY_END),
        ),
        ({"path": "notes/*.md"}, Filters(path="notes/*.md")),
        ({"include": "archived"}, Filters(include=("archived",))),
        ({"include": list(INCLUDE_CHOICES)}, Filters(include=INCLUDE_CHOICES)),
    ],
)
def test_make_filters(kwargs: dict[str, Any], expected: Filters) -> None:
    """Each argument (a value or a list) lands in its field; a scope lets global notes through too."""
    assert make_filters(FilterArgs.of(**kwargs)) == expected


def test_make_filters_takes_the_time_apart() -> None:
    """``as_of`` is the store's to turn into a time: ``make_filters`` takes that time."""
    assert make_filters(FilterArgs(as_of="2026-01-01"), visible_at=5.0) == Filters(visible_at=5.0)


def test_make_filters_of_nothing_is_empty() -> None:
    """No argument restricts nothing."""
    assert make_filters().empty and not make_filters(FilterArgs(type=("fact",))).empty


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"include": "bogus"}, "--include takes forgotten, archived, snoozed, expired; got bogus."),
        (
            {"include": ["archived", "deleted", "hidden"]},
            "--include takes forgotten, archived, snoozed, expired; got deleted, hidden.",
        ),
        ({"include": "archived,forgotten"}, "got archived,forgotten."),
        ({"since": "last week"}, "--since must be a date like 2026-01-31, got 'last week'."),
        ({"until": "soon"}, "--until must be a date like 2026-01-31, got 'soon'."),
    ],
)
def test_make_filters_refuses_bad_arguments_helpfully(kwargs: dict[str, Any], message: str) -> None:
    """A bad --include lists the choices; a bad date names its option; both quote what was given."""
    with pytest.raises(MdmemError) as exc:
        make_filters(FilterArgs.of(**kwargs))
    assert message in str(exc.value)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({}, {}),
        ({"type": "fact"}, {"type": ["fact"]}),
        ({"type": None, "tag": [], "scope": (), "status": "", "since": "2026-01-01"}, {"since": "2026-01-01"}),
        ({"as_of": "2026-01-01", "include": ["archived"]}, {"as_of": "2026-01-01", "include": ["archived"]}),
        ({"path": "notes", "until": ""}, {"path": "notes"}),
        (
            {k: "x" for k in FILTER_ARGS},
            {k: ["x"] if k in ("type", "tag", "scope", "status", "include") else "x" for k in FILTER_ARGS},
        ),
    ],
)
def test_filter_args_keep_the_set_filters(given: dict[str, Any], expected: dict[str, Any]) -> None:
    """Only filters with a value survive (empty strings and lists are unset); a list field takes one string."""
    assert FilterArgs.of(**given).given() == expected


def test_filter_args_refuse_an_unknown_name_and_round_trip() -> None:
    """A name that is no filter is a TypeError naming the filters; ``to_dict``/``from_dict`` round-trip."""
    with pytest.raises(TypeError, match="unknown filters: limit"):
        FilterArgs.of(limit=3)
    f = FilterArgs.of(type=["fact"], tag="a", since="2026-01-01", as_of="2026-02-01")
    assert (
        FilterArgs.from_dict(f.to_dict())
        == f
        == FilterArgs.of(FilterArgs(type=("fact",)), tag="a", since="2026-01-01", as_of="2026-02-01")
    )


@pytest.mark.parametrize(
    ("best", "expected"),
    [
        (1.0, 0.0),
        (0.5, 0.0),
        (0.4, 0.5),
        (0.3, 1.0),
        (0.0, 1.0),
    ],
)
def test_flatness_rises_as_bm25_matches_less_of_the_query(best: float, expected: float) -> None:
    assert flatness(best, 0.3, 0.5) == pytest.approx(expected)


def test_flatness_with_equal_bounds_is_a_step() -> None:
    assert (flatness(0.39, 0.4, 0.4), flatness(0.4, 0.4, 0.4)) == (1.0, 0.0)


def test_blend_keeps_a_clear_vector_win_that_rrf_buries() -> None:
    # BM25 ranks "answer" 20th of 20 on a paraphrase; the vectors find it far ahead of the rest.
    bm25 = [(f"n{i}", 10.0 - i * 0.1) for i in range(19)] + [("answer", 8.0)]
    cosines = [("answer", 0.55), ("n3", 0.32), ("n7", 0.30)]
    fused = {item: 1 / (60 + rank) for rank, (item, _) in enumerate(bm25, 1)}
    for rank, (item, _) in enumerate(cosines, 1):
        fused[item] += 0.3 / (60 + rank)
    assert max(fused, key=fused.__getitem__) != "answer"
    mixed = blend(fused, bm25, cosines, share=1.0, vector_weight=1.0, floor=0.2)
    assert max(mixed, key=mixed.__getitem__) == "answer"


@pytest.mark.parametrize(
    ("share", "expected"),
    [
        (0.0, {"a": 1.0, "b": 0.5}),  # RRF alone, over its top
        (1.0, {"a": 1 / 1.5, "b": 1.0}),  # a: BM25's best (1); b: half BM25's best + the best cosine (1.5)
        (0.5, {"a": (1.0 + 1 / 1.5) / 2, "b": 0.75}),
    ],
)
def test_blend_share_moves_from_fused_ranks_to_scores(share: float, expected: dict[str, float]) -> None:
    mixed = blend({"a": 0.02, "b": 0.01}, [("a", 4.0), ("b", 2.0)], [("b", 0.6)], share, 1.0, 0.2)
    assert mixed == pytest.approx(expected)


def test_blend_without_lists_is_the_fused_order() -> None:
    assert blend({"a": 0.02, "b": 0.01}, [], [], 0.5, 1.0, 0.2) == pytest.approx({"a": 0.5, "b": 0.25})


def test_blend_by_coverage_keeps_the_vector_win_when_bm25_scores_are_flat() -> None:
    """A paraphrase: every BM25 hit matched one common word (flat scores, little of the query); the
    note the vectors put far ahead holds more of it. By score alone BM25's first stays first."""
    bm25 = [("copy-file", 43.9), ("musicgen", 39.7), ("voice", 12.6)]
    cosines = [("voice", 0.57), ("musicgen", 0.39)]
    fused = {"copy-file": 0.026, "musicgen": 0.020, "voice": 0.019}
    by_score = blend(fused, bm25, cosines, share=1.0, vector_weight=1.0, floor=0.25)
    assert max(by_score, key=by_score.__getitem__) == "musicgen"
    by_coverage = blend(fused, bm25, cosines, 1.0, 1.0, 0.25, {"copy-file": 0.1, "musicgen": 0.23, "voice": 0.59})
    assert max(by_coverage, key=by_coverage.__getitem__) == "voice"


@pytest.mark.parametrize(
    ("cosines", "winner"),
    [
        ([("a", 0.68), ("b", 0.47)], "a"),  # clear: 0.21 ahead
        ([("a", 0.47), ("b", 0.40)], None),  # close: the ranks decide
        ([("a", 0.40), ("b", 0.10)], None),  # far ahead, but not close in meaning
        ([("a", 0.50)], "a"),  # alone, well above the noise floor
        ([], None),
    ],
)
def test_clear_winner(cosines: list[tuple[str, float]], winner: str | None) -> None:
    assert clear_winner(cosines, gap=0.15, least=0.45, floor=0.25) == winner
    assert clear_winner(cosines, gap=0.0, least=0.45, floor=0.25) is None  # 0 turns it off


@pytest.mark.parametrize(
    ("names", "unknown", "coverage", "cosine", "big", "silent"),
    [
        (["Terraform"], 0.3, 0.37, 0.52, True, True),  # a name no note mentions: a DynamoDB note is no answer
        (["Terraform"], 0.3, 0.8, 0.52, True, False),  # … unless a note holds the rest of the question well
        (["Vivaldi"], 0.49, 0.16, 0.56, False, False),  # a chat: the answer may be close in meaning
        (["Jean"], 0.64, 0.21, 0.28, False, True),  # … but nothing is
        ([], 0.53, 0.12, 0.27, True, True),  # half the question is words the vault never uses (sourdough bread)
        ([], 0.32, 0.40, 0.39, True, True),  # a third of it, and nothing close in meaning
        ([], 0.32, 0.68, 0.45, True, False),  # a third of it ("cheaper"), but a note close in meaning
        ([], 0.0, 0.30, 0.20, True, False),  # every word is the vault's: it may be a paraphrase
        ([], 0.67, 0.06, 0.44, False, False),  # a chat ("What might John's financial status be?"): other words
    ],
)
def test_no_answer(names: list[str], unknown: float, coverage: float, cosine: float, big: bool, silent: bool) -> None:
    assert (
        no_answer(
            names,
            unknown,
            coverage,
            cosine,
            big=big,
            covered=0.5,
            strong=0.45,
            share=0.4,
            weak_share=0.3,
            weak_cosine=0.42,
        )
        is silent
    )
