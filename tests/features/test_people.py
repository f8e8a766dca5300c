"""Issue 17 through the real parts: external references (refs, cites, the graph and its export) and
people (person, recall for who-questions, doctor) in a real git vault with mdmem's hooks, the CLI in
process and the MCP tools through the SDK's own client.

Goal of the issue, stated here: every way an identity can be written in a note resolves to the one
person (``test_every_way_of_writing_an_identity_resolves_to_the_one_person``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mdmem import render
from mdmem.api.vault import Vault
from mdmem.results import CitesAnswer, PersonAnswer, RefsAnswer

from ..conftest import git, mdmem_in_process
from ..edges.test_mcp import run, stdio_session, text

ALICE = """---
title: Alice Smith
type: person
aliases: [Ali]
identities: [alice@example.com, "@alice", "github:alicesmith"]
---
# Alice Smith

Engineering lead for payments; owns the checkout service.
"""

# note → (its text, how it names Alice); every way an identity can be written
WAYS: dict[str, tuple[str, str]] = {
    "notes/name-case.md": (
        "---\ntitle: Budget review\ncreated: 2026-01-05\nentities: [ALICE smith]\n---\nBudget.\n",
        "entities: ALICE smith",
    ),
    "notes/alias.md": (
        "---\ntitle: Alias entity\ncreated: 2026-01-06\nentities: [ali]\n---\nAn alias.\n",
        "entities: ali",
    ),
    "notes/handle-at.md": (
        "---\ntitle: Handle with at\ncreated: 2026-01-07\nentities: ['@Alice']\n---\nHandle.\n",
        "entities: @Alice",
    ),
    "notes/handle-bare.md": (
        "---\ntitle: Handle without at\ncreated: 2026-01-08\nentities: [alice]\n---\nBare.\n",
        "entities: alice",
    ),
    "notes/service-id.md": (
        "---\ntitle: Service id\ncreated: 2026-01-09\nentities: ['github:AliceSmith']\n---\nId.\n",
        "entities: github:AliceSmith",
    ),
    "notes/email-entity.md": (
        "---\ntitle: Email entity\ncreated: 2026-01-10\nentities: [Alice@Example.com]\n---\nE.\n",
        "entities: Alice@Example.com",
    ),
    "notes/email-refs.md": (
        "---\ntitle: Retry policy decided\ntype: decision\ncreated: 2026-01-11\n"
        "refs: ['mailto:ALICE@example.com']\n---\nWe retry once.\n",
        "refs: mailto:ALICE@example.com",
    ),
    "notes/email-body.md": (
        "---\ntitle: Email in body\ncreated: 2026-01-12\n---\nAsk Alice@Example.COM first.\n",
        "body: Alice@Example.COM",
    ),
    "notes/email-autolink.md": (
        "---\ntitle: Email autolink\ncreated: 2026-01-13\n---\nWrite to <alice@example.com>.\n",
        "body: mailto:alice@example.com",
    ),
    "notes/wikilink-title.md": (
        "---\ntitle: Wikilink by title\ncreated: 2026-01-14\n---\nSee [[Alice Smith]].\n",
        "link: Alice Smith",
    ),
    "notes/wikilink-path.md": (
        "---\ntitle: Wikilink by path\ncreated: 2026-01-15\n---\nSee [[people/alice]].\n",
        "link: people/alice",
    ),
    "notes/wikilink-alias.md": (
        "---\ntitle: Wikilink by alias\ncreated: 2026-01-16\n---\nSee [[Ali|her]].\n",
        "link: Ali",
    ),
    "notes/wikilink-handle.md": (
        "---\ntitle: Wikilink by handle\ncreated: 2026-01-17\n---\nSee [[@alice]].\n",
        "link: @alice",
    ),
    "notes/md-link.md": (
        "---\ntitle: Markdown link to her note\ncreated: 2026-01-18\n---\nSee [her](../people/alice.md).\n",
        "link: ../people/alice.md",
    ),
    "notes/typed-link.md": (
        '---\ntitle: Typed link\ncreated: 2026-01-19\nlinks:\n  - {to: "[[Alice Smith]]", '
        "type: reviewed_by}\n---\nReviewed.\n",
        "links (reviewed_by): Alice Smith",
    ),
}
# notes that must not resolve to her
OTHERS = {
    "notes/bob.md": "---\ntitle: Bob's note\nentities: [Bob, alicia]\n---\nBob wrote alice in prose only.\n",
    "notes/code.md": "---\ntitle: Code sample\n---\n```\nalice@example.com\n```\nAnd `alice@example.com` inline.\n",
}
REFS_NOTE = """---
title: Payment retries
type: decision
created: 2026-02-01
refs:
  - PAY-1234
  - https://www.Example.com/docs/retries/
  - doi:10.1000/ABC.1
  - docs/Retry Plan.pdf
  - github:acme
