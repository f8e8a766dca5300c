"""The note graph: edges, resolution, graph commands, link/unlink writes, export."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from mdmem import Vault
from mdmem.cli import cli
from mdmem.core.graph import Edge, build_graph, edge_type
from mdmem.core.linkedit import add_link_entry, remove_link_entries

from ..conftest import cli_commands, git
from ..headless import CHROMIUM, Browser

HOTWIRE = """---
id: m-hot
title: Use Hotwire for new frontends
type: decision
created: 2026-01-05
custom: keep me   # an unknown key with a comment
entities: [Hotwire, Mei]
links:
  # typed edges
  - {to: "[[Q3 budget approved]]", type: depends_on, reason: "needs the Q3 budget"}
  - {to: m-survey, type: Caused-By, reason: "the survey showed little React experience"}
supersedes: m-react
---
We chose Hotwire over React because of the [[Team skills survey]] and the [survey notes](survey.md).
Still to write: [[Missing note]].
"""

NOTES = {
    "notes/hotwire.md": HOTWIRE,
    "notes/budget.md": "---\nid: g-budget\ntitle: Q3 budget approved\ntype: fact\ncreated: 2026-01-10\n---\n"
    "Finance approved the frontend budget for Q3.\n",
    "notes/survey.md": "---\nid: m-survey\ntitle: Team skills survey\ntype: research\ncreated: 2025-12-01\n---\n"
    "Most of the team knows Rails and server-rendered forms; little React experience.\n",
    "notes/react.md": "---\nid: m-react\ntitle: Use React for frontends\ntype: decision\nstatus: archived\n"
    "created: 2025-06-01\n---\nOur first frontend choice was React with a JSON API.\n",
    "notes/people/mei-lin.md": "---\ntitle: Mei Lin\ntype: fact\naliases: [林美, Mei]\ncreated: 2025-01-01\n---\n"
    "Frontend lead. Writes in Chinese.\n",
    "notes/css.md": "---\ntitle: CSS naming rules\ntype: preference\nentities: [Mei]\ncreated: 2026-02-01\n---\n"
    "Block-element-modifier names for every component.\n",
    "notes/island.md": "---\ntitle: Unconnected island\ncreated: 2026-03-01\n---\nA note about sailing boats.\n",
}


def run(root: Path, *args: str, code: int = 0):  # type: ignore[no-untyped-def]
    r = CliRunner().invoke(cli, ["--vault", str(root), *args], catch_exceptions=False)
    assert r.exit_code == code, r.output
    return r


def jrun(root: Path, *args: str) -> dict:  # type: ignore[type-arg]
    return json.loads(run(root, *args, "--json").output)


@pytest.fixture
def gv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git vault with the notes above, committed, hooks installed, indexed."""
    from mdmem.edges.scaffold import init_vault

    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    monkeypatch.setenv("MDMEM_NOW", "2026-11-29")
    root = tmp_path / "gv"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    init_vault(root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "notes", env={"MDMEM_SKIP_HOOK": "1"})  # its hook runs here, as in git_vault
    run(root, "reindex", "--git-hook", "post-commit")
    return root


