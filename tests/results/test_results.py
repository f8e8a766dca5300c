"""The result model: every to_dict() is the JSON shape the commands printed before the result model
existed (then built by vault.Hit, lifecycle.Change, connect.edge_dict, …), key by key and in order;
from_dict() takes it back. The CLI's and MCP's documents are compared in test_render.py, against the
real commands.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from typing import Any

import pytest

from mdmem.core.note import Problem
from mdmem.results import (
    AddReport,
    AddResult,
    BacklinksAnswer,
    Change,
    Citation,
    CitesAnswer,
    ContextItem,
    Correction,
    DoctorReport,
    DuplicateCheck,
    DuplicateMatch,
    EmbedReport,
    EntityAnswer,
    EntityLink,
    EntityMention,
    ExportReport,
    FileChange,
    GitInfo,
    GraphEdge,
    GraphNode,
    History,
    Hit,
    Hits,
    ImportReport,
    IndexInfo,
    InitReport,
    LinkHint,
    LinksAnswer,
    LinkSuggestion,
    LogEntry,
    MemoryContext,
    MissingNote,
    Neighbor,
    NeighborsAnswer,
    NoteBatch,
    NoteDoc,
    NoteLink,
    NoteText,
    PathAnswer,
    Pending,
    PersonAnswer,
    PersonMention,
    RefItem,
    RefsAnswer,
    ReindexReport,
    ServeInfo,
    SetupReport,
    SweepCandidate,
    SweepReport,
    SweepRule,
    TimelineAnswer,
    TimelineItem,
    Unwritten,
    VaultStatus,
    VectorStatus,
    Version,
    WhyAnswer,
    WhyItem,
    flat,
)


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal, and in the same key order all the way down (JSON text is compared)."""
    return a == b and json.dumps(a, default=str) == json.dumps(b, default=str)


NOTE = GraphNode("m-hot", "notes/hotwire.md", "Use Hotwire", "decision")
SURVEY = GraphNode("m-survey", "notes/survey.md", "Team skills survey", "research")
ENTITY = GraphNode("entity:Hotwire", None, "Hotwire", "entity", "entity")
NOTE_D = {
    "id": "m-hot",
    "path": "notes/hotwire.md",
    "title": "Use Hotwire",
    "type": "decision",
    "kind": "note",
    "status": "active",
}
SURVEY_D = {
    "id": "m-survey",
    "path": "notes/survey.md",
    "title": "Team skills survey",
    "type": "research",
    "kind": "note",
    "status": "active",
}
CAUSED = GraphEdge(NOTE, "caused_by", SURVEY, "m-survey", "little React", direction="out")
CAUSED_D = {
    "from": NOTE_D,
    "type": "caused_by",
    "to": SURVEY_D,
    "written": "m-survey",
    "reason": "little React",
    "direction": "out",
}
HINT = LinkHint("caused_by", "out", "m-survey", "Team skills survey", reason="little React")
HIT = Hit(
    "m-hot",
    "notes/hotwire.md",
    "Use Hotwire",
    1.005,
    "We chose **Hotwire**",
    "decision",
    ["web"],
    "project:a",
    "2026-01-05T00:00:00Z",
    {"bm25": 11.2, "final": 1.005},
    [HINT],
)


# -- today's dataclasses and pure builders, field for field -------------------------------------------------


@pytest.mark.parametrize("explain", [None, {"bm25": 1.5, "final": 0.9}])
@pytest.mark.parametrize("links", [None, [], [HINT, LinkHint("about", "in", "entity:X", "X", "entity")]])
def test_hit_leaves_out_explain_and_links_when_none(
    explain: dict[str, Any] | None, links: list[LinkHint] | None
) -> None:
    ours = Hit("m-a", "a.md", "A", 0.5, "snip **x**", "fact", ["t"], "global", "2026-01-01T00:00:00Z", explain, links)
    expected = {
        "id": "m-a",
        "path": "a.md",
        "title": "A",
        "score": 0.5,
        "snippet": "snip **x**",
        "type": "fact",
        "tags": ["t"],
        "scope": "global",
        "date": "2026-01-01T00:00:00Z",
        **({} if explain is None else {"explain": explain}),
        **({} if links is None else {"links": [h.to_dict() for h in links]}),
    }
    assert same(ours.to_dict(), expected)
    assert Hit.from_dict(expected) == ours