---
See the [retry docs](http://example.com/docs/retries#backoff) and https://status.example.com/incidents/42.

```
https://in.code.example/ignored
```
"""


def write(root: Path, files: dict[str, str]) -> None:
    for rel, body in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body, encoding="utf-8")


@pytest.fixture(autouse=True)
def _hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    monkeypatch.setenv("MDMEM_NO_SERVE", "1")


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A git vault with mdmem's hooks: Alice's person note, a note for each way of naming her, the
    references note; committed (the post-commit hook indexes it)."""
    root = tmp_path / "v"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    mdmem_in_process("init", str(root))
    write(
        root,
        {
            "people/alice.md": ALICE,
            **{k: v for k, (v, _) in WAYS.items()},
            **OTHERS,
            "notes/payment-retries.md": REFS_NOTE,
        },
    )
    git(root, "add", "-A")
    git(root, "commit", "-qm", "people and references")
    return root


def cli(root: Path, *args: str) -> Any:
    """A command's --json answer (doctor exits 1 when it finds problems)."""
    return json.loads(mdmem_in_process("--vault", str(root), *args, "--json", check=args[0] != "doctor").stdout)


def test_every_way_of_writing_an_identity_resolves_to_the_one_person(vault: Path) -> None:
    forms = [
        "Alice Smith",
        "alice smith",
        "ALI",
        "@alice",
        "alice",
        "github:alicesmith",
        "GitHub:AliceSmith",
        "alice@example.com",
        "mailto:Alice@Example.COM",
        "people/alice",
        "people/alice.md",
    ]
    with Vault.open(vault) as v:
        for form in forms:
            a = v.person(form)
            assert a.person.path == "people/alice.md", form
            found = {n.node.path: n.via for n in a.notes}
            assert set(found) == set(WAYS), (form, set(found) ^ set(WAYS))
            for path, (_, via) in WAYS.items():
                assert via in found[path], (path, found[path])
        g = v.graph()
        for path in WAYS:  # and the graph says so: each note has an edge to her note
            assert any(e.dst == "people/alice.md" for e in g.out[path]), path
        assert not any(e.dst == "people/alice.md" for p in OTHERS for e in g.out.get(p, []))
        assert g.entity("alicia") != "people/alice.md"
        # a link that names her identity is not dangling
        assert not [p for p in v.doctor().problems if p.path in WAYS]


def test_person_answer_identity_summary_notes_and_timeline(vault: Path) -> None:
    a = cli(vault, "person", "@alice")
    assert a["person"]["title"] == "Alice Smith" and a["person"]["type"] == "person"
    assert a["identities"] == ["Alice Smith", "Ali", "alice@example.com", "@alice", "github:alicesmith"]
    assert a["summary"] == "Engineering lead for payments; owns the checkout service."
    assert a["count"] == len(WAYS) and [n["title"] for n in a["notes"]] == sorted(
        (n["title"] for n in a["notes"]), key=str.casefold
    )
    # the timeline: her notes by date (note_dates: the frontmatter's created here), oldest first
    assert [t["path"] for t in a["timeline"]] == sorted(WAYS, key=lambda p: WAYS[p][0].split("created: ")[1][:10])
    assert a["timeline"][0]["date"].startswith("2026-01-05")
    result = PersonAnswer.from_dict(a)
    text = mdmem_in_process("--vault", str(vault), "person", "@alice").stdout
    assert text == render.cli(result).out
    assert text.startswith("Alice Smith  [person]  people/alice\n  identities: Alice Smith, Ali,")
    assert "  Retry policy decided  [decision]  notes/email-refs  — refs: mailto:ALICE@example.com\n" in text


def test_person_not_found_says_what_a_person_is(vault: Path) -> None:
    proc = mdmem_in_process("--vault", str(vault), "person", "carol@example.com", check=False)
    assert proc.returncode == 1 and "No person is known as 'carol@example.com'" in proc.stderr
    assert "type: person" in proc.stderr and "mdmem entity" in proc.stderr
    proc = mdmem_in_process("--vault", str(vault), "person", "Budget review", check=False)
    assert proc.returncode == 1 and "is a note, not a person note" in proc.stderr


def test_refs_lists_kind_value_as_written_and_origin(vault: Path) -> None:
    a = cli(vault, "refs", "Payment retries")
    assert [(r["kind"], r["value"], r["written"], r["origin"]) for r in a["refs"]] == [
        ("ticket", "PAY-1234", "PAY-1234", "frontmatter"),
        ("url", "https://example.com/docs/retries", "https://www.Example.com/docs/retries/", "frontmatter"),
        ("doi", "10.1000/abc.1", "doi:10.1000/ABC.1", "frontmatter"),
        ("path", "docs/Retry Plan.pdf", "docs/Retry Plan.pdf", "frontmatter"),
        ("id", "github:acme", "github:acme", "frontmatter"),
        ("url", "https://example.com/docs/retries", "http://example.com/docs/retries#backoff", "body"),
        ("url", "https://status.example.com/incidents/42", "https://status.example.com/incidents/42", "body"),
    ]
    text = mdmem_in_process("--vault", str(vault), "refs", "Payment retries").stdout
    assert text == render.cli(RefsAnswer.from_dict(a)).out
    assert (
        "  url     https://example.com/docs/retries  (written https://www.Example.com/docs/retries/)  [frontmatter]"
        in text
    )
    # an e-mail reference names its person
    person = cli(vault, "refs", "notes/email-refs")["refs"][0]["person"]
    assert person["path"] == "people/alice.md"


@pytest.mark.parametrize(
    ("ref", "kind", "value"),
    [
        ("pay-1234", "ticket", "PAY-1234"),
        ("http://example.com/docs/retries/", "url", "https://example.com/docs/retries"),
        ("https://WWW.EXAMPLE.COM/docs/retries#top", "url", "https://example.com/docs/retries"),
        ("example.com/docs/retries", "url", "https://example.com/docs/retries"),  # written without a scheme
        ("https://doi.org/10.1000/abc.1", "doi", "10.1000/abc.1"),
        ("DOI:10.1000/ABC.1", "doi", "10.1000/abc.1"),
        ("docs/Retry Plan.pdf", "path", "docs/Retry Plan.pdf"),
        ("GitHub:Acme", "id", "github:acme"),
    ],
)
def test_cites_finds_the_note_by_any_written_form(vault: Path, ref: str, kind: str, value: str) -> None:
    a = cli(vault, "cites", ref)
    assert (a["kind"], a["value"]) == (kind, value)
    assert [n["path"] for n in a["notes"]] == ["notes/payment-retries.md"]
    assert mdmem_in_process("--vault", str(vault), "cites", ref).stdout == render.cli(CitesAnswer.from_dict(a)).out


def test_cites_an_e_mail_address_in_any_case_and_what_nobody_cites(vault: Path) -> None:
    a = cli(vault, "cites", "ALICE@EXAMPLE.COM")
    assert [(n["path"], n["origin"]) for n in a["notes"]] == [
        ("notes/email-autolink.md", "body"),
        ("notes/email-body.md", "body"),
        ("notes/email-refs.md", "frontmatter"),
    ]
    none = cli(vault, "cites", "docs/retry plan.pdf")  # a path matches as written; the answer shows what was meant
    assert none["count"] == 0 and none["similar"] == ["docs/Retry Plan.pdf"]
    none = cli(vault, "cites", "https://example.com/docs")
    assert none["count"] == 0 and none["similar"] == ["https://example.com/docs/retries"]
    assert "cited values like it" in mdmem_in_process("--vault", str(vault), "cites", "https://example.com/docs").stdout


def test_cites_hides_forgotten_notes_unless_asked(vault: Path) -> None:
    mdmem_in_process("--vault", str(vault), "forget", "Payment retries")
    assert cli(vault, "cites", "PAY-1234")["count"] == 0
    assert cli(vault, "cites", "PAY-1234", "--include", "forgotten")["count"] == 1


def test_graph_shows_external_nodes_as_their_own_kind(vault: Path, tmp_path: Path) -> None:
    data = json.loads(mdmem_in_process("--vault", str(vault), "graph", "export").stdout)
    external = {n["key"]: n for n in data["nodes"] if n["kind"] == "external"}
    assert {
        "ref:ticket:PAY-1234",
        "ref:url:https://example.com/docs/retries",
        "ref:doi:10.1000/abc.1",
        "ref:url:https://status.example.com/incidents/42",
    } <= set(external)
    assert external["ref:ticket:PAY-1234"]["type"] == "ticket" and external["ref:ticket:PAY-1234"]["path"] is None
    cites = [(e["source"], e["target"]) for e in data["edges"] if e["type"] == "cites"]
    assert ("notes/payment-retries.md", "ref:ticket:PAY-1234") in cites
    assert ("notes/email-refs.md", "people/alice.md") in cites  # an e-mail of a person cites the person
    assert not [k for k in external if "in.code" in k or "alice@" in k]
    bare = json.loads(mdmem_in_process("--vault", str(vault), "graph", "export", "--no-external").stdout)
    assert not [n for n in bare["nodes"] if n["kind"] == "external"]
    assert not [e for e in bare["edges"] if e["target"].startswith("ref:")]
    page = tmp_path / "g.html"
    mdmem_in_process("--vault", str(vault), "graph", "export", "-f", "html", "-o", str(page))
    html = page.read_text()
    block = json.loads(html.split('<script type="application/json" id="mdmem-graph">')[1].split("</script>")[0])
    rows = [(block["kinds"][r[0]], block["types"][r[1]], r[3]) for r in block["nodes"]]  # graph_html.compact
    assert ("external", "ticket", "PAY-1234") in rows and 'external: "#bf8700"' in html
    dot = mdmem_in_process("--vault", str(vault), "graph", "export", "-f", "dot").stdout
    assert '"ref:ticket:PAY-1234" [label="PAY-1234", shape=hexagon]' in dot


def test_graph_commands_take_an_external_thing(vault: Path) -> None:
    back = cli(vault, "backlinks", "http://www.example.com/docs/retries/")
    assert back["note"]["kind"] == "external" and back["note"]["type"] == "url"
    assert [(b["from"]["path"], b["count"]) for b in back["backlinks"]] == [("notes/payment-retries.md", 2)]
    links = mdmem_in_process("--vault", str(vault), "links", "Payment retries").stdout
    assert (
        "cites        → ticket PAY-1234" in links and "cites        → url https://example.com/docs/retries  ×2" in links
    )


def test_incremental_reindex_after_editing_refs_updates_cites(vault: Path) -> None:
    """A commit's hook catches up (no reindex asked), then an edit not committed (``reindex``)."""
    mdmem_in_process("--vault", str(vault), "hooks", "install")
    note = vault / "notes/payment-retries.md"
    note.write_text(REFS_NOTE.replace("PAY-1234", "PAY-2000"), encoding="utf-8")
    git(vault, "commit", "-qam", "the ticket moved")
    state = json.loads(mdmem_in_process("--vault", str(vault), "status", "--json").stdout)
    assert state["fresh"] is True  # the post-commit hook indexed the change
    assert cli(vault, "cites", "PAY-1234")["count"] == 0
    assert [n["path"] for n in cli(vault, "cites", "pay-2000")["notes"]] == ["notes/payment-retries.md"]
    note.write_text(REFS_NOTE.replace("PAY-1234", "PAY-3000"), encoding="utf-8")  # not committed
    assert "1 updated" in mdmem_in_process("--vault", str(vault), "reindex").stdout  # incremental: this note only
    assert cli(vault, "cites", "PAY-2000")["count"] == 0
    assert cli(vault, "cites", "PAY-3000")["count"] == 1
    # and an identity edited away stops resolving
    (vault / "people/alice.md").write_text(ALICE.replace('"@alice", ', ""), encoding="utf-8")
    git(vault, "commit", "-qam", "no handle")
    found = {n["path"] for n in cli(vault, "person", "Alice Smith")["notes"]}
    assert "notes/handle-at.md" not in found and "notes/email-refs.md" in found


def test_two_person_notes_claiming_one_identity(vault: Path) -> None:
    write(
        vault,
        {
            "people/zed.md": "---\ntitle: Zed\ntype: person\nidentities: [alice@example.com, zed@example.com]\n"
            "---\nAnother.\n",
            "people/aardvark.md": "---\ntitle: Aardvark\ntype: person\nidentities: ['@alice']\n---\n",
        },
    )
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "clashing people")
    # deterministic: the first by path wins each clash
    a = cli(vault, "person", "alice@example.com")
    assert a["person"]["path"] == "people/alice.md"
    assert a["clashes"] == [
        "@alice: also claimed by people/aardvark.md; mentions go to people/aardvark.md (the first by path)",
        "alice@example.com: also claimed by people/zed.md; mentions go to people/alice.md (the first by path)",
    ]
    assert cli(vault, "person", "@alice")["person"]["path"] == "people/aardvark.md"
    assert cli(vault, "person", "alice")["person"]["path"] == "people/aardvark.md"  # the derived form follows
    assert cli(vault, "person", "zed@example.com")["person"]["path"] == "people/zed.md"
    problems = [(p["path"], p["message"]) for p in cli(vault, "doctor")["problems"] if p["field"] == "identities"]
    assert problems == [
        (
            "people/alice.md",
            "identity '@alice' is also claimed by people/aardvark.md; mentions of it resolve to "
            "people/aardvark.md (the first by path)",
        ),
        (
            "people/zed.md",
            "identity 'alice@example.com' is also claimed by people/alice.md; mentions of it resolve "
            "to people/alice.md (the first by path)",
        ),
    ]
    text = mdmem_in_process("--vault", str(vault), "doctor", check=False).stdout
    assert "fix: keep each identity on one person note" in text