def ids(items: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [i["id"] for i in items]


# -- edges and resolution -------------------------------------------------------------------------


def test_links_lists_every_kind_of_edge(gv: Path) -> None:
    doc = jrun(gv, "links", "m-hot")
    got = {(ln["type"], ln["to"]["id"] if ln["to"] else None, ln["reason"]) for ln in doc["links"]}
    assert ("depends_on", "g-budget", "needs the Q3 budget") in got
    assert ("caused_by", "m-survey", "the survey showed little React experience") in got  # type normalised
    assert ("supersedes", "m-react", None) in got
    assert ("mentions", "m-survey", None) in got  # [[wikilink]] by title
    assert ("mentions", None, None) in got  # [[Missing note]] is kept, dangling
    assert ("about", "entity:Hotwire", None) in got  # an entity no note is named after
    assert ("about", "notes/people/mei-lin", None) in got  # "Mei" is Mei Lin's alias
    # one row per linked note and type: [[Team skills survey]] and the markdown link (survey.md,
    # relative to the note) both reach the survey
    survey = [ln for ln in doc["links"] if ln["type"] == "mentions" and ln["to"] and ln["to"]["id"] == "m-survey"]
    assert len(survey) == 1 and survey[0]["count"] == 2
    assert not [ln for ln in doc["links"] if ln["written"] == "survey.md" and ln["to"] is None]
    text = run(gv, "links", "Use Hotwire for new frontends").output
    assert "caused_by" in text and "the survey showed little React experience" in text
    assert "'Missing note'  DANGLING" in text


def test_backlinks_and_entities(gv: Path) -> None:
    doc = jrun(gv, "backlinks", "Team skills survey")
    assert {(b["type"], b["from"]["id"]) for b in doc["backlinks"]} >= {("caused_by", "m-hot"), ("mentions", "m-hot")}
    mei = jrun(gv, "backlinks", "林美")  # by alias
    assert set(ids([b["from"] for b in mei["backlinks"]])) == {"m-hot", "notes/css"}
    ent = jrun(gv, "entity", "Mei")
    assert {"Mei", "Mei Lin", "林美"} <= set(ent["names"])
    assert ids(ent["notes"]) == ["notes/people/mei-lin"] and set(ids(ent["about"])) == {"m-hot", "notes/css"}
    hot = jrun(gv, "entity", "hotwire")  # an entity node, and the notes whose text mentions it
    assert ids(hot["about"]) == ["m-hot"]
    assert "No note or entity is named" in run(gv, "entity", "Kubernetes", code=1).output


def test_renamed_file_keeps_id_links(gv: Path) -> None:
    (gv / "notes" / "research").mkdir()
    git(gv, "mv", "notes/survey.md", "notes/research/skills-2025.md")
    git(gv, "commit", "-qm", "move the survey")  # the post-commit hook reindexes
    doc = jrun(gv, "links", "m-hot")
    by_written = {ln["written"]: ln for ln in doc["links"]}
    assert by_written["m-survey"]["to"]["path"] == "notes/research/skills-2025.md"  # by id: still linked
    assert by_written["Team skills survey"]["to"]["id"] == "m-survey"  # by title: still linked
    assert by_written["survey.md"]["to"] is None  # a path link breaks, and doctor says so
    back = jrun(gv, "backlinks", "notes/research/skills-2025.md")
    assert "caused_by" in {b["type"] for b in back["backlinks"]}


def test_doctor_lists_links_to_notes_not_written_yet_apart(gv: Path) -> None:
    r = run(gv, "doctor", "--json")  # exit 0: planned notes are no problem
    report = json.loads(r.output)
    assert not [p for p in report["problems"] if "dangling" in p["message"]]
    assert report["unwritten"] == [{"path": "notes/hotwire.md", "field": "body", "target": "Missing note", "links": 1}]
    assert "notes/hotwire.md: body: [[Missing note]]" in run(gv, "doctor").output
    (gv / "notes" / "missing-note.md").write_text("---\ntitle: Missing note\n---\nNow it exists.\n")
    run(gv, "reindex")
    assert json.loads(run(gv, "doctor", "--json").output)["unwritten"] == []


def jrun_code(root: Path, *args: str) -> list[dict]:  # type: ignore[type-arg]
    r = CliRunner().invoke(cli, ["--vault", str(root), *args, "--json"], catch_exceptions=False)
    return json.loads(r.output)["problems"]  # type: ignore[no-any-return]


# -- walks -----------------------------------------------------------------------------------------


def test_neighbors_depth_and_type(gv: Path) -> None:
    one = jrun(gv, "neighbors", "m-hot")
    assert set(ids(one["neighbors"])) == {"g-budget", "m-survey", "m-react", "notes/people/mei-lin", "entity:Hotwire"}
    assert all(n["distance"] == 1 for n in one["neighbors"])
    two = jrun(gv, "neighbors", "g-budget", "--depth", "2")
    dist = {n["id"]: n["distance"] for n in two["neighbors"]}
    assert dist["m-hot"] == 1 and dist["m-survey"] == 2 and dist["notes/people/mei-lin"] == 2
    causal = jrun(gv, "neighbors", "m-hot", "--type", "caused_by")
    assert ids(causal["neighbors"]) == ["m-survey"]
    assert causal["neighbors"][0]["via"]["reason"] == "the survey showed little React experience"
    out = run(gv, "neighbors", "g-budget", "-d", "2").output
    assert "via Use Hotwire for new frontends -depends_on-> Q3 budget approved" in out


def test_path_between_notes_and_unconnected(gv: Path) -> None:
    doc = jrun(gv, "path", "g-budget", "notes/css")
    assert doc["found"] and doc["length"] == 3
    assert [(s["type"], s["direction"]) for s in doc["steps"]] == [
        ("depends_on", "in"),
        ("about", "out"),
        ("about", "in"),
    ]
    text = run(gv, "path", "Q3 budget approved", "Team skills survey").output
    assert "<-depends_on-" in text and ("-caused_by->" in text or "-mentions->" in text)
    none = jrun(gv, "path", "island", "g-budget")
    assert none["found"] is False and none["steps"] == []
    msg = run(gv, "path", "island", "g-budget").output
    assert "No path between 'Unconnected island' and 'Q3 budget approved': they are not connected" in msg
    assert "mdmem link" in msg
    err = run(gv, "path", "island", "nowhere-at-all", code=1).output
    assert "No note matches 'nowhere-at-all'" in err and "mdmem search nowhere-at-all" in err


def test_why_returns_the_cause_with_type_and_reason(gv: Path) -> None:
    doc = jrun(gv, "why", "why", "hotwire", "frontends")
    first = doc["results"][0]
    assert first["id"] == "m-survey" and first["role"] == "cause"
    assert first["chain"][0]["type"] == "caused_by" and first["chain"][0]["from"]["id"] == "m-hot"
    assert first["chain"][0]["reason"] == "the survey showed little React experience"
    roles = {r["id"]: r["role"] for r in doc["results"]}
    assert roles["m-hot"] == "match" and roles["g-budget"] == "cause"
    assert "m-react" not in roles  # archived: hidden from why unless asked for
    assert jrun(gv, "why", "why hotwire", "--include", "archived")["results"]
    assert "m-react" in {r["id"] for r in jrun(gv, "why", "why hotwire", "--include", "archived")["results"]}
    text = run(gv, "why", "why", "hotwire").output
    assert re.search(r"1\. Team skills survey .* — cause", text)
    assert "Use Hotwire for new frontends -caused_by-> Team skills survey  — the survey showed" in text


def test_timeline_before_and_after(gv: Path) -> None:
    doc = jrun(gv, "timeline", "m-hot")
    assert doc["anchor"]["id"] == "m-hot" and not doc["from_query"]
    assert ids(doc["before"]) == ["notes/people/mei-lin", "m-survey"]  # oldest first; archived m-react hidden
    assert ids(doc["after"]) == ["g-budget", "notes/css"]
    assert "m-react" in ids(jrun(gv, "timeline", "m-hot", "--include", "archived")["before"])
    q = jrun(gv, "timeline", "finance", "approved", "budget")
    assert q["from_query"] and q["anchor"]["id"] == "g-budget" and ids(q["before"])[-1] == "m-hot"
    assert "notes/island" in ids(jrun(gv, "timeline", "g-budget", "--all")["after"])
    text = run(gv, "timeline", "m-hot").output
    assert "▶ 2026-01-05  Use Hotwire for new frontends" in text


# -- link / unlink ------------------------------------------------------------------------------


def test_link_unlink_round_trip_keeps_the_file(gv: Path) -> None:
    hot = gv / "notes" / "hotwire.md"
    before = hot.read_bytes()
    doc = jrun(gv, "link", "m-hot", "Unconnected island", "--type", "led_to", "--reason", "sailing: why not")
    assert doc["changed"] and doc["commit"]
    after = hot.read_text()
    # Only the links block changed: one new item line (the island has no id, so its path).
    assert (
        after.replace("  - {to: '[[notes/island]]', type: led_to, reason: 'sailing: why not'}\n", "") == before.decode()
    )
    assert "# typed edges" in after and "custom: keep me   # an unknown key with a comment" in after
    assert (
        git(gv, "log", "-1", "--format=%s").strip()
        == 'mdmem: link "Use Hotwire for new frontends" -led_to-> "Unconnected island"'
    )
    assert ("led_to", "notes/island") in {
        (ln["type"], ln["to"]["id"]) for ln in jrun(gv, "links", "m-hot")["links"] if ln["to"]
    }
    assert git(gv, "status", "--porcelain").strip() == ""
    again = jrun(gv, "link", "m-hot", "island", "--type", "led_to")
    assert again["changed"] is False
    gone = jrun(gv, "unlink", "m-hot", "island")
    assert gone["changed"] and gone["fields"]["removed"] == 1
    assert hot.read_bytes() == before
    assert "notes/island" not in {ln["to"]["id"] for ln in jrun(gv, "links", "m-hot")["links"] if ln["to"]}


def test_link_writes_the_target_id_and_a_new_links_key(gv: Path) -> None:
    island = gv / "notes" / "island.md"
    before = island.read_bytes()
    run(gv, "link", "island", "Team skills survey", "--type", "depends_on", "--no-commit")
    text = island.read_text()
    assert "links:\n  - {to: m-survey, type: depends_on}\n---\n" in text  # by id: survives renames
    assert git(gv, "status", "--porcelain").strip() == "M notes/island.md"  # --no-commit
    # A different reason replaces the entry instead of adding a second one.
    run(gv, "link", "island", "m-survey", "--type", "depends_on", "--reason", "crew skills", "--no-commit")
    assert island.read_text().count("m-survey") == 1 and "crew skills" in island.read_text()
    out = run(gv, "unlink", "island", "m-survey", "--type", "caused_by").output
    assert "nothing to do" in out
    run(gv, "unlink", "island", "m-survey", "--no-commit")
    assert island.read_bytes() == before
    assert "cannot link to itself" in run(gv, "link", "island", "island", code=1).output
    # a name close to a note's is taken for that note misspelt; one no note has is an entity
    assert "No note matches" in run(gv, "link", "island", "Team skils survey", code=1).output


def test_unlink_removes_a_dangling_frontmatter_link_and_keeps_body_links(gv: Path) -> None:
    css = gv / "notes" / "css.md"
    css.write_text(
        css.read_text().replace("entities: [Mei]\n", "entities: [Mei]\nlinks:\n  - {to: Ghost note, type: related}\n")
    )
    git(gv, "commit", "-qam", "ghost")
    assert any("Ghost note" in p["message"] for p in jrun_code(gv, "doctor"))
    run(gv, "unlink", "notes/css", "Ghost note")
    assert "links:" not in css.read_text() and not any("Ghost" in p["message"] for p in jrun_code(gv, "doctor"))
    r = jrun(gv, "unlink", "m-hot", "Team skills survey", "--type", "caused_by")
    assert r["fields"]["body_mentions_left"] == 2
    assert "[[Team skills survey]]" in (gv / "notes" / "hotwire.md").read_text()


LINK_EDITS = [
    # (frontmatter before, entry, after adding)
    ("title: A\n", "{to: b, type: x}", "title: A\nlinks:\n  - {to: b, type: x}\n"),
    ("links: []\ntitle: A\n", "{to: b, type: x}", "links:\n  - {to: b, type: x}\ntitle: A\n"),
    (
        "links:\n- {to: a, type: y}\n# after\ntitle: A\n",
        "{to: b, type: x}",
        "links:\n- {to: a, type: y}\n- {to: b, type: x}\n# after\ntitle: A\n",
    ),
    (
        "links:\n    - to: a\n      type: y\n    # note\ntitle: A\n",
        "{to: b, type: x}",
        "links:\n    - to: a\n      type: y\n    - {to: b, type: x}\n    # note\ntitle: A\n",
    ),
    ("links: [{to: a, type: y}]\n", "{to: b, type: x}", "links: [{to: a, type: y}, {to: b, type: x}]\n"),
]


@pytest.mark.parametrize(("fm", "entry", "want"), LINK_EDITS)
def test_link_entry_edits_round_trip(fm: str, entry: str, want: str) -> None:
    text = f"---\n{fm}---\nbody [[x]]\n"
    added = add_link_entry(text, entry)
    assert added == f"---\n{want}---\nbody [[x]]\n"
    assert yaml.safe_load(added.split("---\n")[1])["links"][-1] == {"to": "b", "type": "x"}
    back, removed, _ = remove_link_entries(added, lambda item: isinstance(item, dict) and item.get("to") == "b")
    assert removed == 1
    if fm.startswith("links: []"):
        assert back == "---\ntitle: A\n---\nbody [[x]]\n"  # an emptied list goes away with its key
    else:
        assert back == text


def test_link_into_a_note_without_frontmatter() -> None:
    assert add_link_entry("just text\n", "{to: b, type: x}") == "---\nlinks:\n  - {to: b, type: x}\n---\njust text\n"


# -- pure graph ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("caused_by", "caused_by"),
        ("Caused-By", "caused_by"),
        ("depends on", "depends_on"),
        ("LED_TO", "led_to"),
        (" ", "related"),
    ],
)
def test_edge_type(raw: str, want: str) -> None:
    assert edge_type(raw) == want