def test_link_hint_leaves_out_an_empty_reason() -> None:
    assert HINT.to_dict() == {
        "type": "caused_by",
        "direction": "out",
        "id": "m-survey",
        "title": "Team skills survey",
        "kind": "note",
        "reason": "little React",
    }
    for reason in (None, ""):
        assert "reason" not in LinkHint("t", "in", "i", "T", reason=reason).to_dict()


@pytest.mark.parametrize("info", [{}, {"stages": ["bm25:1"], "served": False}])
def test_hits_is_the_list_it_was(info: dict[str, Any]) -> None:
    hits = Hits([HIT], "hotwire", info)
    assert isinstance(hits, list) and hits == [HIT] and hits[0].path == "notes/hotwire.md" and hits[:1] == [HIT]
    assert Hits() == [] and not Hits() and Hits().to_dict() == {"query": "", "count": 0, "results": []}
    expected = {"query": "hotwire", "count": 1, "results": [HIT.to_dict()], **({"info": info} if info else {})}
    assert same(hits.to_dict(), expected)  # info only when there is some, as the CLI writes it
    back = Hits.from_dict(hits.to_dict())
    assert back == hits and back.query == "hotwire" and back.info == info


@pytest.mark.parametrize(
    "node",
    [
        ("notes/a.md", "m-a", "A", "decision", "note", "archived"),
        ("entity:Hotwire", "entity:Hotwire", "Hotwire", "entity", "entity", "active"),
    ],
)
def test_graph_node_is_today_s(node: tuple[str, ...]) -> None:
    from mdmem.core.graph import Node

    today = Node(*node).to_dict()
    assert same(GraphNode.from_dict(today).to_dict(), today)


def _graph() -> Any:
    from mdmem.core.graph import Graph, Node

    g = Graph()
    g.nodes["notes/hotwire.md"] = Node("notes/hotwire.md", "m-hot", "Use Hotwire", "decision")
    g.nodes["notes/survey.md"] = Node("notes/survey.md", "m-survey", "Team skills survey", "research")
    return g


@pytest.mark.parametrize(
    "edge",
    [
        ("notes/hotwire.md", "notes/survey.md", "caused_by", "m-survey", "little React", None, None, ()),
        ("notes/hotwire.md", None, "mentions", "Missing note", None, None, None, ()),
        ("notes/hotwire.md", "notes/survey.md", "mentions", "Team skills survey#Results", None, "L", "Results", ()),
        ("notes/hotwire.md", "notes/survey.md", "mentions", "Survey", None, None, None, ("notes/survey.md", "b.md")),
        ("notes/hotwire.md", "notes/new.md", "related", "new", None, None, None, ()),  # a file not indexed yet
    ],
)
def test_graph_edge_from_the_graph(edge: tuple[Any, ...]) -> None:
    from mdmem.core.graph import Edge
    from mdmem.features.graph_view import graph_edge

    g, e = _graph(), Edge(*edge)
    unindexed = {
        "id": "notes/new",
        "path": "notes/new.md",
        "title": "notes/new.md",
        "type": "note",
        "kind": "note",
        "status": "unindexed",
    }
    for extra in ({}, {"dangling": e.dst is None}, {"direction": "in"}):
        d = graph_edge(g, e, **extra).to_dict()
        to = None if e.dst is None else g.nodes[e.dst].to_dict() if e.dst in g.nodes else unindexed
        assert same(
            d,
            {
                "from": g.nodes[e.src].to_dict(),
                "type": e.type,
                "to": to,
                "written": e.target,
                "reason": e.reason,
                **({"heading": e.heading} if e.heading else {}),
                **({"ambiguous": list(e.candidates)} if e.candidates else {}),
                **extra,
            },
        )
        assert GraphEdge.from_dict(d).to_dict() == d