def test_recall_who_questions_find_the_person_and_their_notes(vault: Path) -> None:
    with Vault.open(vault) as v:
        hits = v.recall("who is alice@example.com", 5)
        assert hits.info["intent"] == "who"
        assert hits[0].path == "people/alice.md"
        hits = v.recall("what did @alice decide", 5)
        assert hits.info["intent"] == "who"
        paths = [h.path for h in hits]
        assert "notes/email-refs.md" in paths[:3]  # the decision, linked to her by an e-mail in its refs


def test_mcp_refs_cites_and_person_through_the_sdk_client(vault: Path, tmp_path: Path) -> None:
    async def main() -> None:
        async with stdio_session(vault, tmp_path / "err.log") as s:
            await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert {"refs", "cites", "person"} <= set(tools)
            assert all(tools[t].annotations.read_only_hint for t in ("refs", "cites", "person"))
            r = await s.call_tool("refs", {"note": "Payment retries"})
            assert not r.is_error and r.structured_content["count"] == 7
            assert "ticket  PAY-1234  [frontmatter]" in text(r)
            r = await s.call_tool("cites", {"ref": "http://WWW.example.com/docs/retries/"})
            assert [n["path"] for n in r.structured_content["notes"]] == ["notes/payment-retries.md"]
            r = await s.call_tool("person", {"name": "github:alicesmith"})
            assert r.structured_content["person"]["path"] == "people/alice.md"
            assert r.structured_content["count"] == len(WAYS) and "Alice Smith  [person]" in text(r)
            r = await s.call_tool("person", {"name": "nobody@example.com"})
            assert r.is_error and "No person is known" in text(r)
            r = await s.call_tool(
                "add",
                {
                    "title": "Refund flow agreed",
                    "body": "Refunds go through the ledger.",
                    "type": "decision",
                    "refs": ["pay-1234", "https://ledger.example/refunds/"],
                    "entities": ["@alice"],
                },
            )
            assert not r.is_error, text(r)
            r = await s.call_tool("cites", {"ref": "PAY-1234"})
            assert {n["title"] for n in r.structured_content["notes"]} == {"Payment retries", "Refund flow agreed"}
            r = await s.call_tool("person", {"name": "Ali"})
            assert "Refund flow agreed" in {n["title"] for n in r.structured_content["notes"]}

    run(main)


