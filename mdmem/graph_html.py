"""Pure: the graph as one self-contained HTML page (inline CSS and JS, no network) that lays the
nodes out with a small force simulation and draws them as SVG.

Note titles are user text: the data travels as JSON inside a ``<script type="application/json">``
block with ``<``, ``>`` and ``&`` escaped, and the script only ever sets ``textContent`` and
attributes, never HTML, so a title cannot inject markup or script.
"""

from __future__ import annotations

import html
import json
from typing import Any

from .graph import CAUSAL_TYPES


def to_html(data: dict[str, Any], title: str = "mdmem graph") -> str:
    """A page that draws ``graph.export_data`` output offline."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    payload = (payload.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
               .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return (_PAGE.replace("%%TITLE%%", html.escape(title))
            .replace("%%SUMMARY%%", f"{len(data['nodes'])} nodes, {len(data['edges'])} edges")
            .replace("%%CAUSAL%%", json.dumps(sorted(CAUSAL_TYPES)))
            .replace("%%DATA%%", payload))


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>%%TITLE%%</title>
<style>
  html, body { margin: 0; height: 100%; font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; }
  body { display: flex; flex-direction: column; }
  header { display: flex; gap: 12px; align-items: center; padding: 6px 12px; border-bottom: 1px solid #d0d7de; background: #f6f8fa; }
  header h1 { font-size: 14px; margin: 0; font-weight: 600; }
  header input { flex: 0 1 260px; padding: 3px 6px; border: 1px solid #d0d7de; border-radius: 4px; }
  #summary { color: #656d76; }
  main { flex: 1; display: flex; min-height: 0; }
  svg { flex: 1; background: #fff; cursor: grab; touch-action: none; }
  svg.dragging { cursor: grabbing; }
  aside { width: 300px; overflow: auto; border-left: 1px solid #d0d7de; padding: 8px 12px; background: #fcfcfd; }
  aside h2 { font-size: 14px; margin: 4px 0; word-break: break-word; }
  aside .meta { color: #656d76; word-break: break-all; }
  aside ul { padding-left: 16px; margin: 4px 0; }
  aside li { margin: 2px 0; word-break: break-word; }
  .edge { stroke-opacity: 0.55; fill: none; }
  .node circle { stroke: #fff; stroke-width: 1.5; cursor: pointer; }
  .node.entity circle { stroke: #57606a; stroke-dasharray: 2 2; }
  .node.missing circle { fill: #fff !important; stroke: #cf222e; stroke-dasharray: 3 2; }
  .node.inactive { opacity: 0.45; }
  .node text { font-size: 10px; fill: #1f2328; pointer-events: none; paint-order: stroke; stroke: #fff; stroke-width: 3px; }
  .dim { opacity: 0.12; }
  .node.selected circle { stroke: #0969da; stroke-width: 3; }
  .legend span { display: inline-block; margin-right: 8px; white-space: nowrap; }
  .legend i { display: inline-block; width: 10px; height: 10px; border-radius: 50%; margin-right: 3px; vertical-align: -1px; }
</style>
</head>
<body>
<header>
  <h1>%%TITLE%%</h1>
  <input id="filter" type="search" placeholder="filter by title, id or type">
  <span id="summary">%%SUMMARY%%</span>
</header>
<main>
  <svg id="graph" xmlns="http://www.w3.org/2000/svg" aria-label="note graph"></svg>
  <aside id="info"><p class="meta">Click a node to see its links. Drag to pan, scroll to zoom.</p><div class="legend" id="legend"></div></aside>
</main>
<script type="application/json" id="mdmem-graph">%%DATA%%</script>
<script>
"use strict";
(function () {
  var SVG = "http://www.w3.org/2000/svg";
  var data = JSON.parse(document.getElementById("mdmem-graph").textContent);
  var nodes = data.nodes, edges = data.edges, n = nodes.length;
  var index = {};
  nodes.forEach(function (d, i) { index[d.key] = i; d.deg = 0; });
  var links = [];
  edges.forEach(function (e) {
    var s = index[e.source], t = index[e.target];
    if (s === undefined || t === undefined || s === t) return;
    links.push({s: s, t: t, e: e});
    nodes[s].deg++; nodes[t].deg++;
  });
  var CAUSAL = new Set(%%CAUSAL%%);  // graph.CAUSAL_TYPES
  function edgeColor(t) {
    if (t === "supersedes") return "#8250df";
    if (CAUSAL.has(t)) return "#cf222e";
    if (t === "mentions") return "#8c959f";
    if (t === "about") return "#54aeff";
    return "#57606a";
  }
  var PALETTE = ["#0969da", "#1a7f37", "#bf3989", "#9a6700", "#8250df", "#cf222e", "#1b7c83", "#bc4c00",
                 "#6e7781", "#953800", "#116329", "#0550ae"];
  var typeColor = {entity: "#afb8c1", missing: "#ffffff"}, nextColor = 0;
  function colorOf(d) {
    if (!(d.type in typeColor)) typeColor[d.type] = PALETTE[nextColor++ % PALETTE.length];
    return typeColor[d.type];
  }

  // Layout: deterministic start on a sunflower spiral, then a force simulation (springs along
  // edges, repulsion between nodes in neighbouring grid cells), cooled over a fixed number of steps.
  var k = 50, x = new Float64Array(n), y = new Float64Array(n), dx = new Float64Array(n), dy = new Float64Array(n);
  for (var i = 0; i < n; i++) {
    var r = k * Math.sqrt(i + 0.5), a = i * 2.399963229728653;
    x[i] = r * Math.cos(a); y[i] = r * Math.sin(a);
  }
  var steps = n <= 300 ? 300 : n <= 2000 ? 150 : 50, temp = k * Math.sqrt(n) / 4, cell = 4 * k;
  for (var step = 0; step < steps; step++) {
    dx.fill(0); dy.fill(0);
    var grid = new Map();
    for (i = 0; i < n; i++) {
      var key = Math.floor(x[i] / cell) + "," + Math.floor(y[i] / cell), bucket = grid.get(key);
      if (bucket) bucket.push(i); else grid.set(key, [i]);
    }
    for (i = 0; i < n; i++) {
      var gx = Math.floor(x[i] / cell), gy = Math.floor(y[i] / cell);
      for (var ox = -1; ox <= 1; ox++) for (var oy = -1; oy <= 1; oy++) {
        var b = grid.get((gx + ox) + "," + (gy + oy));
        if (!b) continue;
        for (var q = 0; q < b.length; q++) {
          var j = b[q];
          if (j === i) continue;
          var ddx = x[i] - x[j], ddy = y[i] - y[j], d2 = ddx * ddx + ddy * ddy;
          if (d2 < 0.01) { ddx = (i - j) * 0.01; ddy = 0.01; d2 = ddx * ddx + ddy * ddy; }
          var f = k * k / d2;
          dx[i] += ddx * f; dy[i] += ddy * f;
        }
      }
      dx[i] -= x[i] * 0.02; dy[i] -= y[i] * 0.02;  // gravity keeps separate components in view
    }
    for (q = 0; q < links.length; q++) {
      var L = links[q], ex = x[L.s] - x[L.t], ey = y[L.s] - y[L.t], dist = Math.sqrt(ex * ex + ey * ey) || 0.01;
      var pull = dist / k * 0.5;
      dx[L.s] -= ex * pull; dy[L.s] -= ey * pull; dx[L.t] += ex * pull; dy[L.t] += ey * pull;
    }
    for (i = 0; i < n; i++) {
      var len = Math.sqrt(dx[i] * dx[i] + dy[i] * dy[i]) || 1, mv = Math.min(len, temp);
      x[i] += dx[i] / len * mv; y[i] += dy[i] / len * mv;
    }
    temp *= 0.97;
  }

  var svg = document.getElementById("graph");
  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    for (var a in attrs) e.setAttribute(a, attrs[a]);
    if (parent) parent.appendChild(e);
    return e;
  }
  var defs = el("defs", {}, svg);
  var markers = {};
  function marker(color) {
    if (markers[color]) return markers[color];
    var id = "arrow" + Object.keys(markers).length;
    var m = el("marker", {id: id, viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "6", markerHeight: "6",
                          orient: "auto-start-reverse"}, defs);
    el("path", {d: "M 0 0 L 10 5 L 0 10 z", fill: color}, m);
    markers[color] = id;
    return id;
  }
  var view = el("g", {id: "viewport"}, svg);
  var edgeLayer = el("g", {"class": "edges"}, view), nodeLayer = el("g", {"class": "nodes"}, view);
  function radius(d) { return 4 + Math.min(10, Math.sqrt(d.deg) * 2); }
  var edgeEls = links.map(function (L) {
    var c = edgeColor(L.e.type), s = nodes[L.s], t = nodes[L.t];
    var ex = x[L.t] - x[L.s], ey = y[L.t] - y[L.s], dist = Math.sqrt(ex * ex + ey * ey) || 1;
    var rt = radius(t) + 2;
    var line = el("line", {"class": "edge", x1: x[L.s], y1: y[L.s], x2: x[L.t] - ex / dist * rt, y2: y[L.t] - ey / dist * rt,
                           stroke: c, "stroke-width": CAUSAL.has(L.e.type) ? 1.8 : 1,
                           "marker-end": "url(#" + marker(c) + ")"}, edgeLayer);
    line.setAttribute("data-type", L.e.type);
    var tip = el("title", {}, line);
    tip.textContent = s.title + " \\u2014" + L.e.type + "\\u2192 " + t.title + (L.e.reason ? " (" + L.e.reason + ")" : "");
    return line;
  });
  var showLabels = n <= 400;
  var nodeEls = nodes.map(function (d, i) {
    var g = el("g", {"class": "node " + d.kind + (d.status !== "active" && d.kind === "note" ? " inactive" : ""),
                     transform: "translate(" + x[i].toFixed(1) + "," + y[i].toFixed(1) + ")"}, nodeLayer);
    g.setAttribute("data-key", d.key);
    g.setAttribute("data-id", d.id);
    el("circle", {r: radius(d), fill: colorOf(d)}, g);
    var tip = el("title", {}, g);
    tip.textContent = d.title + " [" + d.type + "] " + (d.path || d.id);
    if (showLabels) {
      var label = el("text", {x: radius(d) + 3, y: 3}, g);
      label.textContent = d.title.length > 40 ? d.title.slice(0, 39) + "\\u2026" : d.title;
    }
    g.addEventListener("click", function (ev) { ev.stopPropagation(); select(i); });
    return g;
  });

  // Fit the drawing into the view, then pan and zoom.
  var minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  for (i = 0; i < n; i++) { minX = Math.min(minX, x[i]); maxX = Math.max(maxX, x[i]); minY = Math.min(minY, y[i]); maxY = Math.max(maxY, y[i]); }
  if (!n) { minX = minY = -100; maxX = maxY = 100; }
  var pad = 60, vb = [minX - pad, minY - pad, (maxX - minX) + 2 * pad + 200, (maxY - minY) + 2 * pad];
  function applyView() { svg.setAttribute("viewBox", vb.map(function (v) { return v.toFixed(1); }).join(" ")); }
  applyView();
  svg.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var rect = svg.getBoundingClientRect(), s = ev.deltaY > 0 ? 1.15 : 1 / 1.15;
    var px = vb[0] + (ev.clientX - rect.left) / rect.width * vb[2], py = vb[1] + (ev.clientY - rect.top) / rect.height * vb[3];
    vb = [px - (px - vb[0]) * s, py - (py - vb[1]) * s, vb[2] * s, vb[3] * s];
    applyView();
  }, {passive: false});
  var drag = null;
  svg.addEventListener("pointerdown", function (ev) { drag = {x: ev.clientX, y: ev.clientY, vb: vb.slice()}; svg.classList.add("dragging"); });
  window.addEventListener("pointerup", function () { drag = null; svg.classList.remove("dragging"); });
  svg.addEventListener("pointermove", function (ev) {
    if (!drag) return;
    var rect = svg.getBoundingClientRect();
    vb[0] = drag.vb[0] - (ev.clientX - drag.x) / rect.width * vb[2];
    vb[1] = drag.vb[1] - (ev.clientY - drag.y) / rect.height * vb[3];
    applyView();
  });

  var info = document.getElementById("info");
  function text(tag, value, cls, parent) {
    var e = document.createElement(tag);
    e.textContent = value;
    if (cls) e.className = cls;
    (parent || info).appendChild(e);
    return e;
  }
  function select(i) {
    var d = nodes[i], near = {};
    near[i] = true;
    links.forEach(function (L) { if (L.s === i) near[L.t] = true; if (L.t === i) near[L.s] = true; });
    nodeEls.forEach(function (g, j) { g.classList.toggle("dim", !near[j]); g.classList.toggle("selected", j === i); });
    edgeEls.forEach(function (e, j) { e.classList.toggle("dim", links[j].s !== i && links[j].t !== i); });
    info.textContent = "";
    text("h2", d.title);
    text("div", d.type + " \\u00b7 " + d.status + " \\u00b7 " + d.id, "meta");
    if (d.path) text("div", d.path, "meta");
    var out = links.filter(function (L) { return L.s === i; }), inc = links.filter(function (L) { return L.t === i; });
    [["Links", out, "t"], ["Backlinks", inc, "s"]].forEach(function (part) {
      if (!part[1].length) return;
      text("h3", part[0] + " (" + part[1].length + ")");
      var ul = text("ul", "");
      part[1].forEach(function (L) {
        text("li", L.e.type + " \\u2192 " + nodes[L[part[2]]].title + (L.e.reason ? " \\u2014 " + L.e.reason : ""), "", ul);
      });
    });
  }
  svg.addEventListener("click", function () {
    nodeEls.forEach(function (g) { g.classList.remove("dim", "selected"); });
    edgeEls.forEach(function (e) { e.classList.remove("dim"); });
  });
  document.getElementById("filter").addEventListener("input", function (ev) {
    var q = ev.target.value.trim().toLowerCase();
    nodeEls.forEach(function (g, j) {
      var d = nodes[j];
      g.classList.toggle("dim", !!q && (d.title + " " + d.id + " " + d.type).toLowerCase().indexOf(q) < 0);
    });
  });
  var legend = document.getElementById("legend");
  Object.keys(typeColor).sort().forEach(function (t) {
    if (t === "missing" && !nodes.some(function (d) { return d.kind === "missing"; })) return;
    if (t === "entity" && !nodes.some(function (d) { return d.kind === "entity"; })) return;
    var s = document.createElement("span"), dot = document.createElement("i");
    dot.style.background = typeColor[t];
    if (t === "missing") dot.style.border = "1px dashed #cf222e";
    s.appendChild(dot);
    s.appendChild(document.createTextNode(t));
    legend.appendChild(s);
  });
  document.body.setAttribute("data-rendered", String(nodeEls.length));
})();
</script>
</body>
</html>
"""
