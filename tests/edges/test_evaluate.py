"""The retrieval-quality harness: metrics, LoCoMo loading, note builders and ``mdmem eval`` end to end."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from mdmem.api.vault import Vault
from mdmem.cli.eval import eval_command
from mdmem.core.eval_data import (
    Query,
    load_locomo,
    locomo_queries,
    normalize_evidence,
    parse_corpus,
    parse_gold,
    parse_locomo,
    parse_session_date,
    resolve_answers,
    session_notes,
    turn_notes,
)
from mdmem.core.note import parse_note
from mdmem.edges.evaluate import (
    Outcome,
    Suite,
    format_table,
    grep_rank,
    index_suite,
    ndcg_at,
    query_words,
    recall_at,
    reciprocal_rank,
    run_suite,
    summarize,
    sync_tree,
)

REAL_LOCOMO = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "locomo10.json"


# -- metrics ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ranked", "relevant", "k", "expected"),
    [
        (["a", "b", "c"], {"a"}, 1, 1.0),
        (["a", "b", "c"], {"b"}, 1, 0.0),
        (["a", "b", "c"], {"b", "c", "z"}, 5, 2 / 3),
        (["a", "b", "c"], {"c", "z"}, 2, 0.0),
        ([], {"a"}, 10, 0.0),
        (["a"], set(), 10, 0.0),
    ],
)
def test_recall_at(ranked: list[str], relevant: set[str], k: int, expected: float) -> None:
    assert recall_at(ranked, relevant, k) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("ranked", "relevant", "expected"),
    [
        (["a", "b", "c"], {"a"}, 1.0),
        (["a", "b", "c"], {"c", "b"}, 0.5),
        (["a", "b", "c"], {"c"}, 1 / 3),
        (["a", "b", "c"], {"z"}, 0.0),
        ([], {"z"}, 0.0),
    ],
)
def test_reciprocal_rank(ranked: list[str], relevant: set[str], expected: float) -> None:
    assert reciprocal_rank(ranked, relevant) == pytest.approx(expected)


def test_ndcg_binary() -> None:
    # relevant at ranks 2 and 3 of 2 relevant: (1/log2 3 + 1/log2 4) / (1 + 1/log2 3)
    expected = (1 / math.log2(3) + 0.5) / (1 + 1 / math.log2(3))
    assert ndcg_at(["x", "a", "b"], {"a": 1, "b": 1}) == pytest.approx(expected)
    assert ndcg_at(["a", "b", "x"], {"a": 1, "b": 1}) == pytest.approx(1.0)
    assert ndcg_at(["x"], {"a": 1}) == 0.0
    assert ndcg_at(["x"], {}) == 0.0


def test_ndcg_graded() -> None:
    gains = {"g3": 3, "g2": 2, "g1": 1}
    # ranked g1, x, g3: DCG = 1/1 + 0 + 3/log2(4) = 2.5; ideal g3, g2, g1 = 3 + 2/log2 3 + 1/2
    ideal = 3 + 2 / math.log2(3) + 0.5
    assert ndcg_at(["g1", "x", "g3"], gains) == pytest.approx(2.5 / ideal)
    assert ndcg_at(["g3", "g2", "g1"], gains) == pytest.approx(1.0)
    # the ideal is cut at k as well: only the top grade fits in k=1
    assert ndcg_at(["g2"], gains, k=1) == pytest.approx(2 / 3)


def test_summarize_separates_noanswer_and_leaks() -> None:
    q1 = Query("q1", "one", {"a": 3, "b": 1}, "exact")
    q2 = Query("q2", "two", {"c": 1}, "exact", excluded=("old",))
    q3 = Query("q3", "nothing", {}, "noanswer")
    q4 = Query("q4", "nothing either", {}, "noanswer")
    outcomes = [
        Outcome(q1, ("b", "a"), 0.001),
        Outcome(q2, ("old", "x", "c"), 0.003),
        Outcome(q3, (), 0.002),
        Outcome(q4, ("a",), 0.002),
    ]
    row = summarize(outcomes, dataset="gold", level="note", mode="m", group="all")
    assert row.n == 2
    assert row.r1 == pytest.approx((0.5 + 0.0) / 2)
    assert row.r10 == pytest.approx(1.0)
    assert row.mrr == pytest.approx((1.0 + 1 / 3) / 2)
    assert row.quiet == pytest.approx(0.5) and row.n_noanswer == 2
    assert row.leak == pytest.approx(1.0) and row.n_excluded == 1
    assert row.ms_per_query == pytest.approx(2.0)
    table = format_table([row])
    assert "quiet" in table and "0.500 /2" in table and "1.000 /1" in table


def test_summarize_all_noanswer_has_no_means() -> None:
    row = summarize([Outcome(Query("q", "x", {}), (), 0.0)], dataset="d", level="l", mode="m", group="g")
    assert row.n == 0 and row.r10 is None and row.quiet == 1.0
    assert "–" in format_table([row])


# -- LoCoMo parsing ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (["D1:3"], ("D1:3",)),
        (["D8:6; D9:17"], ("D8:6", "D9:17")),
        (["D9:1 D4:4 D4:6"], ("D9:1", "D4:4", "D4:6")),
        (["D:11:26"], ("D11:26",)),
        (["D30:05"], ("D30:5",)),
        (["D"], ()),
        (["D", "D2:1", "D2:01"], ("D2:1",)),
        ([], ()),
    ],
)
def test_normalize_evidence(raw: list[str], expected: tuple[str, ...]) -> None:
    assert normalize_evidence(raw) == expected


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00Z"),
        ("10:04 am on 19 December, 2023", "2023-12-19T10:04:00Z"),
        ("12:15 am on 1 January, 2022", "2022-01-01T00:15:00Z"),
        ("12:30 pm on 3 March, 2021", "2021-03-03T12:30:00Z"),
    ],
)
def test_parse_session_date(text: str, iso: str) -> None:
    assert parse_session_date(text) == iso


@pytest.mark.parametrize("bad", ["", "yesterday", "1:56 pm on 8 Smarch, 2023"])
def test_parse_session_date_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_session_date(bad)


def _conversation(
    sample_id: str, a: str, b: str, sessions: list[list[tuple[str, str]]], qa: list[dict[str, object]]
) -> dict[str, object]:
    conv: dict[str, object] = {"speaker_a": a, "speaker_b": b}
    for n, turns in enumerate(sessions, 1):
        conv[f"session_{n}_date_time"] = f"{n}:0{n} pm on {n + 1} May, 2023"
        conv[f"session_{n}"] = [
            {"speaker": who, "dia_id": f"D{n}:{i}", "text": text} for i, (who, text) in enumerate(turns, 1)
        ]
    conv[f"session_{len(sessions) + 1}_date_time"] = "9:00 am on 1 June, 2023"  # dated, but no turns
    return {"sample_id": sample_id, "conversation": conv, "qa": qa}


def synthetic_locomo() -> list[dict[str, object]]:
    first = _conversation(
        "conv-a",
        "Ana",
        "Ben",
        [
            [
                ("Ana", "I adopted a greyhound called Pixel last week."),
                ("Ben", "Lovely! I started learning the cello."),
                ("Ana", "Pixel sleeps all day."),
            ],
            [("Ben", "My cello teacher moved to Lisbon."), ("Ana", "I ran the Berlin marathon on Sunday.")],
        ],
        [
            {
                "question": "What is the name of Ana's greyhound?",
                "answer": "Pixel",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "Where did Ben's cello teacher move?",
                "answer": "Lisbon",
                "evidence": ["D2:1"],
                "category": 4,
            },
            {"question": "Which marathon did Ana run?", "answer": "Berlin", "evidence": ["D2:2"], "category": 2},
            {
                "question": "What does Ben play and where is his teacher?",
                "answer": "x",
                "evidence": ["D1:2; D2:1"],
                "category": 1,
            },
            {"question": "Is Ana a dog person?", "answer": "yes", "evidence": [], "category": 3},  # unscorable
            {
                "question": "What is Ana's cat called?",
                "adversarial_answer": "none",
                "evidence": ["D1:1"],
                "category": 5,
            },  # adversarial: dropped
        ],
    )
    second = _conversation(
        "conv-b",
        "Chloe",
        "Dan",
        [
            [("Chloe", "The bakery on Elm street sells sourdough."), ("Dan", "I repaired my bicycle yesterday.")],
        ],
        [
            {
                "question": "What does the bakery on Elm street sell?",
                "answer": "sourdough",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {"question": "What did Dan repair?", "answer": "bicycle", "evidence": ["D:1:02"], "category": 4},
        ],
    )
    second["conversation"]["session_1"][0].update(  # type: ignore[index]
        blip_caption="a photo of a loaf of bread on a table", img_url=["http://x"]
    )
    return [first, second]


def test_parse_locomo_keeps_scorable_questions() -> None:
    convs = parse_locomo(synthetic_locomo())
    assert [c.sample_id for c in convs] == ["conv-a", "conv-b"]
    a, b = convs
    assert [s.number for s in a.sessions] == [1, 2]  # the dated session without turns is not one
    assert len(a.questions) == 4 and len(b.questions) == 2
    assert a.questions[3].evidence == ("D1:2", "D2:1")
    assert b.questions[1].evidence == ("D1:2",)
    turn = locomo_queries(a, "turn")[3]
    assert dict(turn.relevant) == {"D1:2": 1, "D2:1": 1} and turn.group == "multi-hop"
    sess = locomo_queries(a, "session")[3]
    assert dict(sess.relevant) == {"session-1": 1, "session-2": 1}


def test_turn_and_session_notes() -> None:
    a, b = parse_locomo(synthetic_locomo())
    turns = turn_notes(a)
    assert len(turns) == 5
    note = parse_note(turns["notes/session-02/turn-001.md"], "notes/session-02/turn-001.md")
    assert note.id == "D2:1" and note.type == "conversation"
    assert note.title == "Ben, 3 May 2023"
    assert note.created == "2023-05-03T14:02:00Z"
    assert note.entities == ["Ben"]
    assert note.body.strip() == "My cello teacher moved to Lisbon."
    photo = turn_notes(b)["notes/session-01/turn-001.md"]
    assert "[shares a photo of a loaf of bread on a table]" in photo
    sessions = session_notes(a)
    assert sorted(sessions) == ["notes/session-01.md", "notes/session-02.md"]
    s2 = parse_note(sessions["notes/session-02.md"], "notes/session-02.md")
    assert s2.id == "session-2" and "Session 2" in s2.title and "3 May 2023" in s2.title
    assert s2.body.strip().splitlines() == [
        "Ben: My cello teacher moved to Lisbon.",
        "Ana: I ran the Berlin marathon on Sunday.",
    ]


def test_real_locomo_has_1536_scorable_questions() -> None:
    if not REAL_LOCOMO.is_file():
        pytest.skip(f"LoCoMo data not found at {REAL_LOCOMO.resolve()}")
    convs = load_locomo(REAL_LOCOMO)
    assert len(convs) == 10
    assert sum(len(c.questions) for c in convs) == 1536
    assert sum(len(s.turns) for c in convs for s in c.sessions) == 5882
    assert sum(len(c.sessions) for c in convs) == 272


# -- gold and grep ----------------------------------------------------------------------------


def test_parse_gold_shapes() -> None:
    items = [
        {"id": "a", "query": "x", "kind": "exact", "relevant": {"n1": 3, "n2": 1}, "excluded": ["n9"]},
        {"id": "b", "query": "y", "kind": "noanswer", "relevant": {}},
        {"id": "c", "query": "z", "relevant": ["n3"]},
        {"id": "d"},
    ]
    for data in (items, {"version": 1, "queries": items}):
        qs = parse_gold(data)
        assert [q.id for q in qs] == ["a", "b", "c"]
        assert dict(qs[0].relevant) == {"n1": 3, "n2": 1} and qs[0].excluded == ("n9",)
        assert not qs[1].relevant and qs[1].group == "noanswer"
        assert dict(qs[2].relevant) == {"n3": 1} and qs[2].group == "other"


def test_grep_rank() -> None:
    docs = [("b.md", "B", "the cello teacher"), ("a.md", "A", "cello"), ("c.md", "C", "violin")]
    assert query_words("Cello, teacher?") == ["cello", "teacher"]
    assert grep_rank("cello teacher", docs) == ["B", "A"]
    assert grep_rank("cello", docs) == ["A", "B"]  # ties by path
    assert grep_rank("trombone", docs) == []


def test_sync_tree_writes_only_changes(tmp_path: Path) -> None:
    root = tmp_path / "v"
    assert sync_tree(root, {"a.md": "one", "d/b.md": "two"}) == 2
    (root / ".mdmem").mkdir()
    (root / ".mdmem" / "keep").write_text("index")
    assert sync_tree(root, {"a.md": "one", "d/b.md": "two"}) == 0
    assert sync_tree(root, {"a.md": "uno"}) == 2  # one rewritten, one removed
    assert not (root / "d" / "b.md").exists() and (root / ".mdmem" / "keep").exists()


# -- end to end -------------------------------------------------------------------------------


GOLD_NOTES = {
    "notes/pool.md": "---\nid: n-pool\ntitle: Pool size\n---\nWe set max_pool_size to 80 after the outage.\n",
    "notes/old-pool.md": (
        "---\nid: n-old\ntitle: Pool size (old)\nstatus: archived\n---\nmax_pool_size was 20 in the first release.\n"
    ),
    "notes/cats.md": "---\nid: n-cats\ntitle: Office cats\n---\nThe office cats are called Miso and Tofu.\n",
    "README.md": "Not a note (excluded in mdmem.toml).\n",
}
GOLD_QUERIES = """\
version: 1
queries:
- id: q1
  query: max_pool_size
  kind: exact
  relevant: {n-pool: 3}
  excluded: [n-old]