def _graph(links: list[tuple[str, str, str]]) -> object:
    notes = {p for s, t, _ in links for p in (s, t)}
    rows = [(f"{p}.md", p, p.upper(), "note", "active", None, None, 0.0, None, None) for p in sorted(notes)]
    names = [(p, f"{p}.md", "id") for p in notes]
    return build_graph(rows, names, [(f"{s}.md", t, typ, None, None, f"{s}->{t}", t) for s, t, typ in links])


def test_causal_walk_orients_edges_and_ranks_causes_with_their_match() -> None:
    g = _graph(
        [
            ("d", "c", "caused_by"),
            ("c", "root", "because"),
            ("x", "d", "led_to"),
            ("e", "d", "caused_by"),
            ("d", "n", "relates"),
        ]
    )
    hits = g.causal({"d.md": 2.0, "n.md": 1.0}, depth=3)  # type: ignore[attr-defined]
    roles = {h.node: (h.role, h.depth) for h in hits}
    assert roles == {
        "d.md": ("match", 0),
        "c.md": ("cause", 1),
        "x.md": ("cause", 1),
        "root.md": ("cause", 2),
        "e.md": ("effect", 1),
        "n.md": ("match", 0),
    }
    order = [h.node for h in hits]
    assert order[:3] == ["c.md", "x.md", "d.md"]  # direct causes tie with their match and come first
    root = next(h for h in hits if h.node == "root.md")
    assert [(s.edge.src, s.edge.type, s.edge.dst) for s in root.chain[1:]] == [  # type: ignore[union-attr]
        ("d.md", "caused_by", "c.md"),
        ("c.md", "because", "root.md"),
    ]