def test_an_index_from_before_references_is_rebuilt(vault: Path) -> None:
    """Schema 7 added references and identities: an index of schema 6 (no such tables) is rebuilt on the
    next read, not read as if no note cited anything."""
    import sqlite3

    with Vault.open(vault) as v:
        state = v.store.state
        gen = state.generation()
        assert gen is not None
    db = sqlite3.connect(state.dir / gen / "catalog.sqlite")
    db.executescript("DROP TABLE refs; DROP TABLE identities;")
    db.close()
    manifest = json.loads(state.manifest_path.read_text())
    state.manifest_path.write_text(json.dumps({**manifest, "schema": 6}))
    assert [n["path"] for n in cli(vault, "cites", "PAY-1234")["notes"]] == ["notes/payment-retries.md"]
    assert cli(vault, "person", "@alice")["count"] == len(WAYS)


def test_add_writes_refs_that_cites_finds(vault: Path) -> None:
    mdmem_in_process(
        "--vault",
        str(vault),
        "add",
        "-t",
        "Ledger owner",
        "--type",
        "fact",
        "--ref",
        "OPS-9",
        "--ref",
        "mailto:Alice@Example.com",
        "-b",
        "The ledger belongs to payments.",
    )
    text = next((vault / "notes").glob("ledger-owner*.md")).read_text()
    assert "refs: [OPS-9, 'mailto:Alice@Example.com']" in text
    assert [n["title"] for n in cli(vault, "cites", "ops-9")["notes"]] == ["Ledger owner"]
    assert "Ledger owner" in {n["title"] for n in cli(vault, "person", "alice")["notes"]}


