"""Connection hints from the graph around a few notes (``graph_near``): a cold ``query``
attaches them without building the whole graph, and they are the whole graph's, edge for edge.

Each vault here is compared note by note: every edge at the note (order, type, target as written,
how it resolved, candidates) and the node at its other end, and the hints ``query`` shows. The
vaults: the fixture notes, the Obsidian-like vault (one file name in several folders, partial
paths, relative links, attachments, aliases), people and references, a synthetic corpus with people
added, one written to trip each rule of resolution, and notes hidden by forget and snooze.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mdmem.api.vault import Vault
from mdmem.core.graph import Graph
from mdmem.features import graph_view
from mdmem.features.graph_near import near_graph, search_word
from mdmem.features.graph_view import connection_hints, load_graph
from mdmem.features.mentions import add_prose_mentions

from ..conftest import git, mdmem_in_process
from ..obsidian_vault import build as build_obsidian
from .test_people import ALICE, OTHERS, REFS_NOTE, WAYS


@pytest.fixture(autouse=True)
def _hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    monkeypatch.setenv("MDMEM_NO_SERVE", "1")


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, body in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            (root / rel).write_bytes(body)
        else:
            (root / rel).write_text(body, encoding="utf-8")


def git_vault(root: Path, files: dict[str, str | bytes]) -> Path:
    """``files`` in a git vault with mdmem's hooks, committed (the hook indexes them)."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    mdmem_in_process("init", str(root))
    write(root, files)
    commit(root)
    return root


def commit(root: Path) -> None:
    """Commit everything and index it before the test reads (the hook's run in process)."""
    git(root, "add", "-A")
    git(root, "commit", "-qm", "notes", env={"MDMEM_SKIP_HOOK": "1"})
    mdmem_in_process("--vault", str(root), "reindex")


def edges_at(g: Graph, key: str) -> list[tuple[Any, ...]]:
    return [(e, way, other, g.nodes[other]) for e, other, way in g.edges(key)]


def assert_same_as_whole(root: Path, paths: list[str] | None = None) -> int:
    """Every note's edges and hints from ``near_graph`` are the whole graph's; returns how many
    notes had an edge (so a test can insist its vault has some)."""
    with Vault.open(root) as v:
        store = v.store
        whole = load_graph(store)
        if paths is None:
            paths = sorted(k for k, n in whole.nodes.items() if n.kind == "note")
        assert paths
        want = connection_hints(store, paths, per_note=1000)
        want3 = connection_hints(store, paths)
        linked = 0
        with store.reading() as idx:
            for p in paths:
                near = near_graph(idx, [p])
                assert near is not None, p
                add_prose_mentions(idx, near, [p])  # people the note names in prose (as hints_graph adds them)
                assert edges_at(near, p) == edges_at(whole, p), p
                linked += bool(edges_at(whole, p))
        store.memo.clear()  # cold: the hints come from the graph around the notes
        for i in range(0, len(paths), 3):
            part = paths[i : i + 3]
            assert connection_hints(store, part, per_note=1000) == {p: want[p] for p in part}
            assert connection_hints(store, part) == {p: want3[p] for p in part}
            assert "graph" not in store.memo
    return linked


# -- vaults ----------------------------------------------------------------------------------------


def test_fixture_vault(git_vault: Path) -> None:
    assert assert_same_as_whole(git_vault) >= 3


def test_obsidian_vault(tmp_path: Path) -> None:
    root = build_obsidian(tmp_path / "ov")
    mdmem_in_process("init", str(root))
    mdmem_in_process("--vault", str(root), "reindex", "--full")
    assert assert_same_as_whole(root) >= 8


def test_people_and_references(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        "people/alice.md": ALICE,
        **{k: v for k, (v, _) in WAYS.items()},
        **OTHERS,
        "notes/payment-retries.md": REFS_NOTE,
    }
    root = git_vault(tmp_path / "v", files)
    assert assert_same_as_whole(root) >= len(WAYS)


BOB = """---
title: Bob Jones
type: person
aliases: [Bobby]
identities: ["https://www.Example.org/~bob/", "bob@example.org", "@bobj"]
---
# Bob Jones
"""
BOB_TWIN = '---\ntitle: Robert Jones\ntype: person\nidentities: ["@bobj"]\n---\n# Robert Jones\n'