def test_shortest_path_none_and_self() -> None:
    g = _graph([("a", "b", "x"), ("c", "d", "y")])
    assert g.shortest_path("a.md", "d.md") is None  # type: ignore[attr-defined]
    assert [s.node for s in g.shortest_path("b.md", "a.md")] == ["b.md", "a.md"]  # type: ignore[attr-defined]
    assert len(g.shortest_path("a.md", "a.md")) == 1  # type: ignore[attr-defined]


def test_ambiguous_target_prefers_the_active_note() -> None:
    rows = [
        ("old.md", "old", "Plan", "note", "archived", None, None, 0.0, None, None),
        ("new.md", "new", "Plan", "note", "active", None, None, 0.0, None, None),
        ("a.md", "a", "A", "note", "active", None, None, 0.0, None, None),
        ("b.md", "b", "Plan", "note", "active", None, None, 0.0, None, None),
    ]
    names = [("plan", "old.md", "title"), ("plan", "new.md", "title"), ("a", "a.md", "id"), ("plan", "b.md", "title")]
    g = build_graph(rows[:3], names[:3], [("a.md", "[[Plan]]", "mentions", None, None, None, "plan")])
    assert g.out["a.md"][0] == Edge("a.md", "new.md", "mentions", "[[Plan]]", how="title")
    g = build_graph(rows, names, [("a.md", "[[Plan]]", "mentions", None, None, None, "plan")])
    assert g.out["a.md"][0].candidates == ("b.md", "new.md", "old.md")  # reported by doctor


