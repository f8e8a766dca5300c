"""The graph page in headless Chromium: legend, filters, local view, panel, labels, speed.

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
    return {
        "key": key,
        "id": key.removesuffix(".md"),
        "path": key,
        "title": title or key,
        "type": type,
        "kind": "note",
        "status": "active",
        "tags": list(tags),
    }


def other(key: str, kind: str, title: str) -> dict[str, Any]:
    return {"key": key, "id": key, "path": None, "title": title, "type": kind, "kind": kind, "status": kind}


def edge(src: str, dst: str, type: str = "mentions") -> dict[str, Any]:
    return {"source": src, "target": dst, "type": type, "reason": None, "written": dst}


def synthetic(n: int, seed: int = 0) -> dict[str, Any]:
    """``n`` notes in four folders under ``notes/``, with hubs, tags, attachments and missing targets."""
    rng = random.Random(seed)
    folders = ("alpha", "beta", "gamma", "delta")
    nodes = [
        note(f"notes/{folders[i % 4]}/n{i}.md", f"Note {i}", ("fact", "decision", "idea")[i % 3], (f"t{i % 5}",))
        for i in range(n)
    ]
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
    b.eval(
        f"(() => {{ const e = document.getElementById({id!r}), v = {json.dumps(value)};"
        " if (e.type === 'checkbox') e.checked = v; else e.value = v;"
        " e.dispatchEvent(new Event(e.type === 'range' ? 'input' : 'change')); })()"
    )


def toggle(b: Browser, selector: str) -> None:
    b.eval(f"document.querySelector({selector!r}).click()")


# -- legend and colours -------------------------------------------------------------------------------


def test_legend_lists_the_top_folders_and_switches_to_types(page) -> None:  # type: ignore[no-untyped-def]
    data = synthetic(200)
    data["nodes"].append(note("notes/loose.md", "Loose"))  # directly in the folder all notes share
    b = page(data)
    legend = b.eval(
        "[...document.querySelectorAll('#folders li')].map(li => [li.dataset.value, li.querySelector('i').style.background])"
    )
    assert [v for v, _ in legend] == ["alpha", "beta", "delta", "gamma", "(top level)"]  # by size, then name
    assert len({c for _, c in legend}) == 5 and all(c for _, c in legend)  # a colour each
    assert b.eval("document.querySelector('#types li i').style.display") == "none"  # not the colour yet
    set_control(b, "color", "type")
    assert b.eval("[...document.querySelectorAll('#types li')].map(li => li.dataset.value)") == [
        "decision",
        "fact",
        "idea",
        "note",
    ]
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
    assert all(
        any(e["source"] in notes for e in data["edges"] if e["target"] == k)
        for k in shown
        if by[k]["kind"] == "missing"
    )
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
    edges = [
        edge("f/a.md", "f/b.md"),
        edge("f/b.md", "f/c.md"),
        edge("f/c.md", "f/d.md"),
        edge("f/d.md", "f/e.md"),
        edge("f/b.md", "f/x.md"),
    ] + [edge(f"f/r{i}.md", f"f/r{(i + 1) % 40}.md") for i in range(40)]
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
    edges = [
        edge("p/Hub.md", "p/Target.md"),
        edge("p/Hub.md", "p/Target.md"),
        edge("p/Hub.md", "p/Target.md", "depends_on"),
        edge("p/Source.md", "p/Hub.md"),
        edge("p/Hub.md", "p/Both.md"),
        edge("p/Both.md", "p/Hub.md"),
        edge("p/Both.md", "p/Hub.md"),
    ]
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


def test_five_thousand_nodes_are_laid_out_and_settle(page) -> None:  # type: ignore[no-untyped-def]
    """Every node laid out and the layout finished (its speed, ~3 s on 2 cores, is measured by
    benchmarks/graph_page.py, not asserted here)."""
    b = page(synthetic(5000, seed=1))
    assert b.eval("mdmemGraph.nodes") > 5000
    assert b.eval("mdmemGraph.laidOut") == b.eval("mdmemGraph.nodes")
    assert b.eval("mdmemGraph.settledMs") is not None


# -- a community wiki: thousands of URLs, emoji and CJK in folder names --------------------------------


def wiki(n: int, per_note: int = 4, seed: int = 3) -> dict[str, Any]:
    """``n`` notes in folders named like a community wiki's (emoji, CJK), each citing ``per_note`` URLs
    that few notes share: more external nodes than notes, as on a 6,500-note vault citing 24,000."""
    rng = random.Random(seed)
    folders = ("🗂️ Plugins", "📁 Themes", "社区 Community", "05 - Concepts")
    nodes = [
        note(f"{folders[i % 4]}/n{i}.md", f"{'📂 ' if i % 7 == 0 else ''}Note {i}{' 数据库' if i % 5 == 0 else ''}")
        for i in range(n)
    ]
    edges = [edge(nodes[i]["key"], nodes[int(n * rng.random() ** 2)]["key"]) for i in range(n) for _ in range(3)]
    for i in range(n):
        for k in range(per_note):
            url = f"https://github.com/user{rng.randrange(n * per_note)}/plugin-{k}"
            nodes.append(
                {
                    "key": f"ref:url:{url}",
                    "id": f"ref:url:{url}",
                    "path": None,
                    "title": url,
                    "type": "url",
                    "kind": "external",
                    "status": "active",
                }
            )
            edges.append(
                {"source": nodes[i]["key"], "target": f"ref:url:{url}", "type": "cites", "reason": None, "written": url}
            )
    unique = {d["key"]: d for d in nodes}  # a URL two notes cite is one node
    return {"nodes": list(unique.values()), "edges": [e for e in edges if e["source"] != e["target"]]}


def test_a_wiki_citing_more_urls_than_notes_opens_on_its_notes(page) -> None:  # type: ignore[no-untyped-def]
    data = wiki(1500)
    notes = {d["key"] for d in data["nodes"] if d["kind"] == "note"}
    assert len(data["nodes"]) - len(notes) > 3 * len(notes)
    b = page(data)
    assert visible(b) == notes and b.eval("mdmemGraph.laidOut") == len(notes)  # the URLs cost no layout
    assert b.eval("document.querySelector('#kinds input[data-kind=external]').checked") is False
    assert "hidden at first" in b.eval("document.getElementById('kinds').textContent")
    labelled = b.eval("mdmemGraph.labelled()")
    assert labelled and all(k in notes for k in labelled)
    toggle(b, "#kinds input[data-kind=external]")  # one click shows them, each beside a note citing it
    assert visible(b) == {d["key"] for d in data["nodes"]}
    url = next(d["key"] for d in data["nodes"] if d["kind"] == "external")
    citing = next(e["source"] for e in data["edges"] if e["target"] == url)
    (x0, y0), (x1, y1) = b.eval(f"mdmemGraph.point({url!r})"), b.eval(f"mdmemGraph.point({citing!r})")
    assert abs(x0 - x1) + abs(y0 - y1) < 60
    page_bytes = len(to_html(data).encode())
    assert page_bytes < 0.5 * len(json.dumps(data, ensure_ascii=False).encode())  # each URL once, edges by index


def test_emoji_and_cjk_draw_as_glyphs_not_as_missing_character_boxes(page) -> None:  # type: ignore[no-untyped-def]
    """The page names fonts with emoji and CJK (and the browser falls back to any it has): a folder
    named '🗂️ Plugins' or '社区' draws its characters, in the legend (DOM) and on the canvas, not the
    box a character no font has draws. Needs such fonts installed (.ci/run installs Debian's)."""
    b = page(wiki(60, per_note=1))
    assert "🗂️ Plugins" in b.eval("[...document.querySelectorAll('#folders li')].map(li => li.dataset.value)")
    drawn = b.eval("""(() => {
      const font = '24px ' + getComputedStyle(document.body).fontFamily;
      const c = document.createElement('canvas'); c.width = 64; c.height = 40;
      const ctx = c.getContext('2d');
      const ink = (t) => { ctx.clearRect(0, 0, 64, 40); ctx.font = font; ctx.fillStyle = '#000'; ctx.fillText(t, 4, 30);
                           return Array.from(ctx.getImageData(0, 0, 64, 40).data).join(','); };
      const box = ink('\\u{10FFFD}');  // a private-use character no font draws: the missing-glyph box
      return {emoji: ink('🗂'), cjk: ink('社区'), latin: ink('Pl'), box: box, blank: ink(' ')};
    })()""")
    assert drawn["latin"] != drawn["box"] and drawn["box"] != drawn["blank"]
    assert drawn["emoji"] != drawn["box"] and drawn["emoji"] != drawn["blank"], "no emoji font: the folder's 🗂 is a box"
    assert drawn["cjk"] != drawn["box"] and drawn["cjk"] != drawn["blank"], "no CJK font: 社区 draws as boxes"
    widths = b.eval(
        "(() => { const s = document.createElement('span'); document.getElementById('info').appendChild(s);"
        " const w = (t) => { s.textContent = t; return s.getBoundingClientRect().width; };"
        " return [w('社区'), w('\\u{10FFFD}\\u{10FFFD}')]; })()"
    )
    assert widths[0] > 0 and widths[0] != widths[1]