def test_timeline_shares_a_cited_thing_like_an_entity_but_not_a_hub(vault: Path) -> None:
    files = {
        f"notes/hub-{i}.md": f"---\ntitle: Hub citer {i}\ncreated: 2026-03-{i + 1:02d}\n---\n"
        f"See https://hub.example/home.\n"
        for i in range(14)
    }
    files["notes/pair-a.md"] = (
        "---\ntitle: Pair A\ncreated: 2026-05-01\nrefs: [OPS-77]\n---\nSee https://hub.example/home.\n"
    )
    files["notes/pair-b.md"] = "---\ntitle: Pair B\ncreated: 2026-06-01\nrefs: [ops-77]\n---\nUnrelated words here.\n"
    write(vault, files)
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "citers")
    t = cli(vault, "timeline", "Pair A", "--no-vectors")
    around = [n["path"] for n in t["before"] + t["after"]]
    assert "notes/pair-b.md" in around  # they cite one ticket
    assert not [p for p in around if p.startswith("notes/hub-")]  # a page 15 notes cite is a hub, not a story


ADA = "---\ntitle: Ada Lovelace\ntype: person\nidentities: ['@countess_ada']\n---\nAnalyst of the engine.\n"
PROSE = {
    "notes/table.md": "---\ntitle: Orders table schema\ntype: decision\n---\nAda Lovelace reviewed the table "
    "and we chose one row per order line.\n",
    "notes/ping.md": "---\ntitle: Order status\n---\nPinged @countess_ada about the order numbers.\n",
    "notes/script.md": "---\ntitle: Export script\n---\nThe export runs nightly.\n\n```python\n"
    "owner = 'Ada Lovelace'  # @countess_ada\n```\n",
    "notes/first-name.md": "---\ntitle: Engine notes\n---\nAda decided to keep the punch cards.\n",
}