def test_note_doc_of_a_parsed_note() -> None:
    from mdmem.core.note import note_dates, parse_note
    from mdmem.results import note_doc

    n = parse_note(
        "---\nid: m-a\ntitle: A\ntype: fact\ntags: [x]\nlinks:\n  - {to: m-b, type: led_to, reason: r}\n"
        "created: 2026-01-05\n---\n# Head\n\nSee [[B|the b]] and [[C#Part]].\n",
        "notes/a.md",
    )
    d = json.loads(json.dumps(note_doc(n).to_dict()))
    assert list(d) == [
        "id",
        "path",
        "title",
        "type",
        "status",
        "scope",
        "salience",
        "confidence",
        "pinned",
        "tags",
        "aliases",
        "entities",
        "created",
        "updated",
        "authored",
        "created_from",
        "updated_from",
        "snoozed_until",
        "valid_from",
        "valid_until",
        "supersedes",
        "links",
        "headings",
        "problems",
        "body",
    ]
    assert (d["id"], d["type"], d["tags"], d["created"], d["headings"]) == (
        "m-a",
        "fact",
        ["x"],
        "2026-01-05",
        ["Head"],
    )
    assert d["created_from"] is None  # without the index's dates, the note's own fields only
    dated = note_doc(n, note_dates(n, 1.8e9, (1.7e9, 1.75e9))).to_dict()
    assert [dated[k] for k in ("created", "created_from", "updated", "updated_from")] == [
        "2026-01-05",
        "frontmatter",
        "2025-06-15T15:06:40Z",
        "git",
    ]
    assert d["links"][0] == {
        "target": "m-b",
        "type": "led_to",
        "label": None,
        "heading": None,
        "reason": "r",
        "property": None,
    }
    assert same(NoteDoc.from_dict(d).to_dict(), d)
    assert [ln.type for ln in NoteDoc.from_dict(d).links] == ["led_to", "mentions", "mentions"]


# -- shapes, key by key ---------------------------------------------------------------------------------------


def test_nodes_flatten_with_their_own_fields_after() -> None:
    assert list(flat(NOTE, distance=1)) == [*NOTE_D, "distance"]
    assert same(Neighbor(SURVEY, 1, CAUSED).to_dict(), {**SURVEY_D, "distance": 1, "via": CAUSED_D})
    why = WhyItem(SURVEY, 1.0, "cause", 1, NOTE, [CAUSED])
    assert same(
        why.to_dict(), {**SURVEY_D, "score": 1.0, "role": "cause", "hops": 1, "match": NOTE_D, "chain": [CAUSED_D]}
    )
    assert same(TimelineItem(NOTE, None).to_dict(), {**NOTE_D, "date": None})
    assert same(EntityLink(NOTE, "about").to_dict(), {**NOTE_D, "via": "about", "reason": None})  # reason kept
    assert same(EntityMention(NOTE, "mentions", "s").to_dict(), {**NOTE_D, "via": "mentions", "snippet": "s"})


def test_graph_answers() -> None:
    dangling = GraphEdge(NOTE, "mentions", None, "Missing", dangling=True)
    assert same(
        dangling.to_dict(),
        {"from": NOTE_D, "type": "mentions", "to": None, "written": "Missing", "reason": None, "dangling": True},
    )
    full = GraphEdge(NOTE, "mentions", SURVEY, "S#H", heading="H", ambiguous=["a.md", "b.md"], dangling=False)
    assert list(full.to_dict()) == ["from", "type", "to", "written", "reason", "heading", "ambiguous", "dangling"]
    assert same(LinksAnswer(NOTE, [dangling]).to_dict(), {"note": NOTE_D, "count": 1, "links": [dangling.to_dict()]})
    assert same(BacklinksAnswer(ENTITY).to_dict(), {"note": ENTITY.to_dict(), "count": 0, "backlinks": []})
    assert list(NeighborsAnswer(NOTE, 2).to_dict()) == ["note", "depth", "count", "neighbors"]
    assert list(PathAnswer(NOTE, SURVEY, True, 1, [CAUSED]).to_dict()) == ["from", "to", "found", "length", "steps"]
    none = PathAnswer(NOTE, SURVEY, False, message="No path")
    assert same(
        none.to_dict(),
        {"from": NOTE_D, "to": SURVEY_D, "found": False, "length": None, "steps": [], "message": "No path"},
    )
    assert list(WhyAnswer("q", "bm25").to_dict()) == ["query", "matches", "count", "results"]
    tl = TimelineAnswer(TimelineItem(NOTE, "2026-01-05T00:00:00Z"), True, "related", after=[TimelineItem(SURVEY, None)])
    assert same(
        tl.to_dict(),
        {
            "anchor": {**NOTE_D, "date": "2026-01-05T00:00:00Z"},
            "from_query": True,
            "scope": "related",
            "before": [],
            "after": [{**SURVEY_D, "date": None}],
        },
    )
    assert list(EntityAnswer("Mei").to_dict()) == ["name", "names", "notes", "about", "linked", "mentions"]