- id: q2
  query: names of the office cats
  kind: keyword
  relevant: {n-cats: 3}
- id: q3
  query: quarterly zebra budget
  kind: noanswer
  relevant: {}
"""


@pytest.fixture
def datasets(tmp_path: Path) -> tuple[Path, Path]:
    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps(synthetic_locomo()))
    gold = tmp_path / "gold"
    for rel, text in GOLD_NOTES.items():
        (gold / "vault" / rel).parent.mkdir(parents=True, exist_ok=True)
        (gold / "vault" / rel).write_text(text)
    (gold / "vault" / "mdmem.toml").write_text('[vault]\nexclude = ["README.md"]\n')
    (gold / "queries.yaml").write_text(GOLD_QUERIES)
    return locomo, gold


def _run(args: list[str]) -> str:
    result = CliRunner().invoke(eval_command, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_eval_end_to_end(tmp_path: Path, datasets: tuple[Path, Path]) -> None:
    locomo, gold = datasets
    cache = tmp_path / "cache"
    args = [
        "--locomo",
        str(locomo),
        "--gold",
        str(gold),
        "--modes",
        "grep,search",
        "--cache-dir",
        str(cache),
        "--json",
        "--by-category",
        "--by-kind",
    ]
    data = json.loads(_run(args))
    rows = {(r["dataset"], r["level"], r["mode"], r["group"]): r for r in data["rows"]}
    assert data["locomo"]["questions"] == 6 and data["modes"] == ["grep", "search"]

    turn = rows[("locomo", "turn", "search", "all")]
    assert turn["n"] == 6 and turn["r10"] == 1.0 and turn["mrr"] > 0.8
    assert rows[("locomo", "session", "search", "all")]["r10"] == 1.0
    assert rows[("locomo", "turn", "search", "multi-hop")]["n"] == 1
    assert rows[("locomo", "turn", "grep", "all")]["r10"] == 1.0

    gold_search = rows[("gold", "note", "search", "all")]
    assert gold_search["n"] == 2 and gold_search["r10"] == 1.0 and gold_search["n_noanswer"] == 1
    assert gold_search["quiet"] == 1.0  # no note has any of the words
    assert gold_search["n_excluded"] == 1
    assert rows[("gold", "note", "grep", "noanswer")]["quiet"] == 1.0
    # grep is a substring match: "old" is not in the query, but max_pool_size is in both notes
    assert rows[("gold", "note", "grep", "exact")]["leak"] == 1.0
    assert data["gold"]["unknown_ids"] == []
    assert not (gold / "vault" / ".mdmem").exists()  # the gold folder is only read

    # A second run reuses the vaults and indexes; the text table has one row per dataset/level/group/mode.
    text = _run(args[:-3] + ["--level", "turn"])
    lines = [line.split() for line in text.splitlines()]
    search_row = next(ln for ln in lines if ln[:4] == ["locomo", "turn", "all", "search"])
    assert search_row[6] == "1.000" and search_row[9] == "6"
    assert not any(ln[:2] == ["locomo", "session"] for ln in lines if ln)
    assert "quiet" in text and "leak" in text


def test_eval_conversations_limit_and_rebuild(tmp_path: Path, datasets: tuple[Path, Path]) -> None:
    locomo, _ = datasets
    cache = tmp_path / "cache"
    base = ["--locomo", str(locomo), "--gold", "none", "--modes", "grep", "--cache-dir", str(cache), "--json"]
    data = json.loads(_run([*base, "--conversations", "1", "--level", "session"]))
    assert data["locomo"]["conversations"] == 1 and data["locomo"]["questions"] == 4
    assert [r["level"] for r in data["rows"]] == ["session"]
    marker = next(cache.glob("*/session/conv-a")) / ".mdmem" / "marker"
    marker.write_text("x")
    _run([*base, "--conversations", "1", "--level", "session", "--rebuild"])
    assert not marker.exists()


def test_eval_errors(tmp_path: Path, datasets: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    locomo, _ = datasets
    monkeypatch.chdir(tmp_path)  # no ../shared/data nor benchmarks/gold here
    runner = CliRunner()
    r = runner.invoke(eval_command, ["--modes", "grep"])
    assert r.exit_code == 1 and "Nothing to evaluate" in r.output
    r = runner.invoke(eval_command, ["--locomo", str(locomo), "--modes", "grep,telepathy"])
    assert r.exit_code == 2 and "telepathy" in r.output
    r = runner.invoke(eval_command, ["--locomo", str(tmp_path / "missing.json")])
    assert r.exit_code == 2 and "no file" in r.output


def test_silenced_answers_count_as_quiet_and_silenced_answerable_ones_as_muted() -> None:
    none = Query("n", "x", {})
    some = Query("a", "y", {"g": 3})
    outcomes = [
        Outcome(none, ("g",), 0.0, silenced=True),
        Outcome(none, ("g",), 0.0),
        Outcome(some, ("g",), 0.0, silenced=True),
        Outcome(some, ("g",), 0.0),
    ]
    row = summarize(outcomes, dataset="d", level="l", mode="m", group="g")
    assert (row.quiet, row.muted, row.r10) == (0.5, 0.5, 1.0)  # recall counts the hits a silenced query kept
    assert "muted" in format_table([row])


# -- public corpora -----------------------------------------------------------------------------


def test_a_question_any_of_whose_answers_is_found_counts_whole() -> None:
    q = Query("q", "x", {"a": 1, "b": 1}, group="plain", any_of=True)
    row = summarize([Outcome(q, ("z", "b"), 0.0)], dataset="d", level="l", mode="m", group="g")
    assert (row.r1, row.r5, row.mrr) == (0.0, 1.0, 0.5)  # recall@5 would be .5 with both required
    assert row.ndcg10 == pytest.approx(1 / math.log2(3))


def test_parse_corpus_and_resolve_answers() -> None:
    data = {
        "corpus": {"name": "me/notes", "commit": "a" * 40, "config": "[site]\n"},
        "questions": [
            {"id": "p1", "kind": "plain", "query": "cello", "answers": ["music/cello.md"]},
            {"id": "n1", "kind": "unanswerable", "query": "zebra", "answers": [], "heldout": True},
            {"id": "t1", "kind": "typo", "query": "celo", "answers": ["cello.md", "violin.md"]},
        ],
    }
    c = parse_corpus(data)
    assert (c.slug, c.sparse, c.heldout) == ("notes", ("*.md",), frozenset({"n1"}))
    assert all(q.any_of for q in c.questions) and c.questions[1].relevant == {}
    resolved, problems = resolve_answers(c.questions, ["music/cello.md", "a/violin.md", "b/violin.md"])
    assert dict(resolved[2].relevant) == {"music/cello.md": 1}  # a unique suffix names its note
    assert problems == ["t1: 2 notes end with violin.md"]
    for bad, why in (
        ({"questions": []}, "corpus"),
        ({"corpus": {"commit": "HEAD"}}, "commit id"),
        ({"corpus": {"commit": "abc1234"}, "questions": [{"id": "x"}]}, "no `query`"),
    ):
        with pytest.raises(ValueError, match=why):
            parse_corpus(bad)


def _corpus_repo(root: Path) -> str:
    """A small git repository of notes (and a file that is not one); returns its first commit."""
    from ..conftest import git

    files = {
        "music/cello.md": "# Cello strings\nThe cello has four strings tuned in fifths.\n",
        "music/violin.md": "# Violin bows\nRosin the bow before you play.\n",
        "garden/tomatoes.md": "# Tomatoes\nWater tomatoes in the morning.\n",
        "build.py": "print('not a note')\n",
    }
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "notes")
    first = git(root, "rev-parse", "HEAD").strip()
    (root / "music" / "violin.md").unlink()  # gone later: the questions ask about the first commit
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qam", "drop violin")
    return first


def test_eval_runs_a_corpus_at_its_commit_with_held_out_questions_apart(tmp_path: Path) -> None:
    repo = tmp_path / "notes-repo"
    commit = _corpus_repo(repo)
    questions = tmp_path / "q.yaml"
    questions.write_text(f"""\
