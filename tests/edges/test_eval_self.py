"""``mdmem eval --self``: the queries a vault provides itself, drawn and judged, and the run end to end."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from mdmem.cli import cli
from mdmem.core.self_queries import SelfNote, first_sentence, self_queries


def _by_text(notes: list[SelfNote], **kw: int) -> dict[tuple[str, str], set[str]]:
    return {(q.group, q.text): set(q.relevant) for q in self_queries(notes, **kw)}


def test_each_kind_is_a_query_with_its_note_as_answer_and_trivial_or_shared_texts_are_left_out() -> None:
    notes = [
        SelfNote(
            "a.md",
            "Cello strings",
            aliases=("Cello", "cello strings"),
            headings=("Cello strings", "Tuning in fifths", "Examples"),
            anchors=("the four strings", "Cello strings", "a"),
            text="Cello strings\nThe cello has four strings tuned in fifths. More here.",
            names=("a",),
        ),
        SelfNote("b.md", "Violin", headings=("Examples", "Tuning in fifths"), text="Short one."),
        SelfNote("c.md", "Viola", headings=("Examples",), aliases=("Violin",)),
        SelfNote("d.md", "Bass", headings=("Examples",)),
    ]
    got = _by_text(notes)
    assert got[("title", "Cello strings")] == {"a.md"}
    assert got[("alias", "Cello")] == {"a.md"}
    assert got[("heading", "Tuning in fifths")] == {"a.md", "b.md"}  # two notes share it: either answers
    assert got[("anchor", "the four strings")] == {"a.md"}
    assert got[("sentence", "The cello has four strings tuned in fifths.")] == {"a.md"}  # the title line skipped
    assert got[("alias", "Violin")] == {"c.md", "b.md"}  # the note titled so answers it too
    texts = {t for _, t in got}
    assert "Examples" not in texts  # four notes have it: it tells none apart
    assert ("heading", "Cello strings") not in got and ("alias", "cello strings") not in got  # just the title
    assert ("anchor", "Cello strings") not in got and ("anchor", "a") not in got  # the title; the file's name
    assert not any(k == "sentence" and t == "Short one." for k, t in got)  # too short to say anything


def test_the_draw_is_seeded_and_bounded_per_kind() -> None:
    notes = [SelfNote(f"n{i}.md", f"Note number {i}", headings=(f"Part {i}",)) for i in range(50)]
    first = self_queries(notes, per_kind=5)
    assert [q.text for q in first] == [q.text for q in self_queries(notes, per_kind=5)]
    assert sorted({q.group for q in first}) == ["heading", "title"]
    assert sum(q.group == "title" for q in first) == 5 and sum(q.group == "heading" for q in first) == 5
    assert [q.text for q in self_queries(notes, per_kind=5, seed=1)] != [q.text for q in first]
    assert all(q.any_of for q in first)


def test_first_sentence() -> None:
    assert first_sentence("Title\n\nWater tomatoes in the morning, not at noon. Then rest.", ["Title"]) == (
        "Water tomatoes in the morning, not at noon."
    )
    assert first_sentence("Just two words.") is None
    assert first_sentence("") is None


VAULT = {
    "music/cello.md": "---\naliases: [Violoncello]\n---\n# Cello strings\n\nThe cello has four strings "
    "tuned in fifths.\n\n## Rosin and bows\n\nRosin the bow before you play.\n",
    "garden/tomatoes.md": "# Tomatoes\n\nWater tomatoes in the morning before the sun is high.\n\n"
    "See [[cello|the instrument with four strings]] and [my garden notes](beans.md).\n",
    "garden/beans.md": "# Runner beans\n\nRunner beans climb any pole you give them in spring.\n",
}


def test_eval_self_on_a_vault_reports_a_row_per_kind_and_only_reads_the_notes(tmp_path: Path) -> None:
    vault = tmp_path / "notes"
    for rel, text in VAULT.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text)
    args = ["--vault", str(vault), "eval", "--self", "--modes", "grep,search", "--by-kind", "--json"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    rows = {(r["dataset"], r["level"], r["mode"], r["group"]): r for r in data["rows"]}
    assert data["vaults"] == [str(vault)] and set(data["self"]["kinds"]) >= {"title", "anchor", "sentence"}
    assert rows[("notes", "self", "search", "title")]["n"] == 3
    assert rows[("notes", "self", "search", "alias")]["n"] == 1
    assert rows[("notes", "self", "search", "heading")]["n"] == 1  # "Rosin and bows"; the H1s are titles
    assert rows[("notes", "self", "search", "anchor")]["n"] == 2  # a wikilink's label, a markdown link's words
    assert rows[("notes", "self", "search", "sentence")]["n"] == 3
    assert rows[("notes", "self", "search", "title")]["r1"] == 1.0
    assert rows[("notes", "self", "search", "all")]["n"] == 10
    assert {rel: (vault / rel).read_text() for rel in VAULT} == VAULT  # the notes are only read

    text = CliRunner().invoke(cli, args[:-1], catch_exceptions=False).stdout
    assert "notes    self   all       search" in text and "notes/self: index" in text


def test_eval_self_on_a_corpus_asks_its_checkout_not_its_questions(tmp_path: Path) -> None:
    from .test_evaluate import _corpus_repo

    repo = tmp_path / "notes-repo"
    commit = _corpus_repo(repo)
    questions = tmp_path / "q.yaml"
    questions.write_text(f"""\
corpus: {{name: me/notes, commit: {commit}, sparse: ["/music/**/*.md"]}}
questions:
- {{id: p1, kind: plain, query: cello strings, answers: [cello.md]}}
""")
    args = ["eval", "--self", "--corpus", str(repo), "--questions", str(questions), "--modes", "search"]
    result = CliRunner().invoke(cli, [*args, "--cache-dir", str(tmp_path / "cache"), "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert [(r["dataset"], r["level"], r["n"], r["r1"]) for r in rows] == [("notes", "self", 4, 1.0)]