def test_notes_read() -> None:
    doc = NoteDoc(
        "m-a",
        "a.md",
        "A",
        links=[NoteLink("m-b", "led_to", reason="r")],
        headings=["Head"],
        problems=[Problem("a.md", "tags", "bad")],
        body="body\n",
    )
    d = doc.to_dict()
    assert list(d)[-5:] == ["supersedes", "links", "headings", "problems", "body"]
    assert d["links"] == [
        {"target": "m-b", "type": "led_to", "label": None, "heading": None, "reason": "r", "property": None}
    ]
    assert d["problems"] == [{"path": "a.md", "field": "tags", "message": "bad", "fix": ""}]
    text = NoteText(doc, "---\ntitle: A\n---\nbody\n").to_dict()
    assert list(text)[-3:] == ["links", "text", "truncated"] and not {"body", "headings", "problems"} & set(text)
    cut = NoteText.cut(doc, "x" * 250, 200)
    assert cut.truncated and cut.text == "x" * 200 + "\n… (cut; raise max_chars for more)"
    assert NoteText.cut(doc, "x" * 200, 200) == NoteText(doc, "x" * 200, False)
    batch = NoteBatch([MissingNote("nope", "No note named 'nope'."), cut])
    assert same(
        batch.to_dict(), {"notes": [cut.to_dict()], "missing": [{"ref": "nope", "error": "No note named 'nope'."}]}
    )


def test_writes() -> None:
    exact = DuplicateMatch("m-a", "a.md", "A", similarity=1.0)
    near = DuplicateMatch("m-a", "a.md", "A", lexical=0.7, cosine=0.95)
    assert list(exact.to_dict()) == ["id", "path", "title", "similarity"]
    assert list(near.to_dict()) == ["id", "path", "title", "lexical", "cosine"]
    assert list(DuplicateMatch("m", "p", "t", lexical=0.1).to_dict()) == ["id", "path", "title", "lexical"]
    noop = AddReport(DuplicateCheck("NOOP", "the same text is already in the vault", [exact]))
    assert same(
        noop.to_dict(),
        {
            "decision": "NOOP",
            "reason": "the same text is already in the vault",
            "matches": [exact.to_dict()],
            "written": False,
        },
    )
    sg = LinkSuggestion("m-b", "b.md", "B", 0.4, "mdmem link m-n m-b --type related")
    written = AddReport(DuplicateCheck("ADD", "no similar note", [near]), AddResult("m-n", "n.md", "N", "abc"), [sg], 2)
    assert same(
        written.to_dict(),
        {
            "decision": "ADD",
            "written": True,
            "id": "m-n",
            "path": "n.md",
            "title": "N",
            "commit": "abc",
            "matches": [near.to_dict()],
            "suggested_links": [sg.to_dict()],
            "redacted": 2,
        },
    )
    old = Change("correct", "m-a", "a.md", "A", {"status": "archived", "superseded_by": "m-n"}, "abc")
    assert same(
        Correction(AddResult("m-n", "n.md", "N"), old).to_dict(),
        {"new": {"id": "m-n", "path": "n.md", "title": "N"}, "old": old.to_dict(), "commit": "abc"},
    )
    assert list(Correction(AddResult("m-n", "n.md", "N"), old, 0).to_dict()) == ["new", "old", "commit", "redacted"]
    assert list(Change("pin", "i", "p", "t").to_dict()) == [
        "action",
        "id",
        "path",
        "title",
        "fields",
        "commit",
        "changed",
    ]


