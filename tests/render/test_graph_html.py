"""The graph page (issue 13) in headless Chromium: legend, filters, local view, panel, labels, speed.

The page is pure (``graph_html.to_html`` of export-shaped data), so most tests feed it generated
graphs directly; the vault round trip (export → page) is in ``test_graph.py``. One browser serves
the whole module; each test loads its own page.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mdmem.render.graph_html import to_html

from ..headless import CHROMIUM, Browser

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (.ci/run installs it)")


def note(key: str, title: str | None = None, type: str = "note", tags: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"key": key, "id": key.removesuffix(".md"), "path": key, "title": title or key, "type": type,
            "kind": "note", "status": "active", "tags": list(tags)}


def other(key: str, kind: str, title: str) -> dict[str, Any]:
    return {"key": key, "id": key, "path": None, "title": title, "type": kind, "kind": kind, "status": kind}


def edge(src: str, dst: str, type: str = "mentions") -> dict[str, Any]:
    return {"source": src, "target": dst, "type": type, "reason": None, "written": dst}


def synthetic(n: int, seed: int = 0) -> dict[str, Any]:
    """``n`` notes in four folders under ``notes/``, with hubs, tags, attachments and missing targets."""
    rng = random.Random(seed)
    folders = ("alpha", "beta", "gamma", "delta")
    nodes = [note(f"notes/{folders[i % 4]}/n{i}.md", f"Note {i}", ("fact", "decision", "idea")[i % 3],
                  (f"t{i % 5}",)) for i in range(n)]
    edges = []
    for i in range(n):
        for _ in range(rng.randrange(1, 8)):
            j = int(n * rng.random() ** 3)  # early notes are popular: hubs
            if j != i:
                edges.append(edge(nodes[i]["key"], nodes[j]["key"]))
        if i % 20 == 0:
            nodes.append(other(f"notes/{folders[i % 4]}/img/p{i}.png", "attachment", f"p{i}.png"))
            edges.append(edge(nodes[i]["key"], nodes[-1]["key"], "embeds"))
        if i % 25 == 0:
            nodes.append(other(f"missing:gone {i}", "missing", f"Gone {i}"))
            edges.append(edge(nodes[i]["key"], nodes[-1]["key"]))
    return {"nodes": nodes, "edges": edges}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser(1200, 800) as b:
        yield b


@pytest.fixture
def page(browser: Browser, tmp_path: Path):  # type: ignore[no-untyped-def]
    def load(data: dict[str, Any]) -> Browser:
        path = tmp_path / "graph.html"
        path.write_text(to_html(data), encoding="utf-8")
        browser.errors.clear()
        browser.open(path.as_uri(), ready="document.body.dataset.settled")
        assert browser.errors == []
        return browser
    return load


def visible(b: Browser) -> set[str]:
    return set(b.eval("mdmemGraph.visibleKeys()"))


def set_control(b: Browser, id: str, value: Any) -> None:
    """Change a control as a user would: set it, fire its event."""
    b.eval(f"(() => {{ const e = document.getElementById({id!r}), v = {json.dumps(value)};"
           " if (e.type === 'checkbox') e.checked = v; else e.value = v;"
           " e.dispatchEvent(new Event(e.type === 'range' ? 'input' : 'change')); })()")


def toggle(b: Browser, selector: str) -> None:
    b.eval(f"document.querySelector({selector!r}).click()")


# -- legend and colours -------------------------------------------------------------------------------


def test_legend_lists_the_top_folders_and_switches_to_types(page) -> None:  # type: ignore[no-untyped-def]
    data = synthetic(200)
    data["nodes"].append(note("notes/loose.md", "Loose"))  # directly in the folder all notes share
    b = page(data)
    legend = b.eval("[...document.querySelectorAll('#folders li')].map(li => [li.dataset.value, li.querySelector('i').style.background])")
    assert [v for v, _ in legend] == ["alpha", "beta", "delta", "gamma", "(top level)"]  # by size, then name
    assert len({c for _, c in legend}) == 5 and all(c for _, c in legend)  # a colour each
    assert b.eval("document.querySelector('#types li i').style.display") == "none"  # not the colour yet
    set_control(b, "color", "type")
    assert b.eval("[...document.querySelectorAll('#types li')].map(li => li.dataset.value)") == ["decision", "fact", "idea", "note"]
    assert b.eval("document.querySelector('#types li i').style.background") != ""
    assert b.eval("document.querySelector('#folders li i').style.display") == "none"


# -- filters ----------------------------------------------------------------------------------------


def test_filters_by_folder_type_tag_and_kind_hide_nodes(page) -> None:  # type: ignore[no-untyped-def]
    data = synthetic(200)
    data["nodes"].append(other("thing:1", "widget", "A kind nobody planned"))
    data["edges"].append(edge("notes/alpha/n0.md", "thing:1", "uses"))
    b = page(data)
    by = {d["key"]: d for d in data["nodes"]}
    assert visible(b) == set(by)
    assert "widget" in b.eval("[...document.querySelectorAll('#kinds input')].map(i => i.dataset.kind)")

    toggle(b, "#folders li[data-value=beta] input")
    shown = visible(b)
    assert not any(k.startswith("notes/beta/") for k in shown)  # notes and attachments alike
    assert any(k.startswith("notes/alpha/") for k in shown)
    toggle(b, "#folders li[data-value=beta] input")

    toggle(b, "#types li[data-value=decision] input")
    assert {by[k]["type"] for k in visible(b) if by[k]["kind"] == "note"} == {"fact", "idea"}
    toggle(b, "#types li[data-value=decision] input")

    set_control(b, "tag", "t3")
    shown = visible(b)
    notes = {k for k in shown if by[k]["kind"] == "note"}
    assert notes == {k for k, d in by.items() if "t3" in d.get("tags", [])}
    # a missing target stays only while a note that links to it is shown
    assert all(any(e["source"] in notes for e in data["edges"] if e["target"] == k)
               for k in shown if by[k]["kind"] == "missing")
    assert b.eval("document.getElementById('shown').textContent") == f"\u00b7 showing {len(shown)}"
    set_control(b, "tag", "")

    for kind in ("attachment", "missing", "widget"):
        toggle(b, f"#kinds input[data-kind={kind}]")
        assert not any(by[k]["kind"] == kind for k in visible(b))
        toggle(b, f"#kinds input[data-kind={kind}]")
        assert any(by[k]["kind"] == kind for k in visible(b))


# -- local view ---------------------------------------------------------------------------------------


def chain_graph() -> dict[str, Any]:
    """a → b → c → d → e, b → x, plus 40 unrelated notes in a ring."""
    keys = ["a", "b", "c", "d", "e", "x"] + [f"r{i}" for i in range(40)]
    nodes = [note(f"f/{k}.md", k.upper()) for k in keys]
    edges = [edge("f/a.md", "f/b.md"), edge("f/b.md", "f/c.md"), edge("f/c.md", "f/d.md"), edge("f/d.md", "f/e.md"),
             edge("f/b.md", "f/x.md")] + [edge(f"f/r{i}.md", f"f/r{(i + 1) % 40}.md") for i in range(40)]
    return {"nodes": nodes, "edges": edges}


def test_local_view_shows_only_nodes_within_the_depth(page) -> None:  # type: ignore[no-untyped-def]
    b = page(chain_graph())
    x, y = b.eval("mdmemGraph.point('f/c.md')")
    b.click(x, y, count=2)  # a double click opens the node's local view
    assert b.eval("document.getElementById('local').checked")
    assert visible(b) == {"f/b.md", "f/c.md", "f/d.md"}
    set_control(b, "depth", 2)
    assert visible(b) == {"f/a.md", "f/b.md", "f/c.md", "f/d.md", "f/e.md", "f/x.md"}
    x, y = b.eval("mdmemGraph.point('f/e.md')")
    b.click(x, y)  # in the local view a click moves the centre
    assert visible(b) == {"f/c.md", "f/d.md", "f/e.md"}
    b.eval("document.getElementById('local').click()")
    assert len(visible(b)) == 46


# -- panel ---------------------------------------------------------------------------------------------


def test_panel_lists_each_linked_note_once_with_the_right_arrow(page) -> None:  # type: ignore[no-untyped-def]
    nodes = [note(f"p/{k}.md", k) for k in ("Hub", "Target", "Source", "Both")]
    edges = [edge("p/Hub.md", "p/Target.md"), edge("p/Hub.md", "p/Target.md"), edge("p/Hub.md", "p/Target.md", "depends_on"),
             edge("p/Source.md", "p/Hub.md"), edge("p/Hub.md", "p/Both.md"), edge("p/Both.md", "p/Hub.md"),
             edge("p/Both.md", "p/Hub.md")]
    b = page({"nodes": nodes, "edges": edges})
    x, y = b.eval("mdmemGraph.point('p/Hub.md')")
    b.click(x, y)
    assert b.eval("document.querySelector('#info h2').textContent") == "Hub"
    out = b.eval("[...document.querySelectorAll('#info ul.out li')].map(li => li.textContent)")
    inc = b.eval("[...document.querySelectorAll('#info ul.in li')].map(li => li.textContent)")
    assert out == ["\u2192 Target\u00d73depends_on", "\u2192 Both"]
    assert inc == ["\u2190 Both\u00d72", "\u2190 Source"]
    # an entry leads to its note
    b.eval("document.querySelector('#info ul.in li[data-key=\"p/Source.md\"] button').click()")
    assert b.eval("document.querySelector('#info h2').textContent") == "Source"
    assert b.eval("[...document.querySelectorAll('#info ul.out li')].map(li => li.textContent)") == ["\u2192 Hub"]
    assert b.eval("document.querySelectorAll('#info ul.in').length") == 0


# -- labels and speed -------------------------------------------------------------------------------


def test_labels_follow_importance_and_zoom(page) -> None:  # type: ignore[no-untyped-def]
    b = page(synthetic(1500, seed=2))
    top = b.eval("mdmemGraph.top(3)")
    overview = b.eval("mdmemGraph.labelled()")
    assert top[0] in overview and 5 <= len(overview) <= 120
    b.eval("mdmemGraph.zoom(4)")
    assert len(b.eval("mdmemGraph.labelled()")) > len(overview)


def test_five_thousand_nodes_settle_within_a_few_seconds(page) -> None:  # type: ignore[no-untyped-def]
    b = page(synthetic(5000, seed=1))
    ms = b.eval("mdmemGraph.settledMs")
    assert b.eval("mdmemGraph.nodes") > 5000 and ms < 8000, ms  # ~3 s on a 2-core CI machine