def test_graph_is_cached_until_the_index_changes(gv: Path) -> None:
    v = Vault.open(gv)
    g1 = v.graph()
    assert v.graph() is g1
    v.link("island", "g-budget", "depends_on", commit=False)
    g2 = v.graph()
    assert g2 is not g1 and any(e.dst == "notes/budget.md" for e in g2.out["notes/island.md"])
    other = Vault.open(gv)  # another process writing is seen too (SQLite data_version)
    other.unlink("island", "g-budget", commit=False)
    other.close()
    assert not any(e.dst == "notes/budget.md" for e in v.graph().out.get("notes/island.md", []))
    v.close()


# -- add suggests links ----------------------------------------------------------------------------


def test_add_suggests_links_but_never_writes_them(gv: Path) -> None:
    before = {p: p.read_bytes() for p in (gv / "notes").rglob("*.md")}
    doc = jrun(
        gv,
        "add",
        "--title",
        "Hotwire forms for the frontend",
        "--body",
        "We use Hotwire for new frontends; Turbo forms replace React components.",
        "--no-dedupe",
    )
    assert doc["written"] and doc["suggested_links"]
    first = doc["suggested_links"][0]
    assert first["id"] == "m-hot" and first["command"] == f"mdmem link {doc['id']} m-hot --type related"
    assert {p: p.read_bytes() for p in before} == before  # no existing note was touched
    assert "links:" not in (gv / doc["path"]).read_text()
    out = run(
        gv, "add", "--title", "Hotwire turbo streams", "--body", "Hotwire Turbo streams for frontends.", "--no-dedupe"
    ).output
    assert "maybe link it" in out and "mdmem link " in out