def test_reports() -> None:
    status = VaultStatus(
        "/v",
        2,
        {"fact": 2},
        {"active": 2},
        0,
        0,
        IndexInfo("w 2.7", 4, "gen-1", "2026", 10),
        VectorStatus(error="no model"),
        ServeInfo(12, 8080),
        Pending(new=["n.md"]),
        False,
        GitInfo(True, "abc", None, ["post-commit"]),
    )
    d = status.to_dict()
    assert list(d) == [
        "vault",
        "notes",
        "types",
        "statuses",
        "problems",
        "notes_with_problems",
        "index",
        "vectors",
        "serve",
        "pending",
        "fresh",
        "git",
        "catching_up",
        "conflicts",
        "vault_problems",
        "unwritten_links",
    ]
    assert d["catching_up"] is None  # a background job's reason while one catches up (test_catchup.py)
    assert d["vectors"] == {"error": "no model"} and d["serve"] == {"pid": 12, "port": 8080}
    assert VectorStatus("hash", 1, 2, False).to_dict() == {
        "model": "hash",
        "chunks_with_vectors": 1,
        "chunks": 2,
        "complete": False,
    }
    assert same(
        DoctorReport([Problem("a.md", "f", "m", "x")]).to_dict(),
        {
            "count": 1,
            "kinds": [{"kind": "f", "count": 1, "files": 1}],
            "problems": [{"path": "a.md", "field": "f", "message": "m", "fix": "x"}],
            "unwritten": [],
            "unwritten_links": 0,
        },
    )
    planned = DoctorReport([], [Unwritten("a.md", "parent", "Idea", 2), Unwritten("b.md", "body", "Idea")])
    assert planned.links_unwritten == 3 and planned["count"] == 0
    assert planned["unwritten"][0] == {"path": "a.md", "field": "parent", "target": "Idea", "links": 2}
    assert same(DoctorReport.from_dict(planned.to_dict()).to_dict(), planned.to_dict())
    ctx = MemoryContext("t", 10, 600, [ContextItem("m", "p", "T", "fact", "pinned", None)], "why", 1.5)
    assert list(ctx.to_dict()) == ["text", "tokens", "budget", "items", "intent", "ms", "vectors"]
    assert list(SetupReport("/v", True).to_dict()) == ["vault", "dry_run", "files"]
    assert ExportReport("g.dot", "dot", 12).to_dict() == {"output": "g.dot", "format": "dot", "bytes": 12}


# -- every result: from_dict(to_dict()) is the result; frozen; JSON-ready --------------------------------------