corpus: {{name: me/notes, commit: {commit}, sparse: ["/music/**/*.md"], config: "[query]\\ncandidates = 40\\n"}}
questions:
- {{id: p1, kind: plain, query: cello strings, answers: [cello.md]}}
- {{id: p2, kind: plain, query: rosin the bow, answers: [music/violin.md, music/cello.md]}}
- {{id: n1, kind: unanswerable, query: quarterly zebra budget, answers: []}}
- {{id: h1, kind: plain, query: tuned in fifths, answers: [music/cello.md], heldout: true}}
""")
    cache = tmp_path / "cache"
    args = [
        "--corpus",
        str(repo),
        "--questions",
        str(questions),
        "--modes",
        "grep,search",
        "--by-kind",
        "--cache-dir",
        str(cache),
        "--json",
    ]
    data = json.loads(_run(args))
    rows = {(r["dataset"], r["level"], r["mode"], r["group"]): r for r in data["rows"]}
    assert data["corpora"] == [{"name": "me/notes", "commit": commit, "path": str(repo), "questions": 4, "heldout": 1}]
    assert "locomo" not in data and "gold" not in data  # with --questions, only what is named runs
    tune = rows[("notes", "tune", "search", "all")]
    assert (tune["n"], tune["r1"], tune["n_noanswer"]) == (2, 1.0, 1)
    assert rows[("notes", "heldout", "search", "all")]["n"] == 1
    assert rows[("notes", "tune", "search", "plain")]["n"] == 2
    vault = next(cache.glob("corpus-notes-*/vault"))
    found = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md") if ".git" not in p.parts)
    assert found == ["music/cello.md", "music/violin.md"]  # the commit's notes the patterns name
    assert (vault / "mdmem.toml").read_text() == "[query]\ncandidates = 40\n"
    assert not (repo / ".mdmem").exists() and not (repo / "music" / "violin.md").exists()  # only read

    questions.write_text(questions.read_text().replace("answers: [cello.md]", "answers: [viola.md]"))
    r = CliRunner().invoke(eval_command, args)
    assert r.exit_code == 1 and "p1: no note at viola.md" in r.output and "Fix the questions file" in r.output
    r = CliRunner().invoke(eval_command, [*args, "--questions", str(questions)])
    assert r.exit_code == 2 and "one --corpus CLONE per --questions FILE" in r.output


def test_indexing_for_vector_modes_asks_no_background_job(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """eval embeds each vault itself right after its reindex: the reindex must not start the background
    job on the same chunks (each did all of them), and the vectors are complete afterwards."""
    monkeypatch.setenv("MDMEM_AUTO_EMBED", "1")
    monkeypatch.setenv("MDMEM_EMBED_INLINE", "0")  # every write's vectors would go to the job
    (vault_dir / "mdmem.toml").write_text('[embed]\nmodel = "hash"\n')
    index_suite(Suite("corpus", "tune", [(vault_dir, [])]), ["query"])
    assert not (vault_dir / ".mdmem" / "embed.log").exists()
    with Vault.open(vault_dir) as v:
        done, total = v.coverage()
    assert total and done == total
    assert os.environ["MDMEM_AUTO_EMBED"] == "1"  # the setting is the caller's again


def test_progress_goes_to_a_pipe_as_reports(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With stderr no terminal (a log, a pipe: the corpora's first embedding ran 29 minutes in silence),
    the embedding and the questions are reported through ``report``, up to their whole."""
    (vault_dir / "mdmem.toml").write_text('[embed]\nmodel = "hash"\n')
    calls: dict[str, list[tuple[int, int]]] = {}

    def report(label: str) -> Callable[[int, int], None]:
        return lambda done, total: calls.setdefault(label, []).append((done, total))

    queries = [Query(f"q{i}", text, {}) for i, text in enumerate(["release train", "coffee", "hotwire"])]
    suite = Suite("corpus", "tune", [(vault_dir, queries)], key="path")
    index_suite(suite, ["search", "query"], report)
    run_suite(suite, ["search", "query"], report)
    embedded = next(v for k, v in calls.items() if k.startswith("embedding corpus/tune"))
    assert embedded[-1][0] == embedded[-1][1] > 0  # every chunk
    assert calls["querying corpus/tune"] == [(i, 6) for i in range(1, 7)]  # a step per query and mode