def test_add_judges_its_suggestions_from_the_edges_at_the_new_note_alone(gv: Path) -> None:
    """A save names the notes the new one already links as linked, and leaves the suggestions
    unlinked ones, without building the whole vault's graph (seconds at 2,000 notes, every add)."""
    v = Vault.open(gv)
    report = v.save(
        "Hotwire frontend follow-up",
        "Following [[Team skills survey]]: we use Hotwire for new frontends, Turbo forms over React.",
        dedupe=False,
    )
    assert report.added is not None
    assert "graph" not in v.store.memo  # the edges at the new note came from the rows around it
    found = {s.title: s for s in v.similar(report.added.path, 5).results}
    assert found["Team skills survey"].linked == "out"
    assert "Team skills survey" not in [s.title for s in report.suggested_links]
    v.close()


def test_a_save_checks_the_exact_text_again_only_when_a_note_was_indexed_meanwhile(gv: Path) -> None:
    """The duplicate check's exact-text look runs again under the writer lock only if the index
    changed since the full check: another process's write of the same text is then still caught."""
    from mdmem.features.lifecycle import unchanged_since

    a, b = Vault.open(gv), Vault.open(gv)
    with a.store.reading() as idx:
        seen = (a.store.generation, idx.rows_token())
    assert unchanged_since(a.store, seen)
    assert b.save("Another process wrote this", "Its very own words.", dedupe=False).added is not None
    assert not unchanged_since(a.store, seen)
    assert not unchanged_since(a.store, None)
    a.close(), b.close()


# -- export ----------------------------------------------------------------------------------------

EVIL = '</script><script>alert("x")</script><img src=x onerror=alert(1)>'


def test_export_json_and_dot(gv: Path) -> None:
    data = json.loads(run(gv, "graph", "export").output)
    keys = {n["key"] for n in data["nodes"]}
    assert {"notes/hotwire.md", "entity:hotwire"} <= keys and any(n["kind"] == "missing" for n in data["nodes"])
    assert {
        "source": "notes/hotwire.md",
        "target": "notes/survey.md",
        "type": "caused_by",
        "reason": "the survey showed little React experience",
        "written": "m-survey",
    } in data["edges"]
    only = json.loads(run(gv, "graph", "export", "--type", "caused_by", "--no-entities").output)
    assert {e["type"] for e in only["edges"]} == {"caused_by"} and not any(n["kind"] == "entity" for n in only["nodes"])
    visible = json.loads(run(gv, "graph", "export", "--visible").output)
    assert "notes/react.md" not in {n["key"] for n in visible["nodes"]}
    dot = run(gv, "graph", "export", "-f", "dot").output
    assert dot.startswith("digraph mdmem {") and '"notes/hotwire.md" -> "notes/survey.md" [label="caused_by"' in dot