SAMPLES: list[Any] = [
    HINT,
    HIT,
    Hit("a", "a.md", "A", 1.0),
    NOTE,
    ENTITY,
    CAUSED,
    GraphEdge(NOTE, "x", None, "w", dangling=True),
    LinksAnswer(NOTE, [CAUSED]),
    BacklinksAnswer(SURVEY, [CAUSED]),
    Neighbor(SURVEY, 1, CAUSED),
    NeighborsAnswer(NOTE, 1, [Neighbor(SURVEY, 1, CAUSED)]),
    PathAnswer(NOTE, SURVEY, True, 1, [CAUSED]),
    PathAnswer(NOTE, SURVEY, False, message="none"),
    WhyItem(SURVEY, 0.9, "cause", 1, NOTE, [CAUSED]),
    WhyAnswer("q", "bm25", [WhyItem(NOTE, 1.0, "match", 0, NOTE)]),
    TimelineAnswer(TimelineItem(NOTE, "2026"), False, "all", [TimelineItem(ENTITY, None)]),
    EntityAnswer(
        "Mei",
        ["Mei"],
        [NOTE],
        [EntityLink(SURVEY, "about")],
        [EntityLink(NOTE, "led_to", "r")],
        [EntityMention(SURVEY, "mentions", "s")],
    ),
    NoteDoc("m", "p.md", "T", links=[NoteLink("x")], problems=[Problem("p.md", "f", "m")]),
    NoteText(NoteDoc("m", "p.md", "T"), "text"),
    MissingNote("r", "e"),
    Change("pin", "i", "p", "t", {"pinned": True}, "abc"),
    AddResult("i", "p", "t", None),
    DuplicateCheck("UPDATE", "near", [DuplicateMatch("i", "p", "t", lexical=0.7)]),
    AddReport(DuplicateCheck("NOOP", "same", [DuplicateMatch("i", "p", "t", 1.0)]), redacted=0),
    AddReport(DuplicateCheck("ADD", "", []), AddResult("i", "p", "t", "c"), [LinkSuggestion("i", "p", "t", 0.3, "c")]),
    Correction(AddResult("n", "n.md", "N"), Change("correct", "i", "p", "t"), 1),
    History("p.md", [Version("i", "p.md", "T", "active", "2026", None, None, True, [LogEntry("c", "d", "a", "s")])]),
    SweepReport(SweepRule(30.0), True, [SweepCandidate("i", "p", "t", "note", None, 40)], ["p"]),
    VaultStatus(
        "/v",
        0,
        {},
        {},
        0,
        0,
        IndexInfo(None, None, None, None, 0),
        VectorStatus("hash"),
        None,
        Pending(),
        True,
        GitInfo(False, None, None),
    ),
    DoctorReport([Problem("p", "f", "m", "x")]),
    ReindexReport(True, ["a"], problems=[Problem("a", "f", "m")]),
    EmbedReport("hash", 1),
    MemoryContext("t", 1, 50, [ContextItem("i", "p", "t", "fact", "relevant", 0.5)]),
    InitReport("/v", False, ["mdmem.toml"]),
    ImportReport("jsonl", "/s", adopted=InitReport("/s", True)),
    FileChange("/f", ["a"]),
    SetupReport("/v", False, [FileChange("/f")]),
    ExportReport("o", "json", 1),
    RefItem("ticket", "PAY-1", "pay-1", "frontmatter"),
    RefsAnswer(NOTE, [RefItem("email", "a@x.org", "A@x.org", "body", SURVEY)]),
    Citation(NOTE, "http://x.org/", "body"),
    CitesAnswer("x.org", "url", "https://x.org", [Citation(NOTE, "x", "body")]),
    CitesAnswer("PAY-9", "ticket", "PAY-9", similar=["PAY-99"]),
    PersonMention(NOTE, "2026", ["entities: @a"]),
    PersonAnswer(
        "@a",
        SURVEY,
        ["A", "@a"],
        "s",
        [PersonMention(NOTE, None, ["link: A"])],
        [TimelineItem(NOTE, "2026")],
        ["@a: also claimed by b.md"],
    ),
]


def test_ref_item_leaves_out_a_person_it_does_not_name() -> None:
    assert RefItem("url", "https://x.org", "x", "body").to_dict() == {
        "kind": "url",
        "value": "https://x.org",
        "written": "x",
        "origin": "body",
    }
    assert RefItem("email", "a@x.org", "a@x.org", "body", SURVEY).to_dict()["person"] == SURVEY.to_dict()


@pytest.mark.parametrize("result", SAMPLES, ids=lambda r: type(r).__name__)
def test_round_trip(result: Any) -> None:
    d = result.to_dict()
    assert type(result).from_dict(d) == result
    assert json.dumps(type(result).from_dict(json.loads(json.dumps(d))).to_dict()) == json.dumps(d)  # through JSON
    assert json.loads(json.dumps(d)) == json.loads(json.dumps(d, default=repr))  # nothing but JSON types
    if dataclasses.is_dataclass(result):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(result, dataclasses.fields(result)[0].name, None)
        assert not hasattr(result, "__dict__")  # slots


def test_note_batch_keeps_the_order_asked_only_in_itself() -> None:
    batch = NoteBatch([MissingNote("a", "e"), NoteText(NoteDoc("m", "p.md", "T"), "t")])
    assert [type(i) for i in NoteBatch.from_dict(batch.to_dict()).items] == [NoteText, MissingNote]


def test_results_are_pure() -> None:
    """results, every type of it loaded, imports nothing but the standard library and mdmem.core.note
    (a fresh interpreter tells)."""
    code = (
        "import sys, importlib, mdmem.results as r; [importlib.import_module(f'mdmem.results.{m}') for m in r.MODULES]; "
        "print(sorted(m for m in sys.modules if m.startswith('mdmem')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    others = {m for m in eval(out) if not m.startswith("mdmem.results")}
    assert "mdmem.core.note" in others and others <= {
        "mdmem",
        "mdmem.core",
        "mdmem.core.note",
        "mdmem.core.links",
        "mdmem.core.refs",
        "mdmem.core.schema",
        "mdmem.core.version",
    }