# Each note trips a rule: shared file names (nearest folder), case-variant paths, ids, titles of
# versions, relative and rooted targets, an entity's first spelling naming its node, person
# identities as URLs and e-mail addresses, a typed link of the type entities give, an attachment.
TRICKY: dict[str, str | bytes] = {
    "a/Foo.md": "---\nid: n-foo\ntitle: Foo\n---\nA foo. See [[b/Foo]] and [[Plan]] and [[pic.png]].\n",
    "b/Foo.md": (
        '---\ntitle: Foo too\nentities: ["Widget  Co", Bobby]\n---\nB foo links [[Foo]], [[./Foo]], [[./Foo/..]].\n'
    ),
    "c/sub/Foo.md": "---\ntitle: Deep foo\n---\nTo [[Foo]], [[/a/Foo]], [[A/FOO]], [up](../../a/Foo.md), [[n-foo]].\n",
    "c/foo.md": "---\ntitle: lower foo\n---\nCase twin of nothing: [[c/Foo]] [[Foo#Top|shown]].\n",
    "c/Foo.md": "---\ntitle: upper foo\nentities: [widget co]\n---\nCase twin: [[c/foo]].\n",
    "plans/plan-v1.md": "---\ntitle: Plan\nstatus: superseded\n---\nOld plan.\n",
    "plans/plan-v2.md": '---\ntitle: Plan\nsupersedes: "[[plans/plan-v1]]"\nentities: [Widget Co]\n---\nNew plan.\n',
    "org/Widget Co.md": "---\ntitle: Widget Co\naliases: [Widgets]\n---\nThe company. [[Widgets]]\n",
    "notes/about.md": (
        "---\ntitle: About widgets\nentities: [Widgets, Café]\nlinks:\n"
        '  - {to: "[[Widget Co]]", type: about, reason: it is}\n---\nSee [[Widget Co]] [[Café]].\n'
    ),
    "notes/cafe.md": "---\ntitle: Café\n---\nCoffee with [[bob@example.org]] and [[https://example.org/~bob]].\n",
    "notes/cites.md": (
        "---\ntitle: Cites bob\nrefs: ['mailto:Bob@Example.org', 'http://example.org/~bob', '@bobj']\n"
        "entities: ['http://www.example.org/~bob/']\n---\nWrite to bob@example.org. [[Bobby]]\n"
    ),
    "notes/odd.md": "---\ntitle: Odd targets\n---\n[[../Foo]] [[Foo/]] [[Foo.]] [[c/sub/../Foo]] [x](<../b/Foo.md>)\n",
    "people/bob.md": BOB,
    "people/robert.md": BOB_TWIN,
    "img/pic.png": b"\x89PNG\r\n\x1a\n",
    # a target whose words are not its identity's (ß is ss), a folder whose "#" cuts a relative path
    "people/strasse.md": "---\ntitle: Road person\ntype: person\nidentities: [Strasse Weg]\n---\n",
    "notes/umlaut.md": "---\ntitle: Umlaut\nentities: [STRAßE weg]\n---\nAsk [[STRAßE weg]].\n",
    # a person whose name has no ASCII word to search by
    "people/zhang.md": "---\ntitle: 张伟\ntype: person\nidentities: ['@zhangwei', 王芳]\n---\n",
    "notes/zh.md": "---\ntitle: Zhang\nentities: [张伟, 王芳]\n---\n[[王芳]] and [[@ZhangWei]].\n",
    "odd.md": "# Odd root\n",
    "b.md": "# B root\n",  # what b/Foo.md's "./Foo.md/.." names
    "notes/ent.md": "---\ntitle: Entity by title\nentities: [Deep foo]\n---\nNo link names it.\n",
    "odd#dir/n.md": "# In odd\n\n[up](./Foo.md)\n",
    "x/sp/ lead.md": "# Lead\n\nIts stem is 'lead', its path's last part ' lead'.\n",
    "notes/lead.md": "# Leader\n\n[[sp/ lead]]\n",
}
ODD = ("odd#dir/n.md", "x/sp/ lead.md")  # paths whose file name may normalise otherwise than their path


@pytest.mark.parametrize("odd", [None, *ODD])
def test_tricky_targets_entities_and_identities(tmp_path: Path, odd: str | None) -> None:
    """Without a path whose file name its stem may not find, only the names the links look up are
    read; with one (``odd``), every path, id and title."""
    files = {k: v for k, v in TRICKY.items() if k not in ODD or k == odd}
    root = git_vault(tmp_path / "v", files)
    with Vault.open(root) as v:
        assert v.store.catalog.near.odd_paths() == (odd is not None)
    assert assert_same_as_whole(root) >= 12


def test_hidden_notes_stay_hidden(tmp_path: Path) -> None:
    root = git_vault(tmp_path / "v", TRICKY)
    with Vault.open(root) as v:
        v.forget("org/Widget Co.md")
        v.snooze("a/Foo.md", "2999-01-01")
        hints = connection_hints(v.store, ["b/Foo.md", "plans/plan-v2.md", "c/sub/Foo.md"], per_note=1000)
    shown = {h.id for hs in hints.values() for h in hs}
    assert shown and "a/Foo" not in shown and "org/Widget Co" not in shown
    assert assert_same_as_whole(root) >= 12


def test_synthetic_corpus_with_people(tmp_path: Path) -> None:
    from benchmarks.corpus import make_corpus

    root = tmp_path / "v"
    root.mkdir()
    make_corpus(root, 300, seed=3)
    # people named like the corpus's projects, so that its entities resolve to them
    projects = sorted({n for p in (root / "notes").rglob("*.md") for n in _entities(p)})[:4]
    people = {
        f"people/p{i}.md": f"---\ntitle: {name}\ntype: person\nidentities: [p{i}@example.com]\n---\n"
        for i, name in enumerate(projects)
    }
    people["notes/mail.md"] = "---\ntitle: Mail\nrefs: [p0@example.com]\n---\n[[p1@example.com]]\n"
    git(root, "init", "-q", "-b", "main")
    mdmem_in_process("init", str(root))
    write(root, people)  # type: ignore[arg-type]
    commit(root)
    with Vault.open(root) as v:
        v.forget(sorted(people)[1])
    assert assert_same_as_whole(root) >= 100


