"""Pure: the graph as one self-contained HTML page (inline CSS and JS, no network) that lays the
nodes out with a Barnes-Hut force simulation and draws them on a canvas.

Readable at 1k-10k nodes: colours by top folder (legend) or by type, labels chosen by
importance (distinct neighbours) and placed only where they do not collide, so more appear as you
zoom in; a local view of depth 1-3 around the selected node; filters by folder, type, tag and node
kind (attachments, missing link targets, entities, external things notes cite such as URLs and
tickets, any other kind); a panel whose outgoing links (→) and backlinks (←) list each linked node
once, with a count.

Note titles are user text: the data travels as JSON inside a ``<script type="application/json">``
block with ``<``, ``>`` and ``&`` escaped, and the script only ever sets ``textContent``, never
HTML, and draws titles on the canvas as text, so a title cannot inject markup or script.
"""

from __future__ import annotations

import html
import json
from typing import Any

from ..core.graph import CAUSAL_TYPES
from .graph_script import SCRIPT


def to_html(data: dict[str, Any], title: str = "mdmem graph") -> str:
    """A page that draws ``graph.export_data`` output offline."""
    payload = json.dumps(compact(data), ensure_ascii=False, separators=(",", ":"))
    payload = (
        payload.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
    return (
        _PAGE.replace("%%SCRIPT%%", SCRIPT)
        .replace("%%CAUSAL%%", json.dumps(sorted(CAUSAL_TYPES)))
        .replace("%%SUMMARY%%", f"{len(data['nodes'])} nodes, {len(data['edges'])} edges")
        .replace("%%TITLE%%", html.escape(title))
        .replace("%%DATA%%", payload)
    )


def compact(data: dict[str, Any]) -> dict[str, Any]:
    """The export in the page's own shape, about half the bytes: each node a row ``[kind, type, status,
    title, id, path, tags, key]`` (kind, type and status as indexes into tables; an id, path or key that
    follows from the rest as null; trailing nulls dropped), each edge ``[source, target, type, reason]``
    by node index. An external reference's id is ``ref:TYPE:TITLE`` and a note's its path without
    ``.md``, so a vault that cites thousands of URLs does not carry each one three times."""
    tables: dict[str, dict[str, int]] = {"kinds": {}, "types": {}, "statuses": {}, "edge_types": {}}

    def code(table: str, value: Any) -> int:
        return tables[table].setdefault(str(value), len(tables[table]))

    rows, index = [], {}
    for i, d in enumerate(data["nodes"]):
        index[d["key"]] = i
        path, node_id, title = d.get("path"), d.get("id"), d.get("title") or ""
        derived = (
            f"ref:{d.get('type')}:{title}"
            if d.get("kind") == "external"
            else (path[:-3] if path and path.endswith(".md") else path)
        )
        key = d["key"]
        row: list[Any] = [
            code("kinds", d.get("kind")),
            code("types", d.get("type")),
            code("statuses", d.get("status")),
            title,
            None if node_id == derived else node_id,
            path,
            d.get("tags") or None,
            None if key == (path or node_id) else key,
        ]
        while row and row[-1] is None:
            row.pop()
        rows.append(row)
    edges = []
    for e in data["edges"]:
        s, t = index.get(e["source"]), index.get(e["target"])
        if s is not None and t is not None:
            edges.append([s, t, code("edge_types", e.get("type"))] + ([e["reason"]] if e.get("reason") else []))
    return {"v": 2, **{k: list(v) for k, v in tables.items()}, "nodes": rows, "edges": edges}


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>%%TITLE%%</title>
<style>
  html, body { margin: 0; height: 100%; font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Liberation Sans", "DejaVu Sans", "Hiragino Sans", "PingFang SC", "Microsoft YaHei", "Noto Sans CJK SC", "WenQuanYi Micro Hei", sans-serif, "Apple Color Emoji", "Segoe UI Emoji", "Noto Color Emoji"; color: #1f2328; }
  body { display: flex; flex-direction: column; }
  header { display: flex; flex-wrap: wrap; gap: 6px 14px; align-items: center; padding: 6px 12px; border-bottom: 1px solid #d0d7de; background: #f6f8fa; }
  header h1 { font-size: 14px; margin: 0; font-weight: 600; }
  header input[type=search] { flex: 0 1 220px; padding: 3px 6px; border: 1px solid #d0d7de; border-radius: 4px; }
  header label { white-space: nowrap; }
  #summary { color: #656d76; }
  main { flex: 1; display: flex; min-height: 0; }
  #wrap { flex: 1; position: relative; min-width: 0; }
  canvas { position: absolute; inset: 0; width: 100%; height: 100%; cursor: grab; touch-action: none; background: #fff; }
  canvas.dragging { cursor: grabbing; }
  #tip { position: absolute; pointer-events: none; background: #1f2328; color: #fff; padding: 3px 7px; border-radius: 4px; font-size: 12px; max-width: 360px; display: none; }
  aside { width: 290px; overflow: auto; border-left: 1px solid #d0d7de; padding: 8px 12px; background: #fcfcfd; }
  aside h2 { font-size: 14px; margin: 4px 0; word-break: break-word; }
  aside h3 { font-size: 12px; margin: 10px 0 2px; text-transform: uppercase; color: #656d76; letter-spacing: .03em; }
  aside .meta { color: #656d76; word-break: break-all; }
  aside ul { list-style: none; padding: 0; margin: 2px 0; }
  aside li { margin: 1px 0; word-break: break-word; }
  aside li button { border: 0; background: none; padding: 0; font: inherit; color: #0969da; cursor: pointer; text-align: left; }
  aside li .n, aside li .t { color: #656d76; margin-left: 4px; }
  .legend li { display: flex; align-items: center; gap: 5px; }
  .legend li .n { margin-left: auto; white-space: nowrap; }
  .legend i, .kinds i { display: inline-block; width: 10px; height: 10px; border-radius: 50%; flex: none; }
  .kinds i { margin: 0 3px 0 2px; vertical-align: -1px; }
  .kinds label { display: block; }
  select { max-width: 100%; }
</style>
</head>
<body>
<header>
  <h1>%%TITLE%%</h1>
  <input id="filter" type="search" placeholder="find by title, id or tag">
  <label>Colour by <select id="color"><option value="folder">folder</option><option value="type">type</option></select></label>
  <label><input id="local" type="checkbox"> Local view</label>
  <label>depth <input id="depth" type="range" min="1" max="3" value="1" style="width:60px"> <span id="depthv">1</span></label>
  <span><span id="summary">%%SUMMARY%%</span> <span id="shown"></span></span>
</header>
<main>
  <div id="wrap"><canvas id="graph" aria-label="note graph"></canvas><div id="tip"></div></div>
  <aside>
    <div id="info"><p class="meta">Click a node for its links, double-click for its local view. Drag to pan, scroll to zoom.</p></div>
    <h3>Show</h3><div id="kinds" class="kinds"></div>
    <h3>Folders</h3><ul id="folders" class="legend"></ul>
    <h3>Types</h3><ul id="types" class="legend"></ul>
    <h3>Tag</h3><select id="tag"><option value="">any tag</option></select>
  </aside>
</main>
<script type="application/json" id="mdmem-graph">%%DATA%%</script>
<script>
%%SCRIPT%%
</script>
</body>
</html>
"""