def _evil_vault(gv: Path) -> None:
    (gv / "notes" / "evil.md").write_text(f"---\ntitle: '{EVIL}'\n---\nSee [[Q3 budget approved]].\n")
    run(gv, "reindex")


def test_export_html_escapes_titles(gv: Path, tmp_path: Path) -> None:
    _evil_vault(gv)
    out = tmp_path / "g.html"
    doc = jrun(gv, "graph", "export", "-f", "html", "-o", str(out))
    assert doc["output"] == str(out)
    page = out.read_text()
    assert "<script><" not in page and 'alert("x")</script>' not in page and "<img" not in page
    assert page.count("</script>") == 2  # the data block and the code, nothing from a title
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")  # nothing to fetch
    assert "https://" not in page
    assert 'class="node' not in page.split('<script type="application/json"')[0]  # drawn by the script


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (.ci/run installs it)")
def test_html_export_draws_the_nodes_in_headless_chromium(gv: Path, tmp_path: Path) -> None:
    _evil_vault(gv)
    out = tmp_path / "graph.html"
    run(gv, "graph", "export", "-f", "html", "-o", str(out))
    data = json.loads(run(gv, "graph", "export").output)
    assert {"notes/people/mei-lin.md", "notes/hotwire.md"} <= {n["key"] for n in data["nodes"] if "tags" in n}
    with Browser() as b:
        b.open(out.as_uri(), ready="document.body.dataset.settled")
        assert b.errors == []
        assert b.eval("document.body.dataset.rendered") == str(len(data["nodes"])) and len(data["nodes"]) >= 10
        assert b.eval("mdmemGraph.visibleKeys().length") == len(data["nodes"])
        folders = b.eval("[...document.querySelectorAll('#folders li')].map(li => li.dataset.value)")
        assert sorted(folders) == ["(top level)", "people"]  # below notes/, which every note shares
        kinds = b.eval("[...document.querySelectorAll('#kinds input')].map(i => i.dataset.kind)")
        assert {"note", "entity", "missing"} <= set(kinds)
        # The hostile title is text in the panel and on the canvas, never markup.
        b.eval("mdmemGraph.select('notes/evil.md')")
        assert b.eval("document.querySelector('#info h2').textContent") == EVIL
        assert b.eval("document.querySelectorAll('img').length") == 0
        assert b.eval("document.scripts.length") == 2 and b.errors == []
        assert b.eval("[...document.querySelectorAll('#info ul.out li')].map(li => li.textContent)") == [
            "\u2192 Q3 budget approved"
        ]


# -- help ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("cmd", cli_commands("graph"), ids=" ".join)
def test_graph_commands_have_help(cmd: list[str]) -> None:
    r = CliRunner().invoke(cli, [*cmd, "--help"])
    assert r.exit_code == 0 and "Usage:" in r.output
    assert len(r.output.split("\n\n")[1].strip()) > 20


# -- gold set --------------------------------------------------------------------------------------

GOLD = Path(__file__).resolve().parents[2] / "benchmarks" / "gold"