def _entities(path: Path) -> list[str]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("entities: ["):
            return [x.strip() for x in line[len("entities: [") : -1].split(",")]
    return []


# -- cold and warm ---------------------------------------------------------------------------------


def test_a_cold_query_builds_no_graph_and_a_warm_one_uses_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = git_vault(tmp_path / "v", TRICKY)
    with Vault.open(root) as v:
        whole = links_of(v.query("foo", vectors=False))
        load_graph(v.store)
        warm = links_of(v.query("foo", vectors=False))
    assert any(whole.values()) and warm == whole

    def no_build(*a: Any, **k: Any) -> Graph:
        raise AssertionError("the whole graph was built")

    monkeypatch.setattr(graph_view, "build_graph", no_build)
    with Vault.open(root) as v:
        assert links_of(v.query("foo", vectors=False)) == whole
    out = json.loads(mdmem_in_process("--vault", str(root), "query", "--no-vectors", "foo", "--json").stdout)
    assert {h["path"]: h.get("links") for h in out["results"]} == {
        p: [h.to_dict() for h in hs] if hs else None for p, hs in whole.items()
    }

    monkeypatch.undo()
    import mdmem.features.graph_near as gn

    def no_near(*a: Any, **k: Any) -> Graph:
        raise AssertionError("a warm process built the graph around the hits")

    with Vault.open(root) as v:
        load_graph(v.store)
        monkeypatch.setattr(gn, "near_graph", no_near)
        assert links_of(v.query("foo", vectors=False)) == whole


def kept_graph(store: Any) -> Graph | None:
    """The graph the store keeps for its current catalogue, if any (no catching up first)."""
    from mdmem.features.graph_view import memoised_graph

    with store.reading(notice=False) as idx:
        return memoised_graph(idx)


def links_of(hits: Any) -> dict[str, Any]:
    return {h.path: h.links for h in hits}


def test_folding_is_every_character_whose_case_folding_has_an_ascii_letter() -> None:
    import re

    from mdmem.index.catalog_near import FOLDING

    assert FOLDING == "".join(c for c in map(chr, range(128, 0x110000)) if re.search("[A-Za-z0-9]", c.casefold()))


def test_search_word_is_in_every_way_of_writing_the_key() -> None:
    assert search_word("https://example.org/~bob") == "example"
    assert search_word("https://example.org/%C3%BCber-longword") == "longword"
    assert search_word("alice smith") == "alice"
    assert search_word("张伟") == ""
    assert search_word("@") is None


def test_a_warm_process_keeps_the_whole_graph(tmp_path: Path) -> None:
    """``serve`` and the MCP server warm up with the whole graph, so their answers' hints cost nothing."""
    import threading

    from mdmem.edges.serve import warm_up

    root = git_vault(tmp_path / "v", TRICKY)
    with Vault.open(root) as v:
        v.query("foo", vectors=False)
        assert kept_graph(v.store) is None  # a cold query built none
        warm_up(v, threading.Lock())
        assert kept_graph(v.store) is not None


def test_the_kept_graph_outlives_vector_rounds_not_note_changes(tmp_path: Path) -> None:
    """The embedding job commits vectors every round; the graph a warm process keeps is built from notes,
    links, names, references and attachments, so only their changes (by any process) rebuild it."""
    from mdmem.index.catalog import Catalog

    root = git_vault(tmp_path / "v", TRICKY)
    with Vault.open(root) as v:
        graph = load_graph(v.store)
        other = Catalog(v.store.catalog.path)  # another process's connection
        keys = [k for k, _ in other.pending_hashes()][:3]
        other.finish_vector_sync(keys, [])  # a round of the embedding job
        assert kept_graph(v.store) is graph
        other.set_attachments(["img/new.png"])  # a change of rows, elsewhere
        other.close()
        assert kept_graph(v.store) is None
        assert load_graph(v.store) is not graph


def test_the_kept_answer_to_odd_paths_follows_a_new_note(tmp_path: Path) -> None:
    root = git_vault(tmp_path / "v", {k: v for k, v in TRICKY.items() if k not in ODD})
    with Vault.open(root) as v:
        with v.store.reading() as idx:
            assert idx.odd_paths() is False
            assert idx.memoised("odd_paths") is False  # kept: the next query's hints do not read every path
        (root / "odd#dir").mkdir()
        (root / "odd#dir" / "n.md").write_text(TRICKY["odd#dir/n.md"])
        v.reindex()
        with v.store.reading() as idx:
            assert idx.memoised("odd_paths") is None  # the catalogue changed: looked at again
            assert idx.odd_paths() is True
    assert assert_same_as_whole(root) >= 12