def test_people_named_in_prose_are_mentions_and_a_shared_first_name_is_ambiguous(vault: Path) -> None:
    write(vault, {"people/ada.md": ADA, **PROSE})
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "Ada in prose")
    ways = {m["path"]: m["via"] for m in cli(vault, "person", "Ada Lovelace")["notes"]}
    assert ways["notes/table.md"] == ["prose: Ada Lovelace"] and ways["notes/ping.md"] == ["prose: @countess_ada"]
    assert ways["notes/first-name.md"] == ["prose: Ada"]  # her first name: nobody else goes by it
    assert "notes/script.md" not in ways  # code is not prose
    assert {b["from"]["path"] for b in cli(vault, "backlinks", "Ada Lovelace")["backlinks"]} >= {
        "notes/table.md",
        "notes/ping.md",
    }
    assert cli(vault, "person", "Ada")["person"]["path"] == "people/ada.md"
    with Vault.open(vault) as v:
        hits = v.recall("what did Ada decide", 5, explain=True)
        assert hits.info["intent"] == "who"
        # her own note and the note saying what she decided lead (the learned head puts the decision first)
        assert {h.path for h in hits[:2]} == {"people/ada.md", "notes/first-name.md"}
        lifted = {h.path: h.explain.get("via") for h in hits}  # notes naming her in prose rise with her
        assert lifted["notes/table.md"] == lifted["notes/first-name.md"] == "mentions⁻¹ entity Ada"

    write(vault, {"people/yonath.md": "---\ntitle: Ada Yonath\ntype: person\n---\nRibosome structures.\n"})
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "another Ada")
    answer = cli(vault, "person", "Ada Lovelace")
    ways = {m["path"]: m["via"] for m in answer["notes"]}
    assert "notes/first-name.md" not in ways and "notes/table.md" in ways  # "Ada" alone is not guessed
    assert (
        "notes/first-name.md: 'Ada' may be Ada Lovelace or Ada Yonath; not counted as a mention of either"
        in answer["clashes"]
    )
    r = mdmem_in_process("--vault", str(vault), "person", "Ada", check=False)
    assert r.returncode == 1 and "'Ada' names 2 people: Ada Lovelace (people/ada.md), Ada Yonath" in r.stderr
    with Vault.open(vault) as v:
        assert v.recall("what did Ada decide", 5).info["ambiguous"] == {"Ada": ["people/ada.md", "people/yonath.md"]}