def test_gold_why_questions_have_their_cause_in_the_top_5(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = yaml.safe_load((GOLD / "queries.yaml").read_text(encoding="utf-8"))
    monkeypatch.setenv("MDMEM_NOW", str(data["as_of"]))
    root = tmp_path / "gold"
    shutil.copytree(GOLD / "vault", root)
    v = Vault.open(root)
    missed = []
    whys = [q for q in data["queries"] if q["kind"] == "why"]
    assert len(whys) >= 12
    for q in whys:
        top = [r["id"] for r in v.why(q["query"], limit=5, vectors=False)["results"]]
        causes = {nid for nid, grade in q["relevant"].items() if grade == 3}
        if not causes & set(top):
            missed.append((q["id"], sorted(causes), top))
    v.close()
    assert missed == []


def test_shortest_path_matches_plain_bfs_on_a_random_graph() -> None:
    import random

    rng = random.Random(5)
    links = [
        (f"n{rng.randrange(300)}", f"n{rng.randrange(300)}", rng.choice(("x", "caused_by", "mentions")))
        for _ in range(450)
    ]
    g = _graph(links)

    def bfs_len(a: str, b: str) -> int | None:
        dist = {a: 0}
        queue = [a]
        for key in queue:
            for _, other, _ in g.edges(key):  # type: ignore[attr-defined]
                if other not in dist:
                    dist[other] = dist[key] + 1
                    queue.append(other)
        return dist.get(b)

    nodes = sorted(g.nodes)  # type: ignore[attr-defined]
    for _ in range(200):
        a, b = rng.choice(nodes), rng.choice(nodes)
        steps = g.shortest_path(a, b)  # type: ignore[attr-defined]
        want = bfs_len(a, b)
        assert (None if steps is None else len(steps) - 1) == want
        if steps:
            assert steps[0].node == a and steps[-1].node == b
            for prev, step in zip(steps, steps[1:]):
                assert step.parent == prev.node
                ends = (step.parent, step.node) if step.direction == "out" else (step.node, step.parent)
                assert (step.edge.src, step.edge.dst) == ends
            if want is not None and want > 1:
                assert g.shortest_path(a, b, max_depth=want - 1) is None  # type: ignore[attr-defined]
                assert g.shortest_path(a, b, max_depth=want) is not None  # type: ignore[attr-defined]


def test_why_matches_with_bm25_and_falls_back_to_vectors(gv: Path) -> None:
    v = Vault.open(gv)
    assert v.why("why hotwire")["matches"] == "bm25"
    assert v.why("zebra quokka")["matches"] == "bm25"  # no vectors yet: the model is never loaded for this
    v.embed()
    assert v.why("why hotwire")["matches"] == "bm25"
    assert v.why("zebra quokka")["matches"] == "hybrid (no BM25 match)"
    assert v.why("zebra quokka", vectors=False)["matches"] == "bm25"
    v.close()
    assert jrun(gv, "why", "hotwire", "--vectors")["matches"] == "hybrid"


# -- a vault that is also a published site ---------------------------------------------------------

SITE_NOTES = {
    "sqlite/wal.md": "# Enabling WAL mode\nRun `PRAGMA journal_mode=wal`.\n",
    "python/backup.md": "# Backing up a database\nBefore the backup, switch to "
    "[WAL mode](https://til.example.net/sqlite/wal) as in https://til.example.net/sqlite/wal/.\n"
    "The [docs](https://sqlite.org/wal.html) say why; so does https://til.example.net/nowhere.\n",
}


@pytest.mark.parametrize("site", [False, True])
def test_links_to_the_vaults_own_site_are_note_links_with_the_site_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, site: bool
) -> None:
    from mdmem.edges.scaffold import init_vault

    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    root = tmp_path / "til"
    for rel, text in SITE_NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    init_vault(root)
    if site:
        (root / "mdmem.toml").write_text('[site]\nurl = "https://til.example.net/"\n')
    git(root, "add", "-A")
    git(root, "commit", "-qm", "notes")
    back = jrun(root, "backlinks", "sqlite/wal")["backlinks"]
    links = {
        (ln["type"], (ln["to"] or {}).get("id") or ln["written"])
        for ln in jrun(root, "links", "python/backup")["links"]
    }
    if site:
        assert [(b["type"], b["from"]["id"]) for b in back] == [("mentions", "python/backup")]
        assert ("mentions", "sqlite/wal") in links
        assert ("cites", "ref:url:https://sqlite.org/wal.html") in links  # another site stays a reference
        assert ("cites", "ref:url:https://til.example.net/nowhere") in links  # a page with no note too
        with Vault.open(root) as v:
            hits = v.query("backing up a database", limit=3)
            assert hits[0].path == "python/backup.md"
            assert any(h.id == "sqlite/wal" for h in hits[0].links)  # the hint follows the site link
    else:
        assert back == []
        assert ("cites", "ref:url:https://til.example.net/sqlite/wal") in links


def test_a_bad_site_setting_is_one_line_that_names_the_fix(gv: Path) -> None:
    (gv / "mdmem.toml").write_text('[site]\nurl = "til.example.net"\n')
    r = CliRunner().invoke(cli, ["--vault", str(gv), "search", "budget"])
    assert r.exit_code == 1 and "[site] url must be an http(s) address" in r.output
