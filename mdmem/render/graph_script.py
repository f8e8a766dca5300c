"""Pure: the script of the graph page (``graph_html``), kept apart so each module stays readable.

It reads the graph from the page's JSON block and draws it on a canvas: a Barnes-Hut force layout
settled in slices (so the page draws while it settles), colours by folder or type, labels by
importance and zoom without collisions, a local view, filters and the side panel. It sets only
``textContent`` and draws titles with ``fillText``: no title ever becomes markup.
"""

SCRIPT = """"use strict";
(function () {
  const data = unpack(JSON.parse(document.getElementById("mdmem-graph").textContent));
  const nodes = data.nodes, n = nodes.length, index = new Map();
  function unpack(c) {  // graph_html.compact's rows back to the export's nodes and edges
    const nodes = c.nodes.map((r) => {
      const kind = c.kinds[r[0]], type = c.types[r[1]], title = r[3], path = r[5] == null ? null : r[5];
      const id = r[4] != null ? r[4] : kind === "external" ? "ref:" + type + ":" + title
        : path && path.endsWith(".md") ? path.slice(0, -3) : path;
      return {kind: kind, type: type, status: c.statuses[r[2]], title: title, id: id, path: path,
              tags: r[6] || [], key: r[7] != null ? r[7] : path || id};
    });
    const edges = c.edges.map((r) => ({source: nodes[r[0]].key, target: nodes[r[1]].key, type: c.edge_types[r[2]],
                                       reason: r[3] || null}));
    return {nodes: nodes, edges: edges};
  }
  const CAUSAL = new Set(%%CAUSAL%%);  // graph.CAUSAL_TYPES
  const $ = (id) => document.getElementById(id);
  function el(tag, text, cls, parent) {
    const e = document.createElement(tag);
    if (text) e.textContent = text;
    if (cls) e.className = cls;
    if (parent) parent.appendChild(e);
    return e;
  }

  // -- data: folders, unique neighbour pairs, importance --------------------------------------
  // A node's folder is the first folder below the one all files share (notes/<folder>/… in an
  // mdmem vault, en/… in an Obsidian vault); nodes without a path (entity, missing) have none.
  // An attachment's key is its vault path.
  const pathOf = (d) => d.path || (d.kind === "attachment" ? d.key : null);
  const parts = nodes.map((d) => { const p = pathOf(d); return p == null ? null : p.split("/").slice(0, -1); });
  let common = 0;
  for (;;) {
    let seg = null, same = true, any = false;
    for (const p of parts) if (p) { any = true; if (p.length <= common) { same = false; break; } if (seg === null) seg = p[common]; else if (p[common] !== seg) { same = false; break; } }
    if (!any || !same) break;
    common++;
  }
  nodes.forEach((d, i) => {
    index.set(d.key, i);
    d.tags = d.tags || [];
    d.folder = parts[i] ? (parts[i][common] || "(top level)") : null;
  });
  const links = [], pairOf = new Map(), pairs = [];
  const weight = (t) => t === "supersedes" ? 3 : CAUSAL.has(t) ? 2 : t === "mentions" ? 0 : 1;
  for (const e of data.edges) {
    const s = index.get(e.source), t = index.get(e.target);
    if (s === undefined || t === undefined || s === t) continue;
    links.push({s: s, t: t, e: e});
    const a = Math.min(s, t), b = Math.max(s, t), k = a * n + b, p = pairOf.get(k);
    if (p === undefined) { pairOf.set(k, pairs.length); pairs.push({a: a, b: b, type: e.type}); }
    else if (weight(e.type) > weight(pairs[p].type)) pairs[p].type = e.type;
  }
  const adj = nodes.map(() => []);
  for (const p of pairs) { adj[p.a].push(p.b); adj[p.b].push(p.a); }
  const deg = adj.map((a) => a.length);
  // Importance orders the labels: distinct neighbours, then title.
  const order = nodes.map((d, i) => i).sort((a, b) => deg[b] - deg[a] || (nodes[a].title < nodes[b].title ? -1 : 1));

  // -- colours and styles ----------------------------------------------------------------------
  const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#9c755f",
                   "#ff9da7", "#2f4b7c", "#a0cbe8", "#8cd17d", "#b6992d", "#86bcb6", "#d37295", "#79706e"];
  const OTHER = "#b4bac2";
  function counts(f) {
    const c = new Map();
    for (const d of nodes) { const v = f(d); if (v != null) c.set(v, (c.get(v) || 0) + 1); }
    return [...c.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  }
  const folders = counts((d) => d.folder), types = counts((d) => d.kind === "note" ? d.type : null);
  const kinds = counts((d) => d.kind), tagCount = new Map();
  for (const d of nodes) for (const t of d.tags) tagCount.set(t, (tagCount.get(t) || 0) + 1);
  const tags = [...tagCount.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const paletteOf = (list) => new Map(list.map((v, i) => [v[0], i < PALETTE.length ? PALETTE[i] : OTHER]));
  const folderColor = paletteOf(folders), typeColor = paletteOf(types);
  const KIND = {entity: "#8c959f", missing: "#ffffff", attachment: "#6e7781", external: "#bf8700"};
  let colorBy = "folder";
  function colorOf(d) {
    if (d.kind !== "note") return KIND[d.kind] || OTHER;
    return (colorBy === "folder" ? folderColor.get(d.folder) : typeColor.get(d.type)) || OTHER;
  }
  const edgeColor = (t) => t === "supersedes" ? "#8250df" : CAUSAL.has(t) ? "#cf222e" : "#8c959f";
  const radius = (i) => 2.5 + Math.min(9, Math.sqrt(deg[i]));

  // -- layout: Barnes-Hut repulsion, springs along pairs, gravity; cooled over a fixed number of steps
  const K = 30, THETA2 = 0.81, REACH = 5 * K;
  function simulation(act, X, Y, plan, pin) {
    const m = act.length, at = new Int32Array(n).fill(-1);
    act.forEach((v, i) => { at[v] = i; });
    const sp = [];
    for (const p of pairs) if (at[p.a] >= 0 && at[p.b] >= 0) sp.push(at[p.a], at[p.b]);
    const x = Float64Array.from(act, (v) => X[v]), y = Float64Array.from(act, (v) => Y[v]);
    const fx = new Float64Array(m), fy = new Float64Array(m), cap = 8 * m + 64;
    const qx = new Float64Array(cap), qy = new Float64Array(cap), qh = new Float64Array(cap);
    const mx = new Float64Array(cap), my = new Float64Array(cap), ms = new Float64Array(cap);
    const ch = new Int32Array(4 * cap), pt = new Int32Array(cap), stack = new Int32Array(4096);
    let used = 0, done = 0, steps = plan;
    const t0 = K * Math.sqrt(m) / 3, gravity = 0.06;
    function make(cx, cy, h) {
      const c = used++;
      qx[c] = cx; qy[c] = cy; qh[c] = h; mx[c] = my[c] = ms[c] = 0; pt[c] = -1; ch.fill(0, 4 * c, 4 * c + 4);
      return c;
    }
    function child(c, px, py) {
      const q = (px >= qx[c] ? 1 : 0) + (py >= qy[c] ? 2 : 0);
      if (!ch[4 * c + q]) { const h = qh[c] / 2; ch[4 * c + q] = make(qx[c] + (q & 1 ? h : -h), qy[c] + (q & 2 ? h : -h), h); }
      return ch[4 * c + q];
    }
    function insert(i) {
      let c = 0;
      for (;;) {
        if (ms[c] === 0) { pt[c] = i; ms[c] = 1; mx[c] = x[i]; my[c] = y[i]; return; }
        if (pt[c] >= 0) {  // a leaf: split it, unless it is tiny (points on top of each other)
          if (ms[c] > 1 || qh[c] < 0.01 || used + 4 > cap) { ms[c]++; mx[c] += x[i]; my[c] += y[i]; return; }
          const j = pt[c], cj = child(c, x[j], y[j]);
          pt[c] = -1; pt[cj] = j; ms[cj] = 1; mx[cj] = x[j]; my[cj] = y[j];
        }
        ms[c]++; mx[c] += x[i]; my[c] += y[i];
        c = child(c, x[i], y[i]);
      }
    }
    function step() {
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (let i = 0; i < m; i++) { x0 = Math.min(x0, x[i]); x1 = Math.max(x1, x[i]); y0 = Math.min(y0, y[i]); y1 = Math.max(y1, y[i]); }
      used = 0;
      make((x0 + x1) / 2, (y0 + y1) / 2, Math.max(x1 - x0, y1 - y0) / 2 + 1);
      for (let i = 0; i < m; i++) insert(i);
      for (let i = 0; i < m; i++) {
        let ax = -x[i] * gravity, ay = -y[i] * gravity, top = 0;
        stack[top++] = 0;
        while (top) {
          const c = stack[--top];
          let dx = x[i] - mx[c] / ms[c], dy = y[i] - my[c] / ms[c], d2 = dx * dx + dy * dy, mass = ms[c];
          const far = Math.sqrt(d2) - 1.5 * qh[c];
          if (far > REACH) continue;  // short-range repulsion: even density, and no far-flung orphans
          if (pt[c] >= 0 || 4 * qh[c] * qh[c] < THETA2 * d2) {
            if (d2 > REACH * REACH) continue;
            if (pt[c] === i) { if (mass === 1) continue; mass -= 1; }
            if (d2 < 0.01) { dx = ((i * 7919) % 13 - 6) * 0.1; dy = ((i * 104729) % 11 - 5) * 0.1; d2 = dx * dx + dy * dy + 0.01; }
            const f = K * K * mass / d2;
            ax += dx * f; ay += dy * f;
          } else {
            for (let q = 4 * c; q < 4 * c + 4; q++) if (ch[q]) stack[top++] = ch[q];
          }
        }
        fx[i] = ax; fy[i] = ay;
      }
      for (let q = 0; q < sp.length; q += 2) {
        const a = sp[q], b = sp[q + 1], dx = x[a] - x[b], dy = y[a] - y[b];
        const f = Math.sqrt(dx * dx + dy * dy) / K;
        fx[a] -= dx * f; fy[a] -= dy * f; fx[b] += dx * f; fy[b] += dy * f;
      }
      const temp = t0 * Math.pow(1 - done / steps, 2) + K * 0.05;
      for (let i = 0; i < m; i++) {
        const len = Math.sqrt(fx[i] * fx[i] + fy[i] * fy[i]) || 1, mv = Math.min(len, temp) / len;
        x[i] += fx[i] * mv; y[i] += fy[i] * mv;
      }
      if (pin !== undefined) { const p = at[pin]; x[p] = y[p] = 0; }
      done++;
    }
    return {
      run(ms_) {  // steps for about ms_ milliseconds; true when done
        const end = performance.now() + ms_;
        while (done < steps && performance.now() < end) step();
        act.forEach((v, i) => { X[v] = x[i]; Y[v] = y[i]; });
        return done >= steps;
      },
      get done() { return done; },
      hurry() { steps = Math.min(steps, done + 15); },  // cool down now: a few steps at low temperature
    };
  }
  // Start from the folders: each folder's nodes on a sunflower around the folder's own centre.
  const X = new Float64Array(n), Y = new Float64Array(n);
  {
    const groups = new Map();
    for (const i of order) { const g = nodes[i].folder || "\\u0000" + nodes[i].kind; if (!groups.has(g)) groups.set(g, []); groups.get(g).push(i); }
    let g = 0;
    const big = K * Math.sqrt(n) * 0.8;
    for (const members of groups.values()) {
      const a = g * 2.399963229728653, r = groups.size > 1 ? big * Math.sqrt((g + 0.5) / groups.size) : 0;
      members.forEach((v, j) => {
        const rr = K * 0.9 * Math.sqrt(j + 0.5), aa = j * 2.399963229728653;
        X[v] = r * Math.cos(a) + rr * Math.cos(aa); Y[v] = r * Math.sin(a) + rr * Math.sin(aa);
      });
      g++;
    }
  }
  // External references (URLs, tickets) that outnumber the notes (a community wiki cites ~4 URLs a note)
  // are hidden at first and left out of the layout; shown, each sits beside a note that cites it.
  const countOf = (k) => (kinds.find((c) => c[0] === k) || [k, 0])[1];
  const manyExternal = countOf("external") > countOf("note");
  const all = manyExternal ? order.filter((i) => nodes[i].kind !== "external") : order.slice();
  const STEPS = all.length <= 1500 ? 300 : all.length <= 4000 ? 220 : all.length <= 8000 ? 160 : 110;
  function placeExternals() {
    const around = new Int32Array(n);
    for (const i of order) {
      if (nodes[i].kind !== "external") continue;
      const j = adj[i].find((v) => nodes[v].kind !== "external");
      if (j === undefined) continue;
      const c = around[j]++, r = K * 0.6 * Math.sqrt(c + 1), a = c * 2.399963229728653;
      X[i] = X[j] + r * Math.cos(a); Y[i] = Y[j] + r * Math.sin(a);
    }
  }
  const global = simulation(all, X, Y, STEPS);
  const LX = new Float64Array(n), LY = new Float64Array(n);
  let PX = X, PY = Y;

  // -- state and visibility ----------------------------------------------------------------------
  const kindOn = new Map(kinds.map((k) => [k[0], !(manyExternal && k[0] === "external")])), folderOn = new Map(folders.map((f) => [f[0], true]));
  const typeOn = new Map(types.map((t) => [t[0], true]));
  let tag = "", query = "", selected = -1, hover = -1, local = false, depth = 1;
  let visible = Uint8Array.from(nodes, (d) => kindOn.get(d.kind) ? 1 : 0), focus = null, hits = null;
  let shownCount = visible.reduce((a, b) => a + b, 0);
  function baseVisible(i) {
    const d = nodes[i];
    if (!kindOn.get(d.kind)) return false;
    if (d.folder !== null && !folderOn.get(d.folder)) return false;
    return d.kind !== "note" || (typeOn.get(d.type) && (!tag || d.tags.includes(tag)));
  }
  function recompute() {
    const base = new Uint8Array(n), filtered = tag || [...folderOn.values(), ...typeOn.values()].includes(false);
    for (let i = 0; i < n; i++) base[i] = baseVisible(i) ? 1 : 0;
    if (filtered) {  // entity and missing nodes stay while something they connect to does
      for (let i = 0; i < n; i++) if (base[i] && nodes[i].folder === null && !adj[i].some((j) => base[j] && nodes[j].folder !== null)) base[i] = 0;
    }
    visible = base;
    PX = X; PY = Y;
    if (local && selected >= 0) {  // breadth first from the selected node, through shown nodes only
      const dist = new Int32Array(n).fill(-1), ring = [selected];
      dist[selected] = 0;
      for (let h = 0; h < ring.length; h++) {
        const v = ring[h];
        if (dist[v] < depth) for (const w of adj[v]) if (dist[w] < 0 && base[w]) { dist[w] = dist[v] + 1; ring.push(w); }
      }
      visible = new Uint8Array(n);
      ring.forEach((v, j) => {
        visible[v] = 1;
        const r = K * 1.2 * Math.sqrt(j), a = j * 2.399963229728653;
        LX[v] = r * Math.cos(a); LY[v] = r * Math.sin(a);
      });
      simulation(ring, LX, LY, ring.length <= 2000 ? 200 : 60, selected).run(Infinity);
      PX = LX; PY = LY;
    }
    shownCount = visible.reduce((a, b) => a + b, 0);
    $("shown").textContent = shownCount === n ? "" : "\\u00b7 showing " + shownCount;
    highlight();
  }
  function highlight() {  // the nodes drawn in full: the selection and its neighbours, or find matches
    focus = null;
    hits = null;
    const at = hover >= 0 ? hover : selected;
    if (at >= 0) { focus = new Set(adj[at]); focus.add(at); }
    if (query) {
      hits = new Set();
      nodes.forEach((d, i) => { if ((d.title + " " + d.id + " " + d.type + " " + d.tags.join(" ")).toLowerCase().includes(query)) hits.add(i); });
    }
  }

  // -- drawing ------------------------------------------------------------------------------------
  const canvas = $("graph"), ctx = canvas.getContext("2d"), wrap = $("wrap"), tip = $("tip");
  let W = 0, H = 0, s = 1, sFit = 1, tx = 0, ty = 0, moved = false, pending = false, labelled = [];
  const widths = new Float64Array(n).fill(-1), FONT = "12px " + getComputedStyle(document.body).fontFamily;
  const short = (t) => t.length > 40 ? t.slice(0, 39) + "\\u2026" : t;
  function resize() {
    const dpr = window.devicePixelRatio || 1;
    W = wrap.clientWidth; H = wrap.clientHeight;
    canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }
  function fit() {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (let i = 0; i < n; i++) if (visible[i]) { x0 = Math.min(x0, PX[i]); x1 = Math.max(x1, PX[i]); y0 = Math.min(y0, PY[i]); y1 = Math.max(y1, PY[i]); }
    if (x0 === Infinity) { x0 = y0 = -100; x1 = y1 = 100; }
    s = sFit = Math.min((W - 40) / Math.max(x1 - x0, 1), (H - 40) / Math.max(y1 - y0, 1), 2.5);
    tx = W / 2 - s * (x0 + x1) / 2; ty = H / 2 - s * (y0 + y1) / 2;
  }
  const redraw = () => { if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; draw(); }); } };
  const lit = (i) => (!focus || focus.has(i)) && (!hits || hits.has(i));
  function draw() {
    ctx.clearRect(0, 0, W, H);
    ctx.save();
    ctx.translate(tx, ty); ctx.scale(s, s);
    const shown = pairs.filter((p) => visible[p.a] && visible[p.b]), dim = focus || hits;
    const alpha = Math.min(0.5, Math.max(0.05, 10 / Math.sqrt(shown.length + 1)));
    const batches = new Map();
    for (const p of shown) {
      const key = edgeColor(p.type) + (dim && !(lit(p.a) && lit(p.b) && (!focus || p.a === (hover >= 0 ? hover : selected) || p.b === (hover >= 0 ? hover : selected))) ? "d" : "");
      if (!batches.has(key)) batches.set(key, []);
      batches.get(key).push(p);
    }
    ctx.lineWidth = 1 / s;
    for (const [key, list] of batches) {
      ctx.strokeStyle = key.slice(0, 7);
      ctx.globalAlpha = key.endsWith("d") ? alpha * 0.3 : dim ? 0.8 : alpha;
      ctx.beginPath();
      for (const p of list) { ctx.moveTo(PX[p.a], PY[p.a]); ctx.lineTo(PX[p.b], PY[p.b]); }
      ctx.stroke();
    }
    const at = hover >= 0 ? hover : selected;
    if (at >= 0 && visible[at]) {  // the selection's own edges, with arrows: out blue, in orange
      ctx.globalAlpha = 0.9;
      ctx.lineWidth = 1.5 / s;
      for (const L of links) {
        if ((L.s !== at && L.t !== at) || !visible[L.s] || !visible[L.t]) continue;
        ctx.strokeStyle = ctx.fillStyle = L.s === at ? "#0969da" : "#bc4c00";
        const ex = PX[L.t] - PX[L.s], ey = PY[L.t] - PY[L.s], d = Math.sqrt(ex * ex + ey * ey) || 1;
        const ux = ex / d, uy = ey / d, hx = PX[L.t] - ux * (radius(L.t) + 1.5 / s), hy = PY[L.t] - uy * (radius(L.t) + 1.5 / s), a = 7 / s;
        ctx.beginPath(); ctx.moveTo(PX[L.s], PY[L.s]); ctx.lineTo(hx, hy); ctx.stroke();
        ctx.beginPath(); ctx.moveTo(hx, hy); ctx.lineTo(hx - ux * a - uy * a * 0.5, hy - uy * a + ux * a * 0.5);
        ctx.lineTo(hx - ux * a + uy * a * 0.5, hy - uy * a - ux * a * 0.5); ctx.fill();
      }
    }
    // Nodes, batched by style; dimmed ones first.
    const styles = new Map();
    for (let i = 0; i < n; i++) {
      if (!visible[i]) continue;
      const d = nodes[i], key = (dim && !lit(i) ? "0" : "1") + (d.kind === "note" && d.status !== "active" ? "i" : "a") + "|" + d.kind + "|" + colorOf(d);
      if (!styles.has(key)) styles.set(key, []);
      styles.get(key).push(i);
    }
    const min = 1.6 / s;
    for (const key of [...styles.keys()].sort()) {
      const [flags, kind, color] = key.split("|"), list = styles.get(key);
      ctx.globalAlpha = (flags[0] === "0" ? (local ? 0.4 : 0.15) : 1) * (flags[1] === "i" ? 0.45 : 1);
      ctx.fillStyle = color;
      ctx.beginPath();
      for (const i of list) {
        const r = Math.max(radius(i), min);
        if (kind === "attachment") ctx.rect(PX[i] - r * 0.85, PY[i] - r * 0.85, r * 1.7, r * 1.7);
        else if (kind === "external") { ctx.moveTo(PX[i], PY[i] - r); ctx.lineTo(PX[i] + r, PY[i]); ctx.lineTo(PX[i], PY[i] + r); ctx.lineTo(PX[i] - r, PY[i]); ctx.closePath(); }
        else { ctx.moveTo(PX[i] + r, PY[i]); ctx.arc(PX[i], PY[i], r, 0, 2 * Math.PI); }
      }
      ctx.fill();
      if (kind === "missing" || kind === "entity") {
        ctx.setLineDash([3 / s, 2 / s]); ctx.strokeStyle = kind === "missing" ? "#cf222e" : "#57606a"; ctx.lineWidth = 1.2 / s; ctx.stroke(); ctx.setLineDash([]);
      } else if (s * 4 > 3) { ctx.strokeStyle = "#fff"; ctx.lineWidth = 1 / s; ctx.stroke(); }
    }
    if (selected >= 0 && visible[selected]) {
      ctx.globalAlpha = 1; ctx.strokeStyle = "#0969da"; ctx.lineWidth = 3 / s;
      ctx.beginPath(); ctx.arc(PX[selected], PY[selected], Math.max(radius(selected), min) + 2 / s, 0, 2 * Math.PI); ctx.stroke();
    }
    ctx.restore();
    labels();
  }
  // Labels, most important first, each only where it overlaps no label already placed: zoomed out
  // that is the hubs, zoomed in more and more nodes. The selection, its neighbours and find matches go first.
  function labels() {
    ctx.font = FONT; ctx.textBaseline = "middle"; ctx.lineJoin = "round";
    const cell = 24, grid = new Map(), boxes = [];
    const first = [];
    if (selected >= 0) first.push(selected);
    if (hover >= 0) first.push(hover);
    if (focus) first.push(...[...focus].sort((a, b) => deg[b] - deg[a]));
    if (hits) first.push(...[...hits].sort((a, b) => deg[b] - deg[a]).slice(0, 200));
    // Zoomed out to the whole graph, only the ~120 most important nodes may get a label; each step in
    // lets in more (a fixed density on screen), the selection, its neighbours and matches always.
    const budget = 120 * (s / sFit) * (s / sFit), special = new Set(first);
    let placed = 0, rank = -1;
    for (const i of first.length ? first.concat(order) : order) {
      if (placed >= 350) break;
      if (!visible[i] || (!local && (focus || hits) && !lit(i) && i !== selected)) continue;
      if (!special.has(i) && ++rank > budget) break;
      const sx = PX[i] * s + tx, sy = PY[i] * s + ty, r = Math.max(radius(i) * s, 1.6);
      if (sx < -200 || sx > W + 20 || sy < -20 || sy > H + 20) continue;
      if (widths[i] < 0) widths[i] = ctx.measureText(short(nodes[i].title)).width;
      const bx = sx + r + 3, by = sy - 8, bw = widths[i] + 6, bh = 16;
      let clash = false;
      const gx0 = Math.floor(bx / cell), gx1 = Math.floor((bx + bw) / cell), gy0 = Math.floor(by / cell), gy1 = Math.floor((by + bh) / cell);
      for (let gx = gx0; gx <= gx1 && !clash; gx++) for (let gy = gy0; gy <= gy1 && !clash; gy++) {
        for (const b of grid.get(gx + "," + gy) || []) if (bx < b[0] + b[2] && b[0] < bx + bw && by < b[1] + b[3] && b[1] < by + bh) { clash = true; break; }
      }
      if (clash) continue;
      const box = [bx, by, bw, bh];
      for (let gx = gx0; gx <= gx1; gx++) for (let gy = gy0; gy <= gy1; gy++) { const k = gx + "," + gy; if (!grid.has(k)) grid.set(k, []); grid.get(k).push(box); }
      boxes.push(i);
      placed++;
      ctx.globalAlpha = 1;
      ctx.lineWidth = 3; ctx.strokeStyle = "rgba(255,255,255,0.9)"; ctx.strokeText(short(nodes[i].title), bx, sy);
      ctx.fillStyle = i === selected ? "#0969da" : "#1f2328"; ctx.fillText(short(nodes[i].title), bx, sy);
    }
    canvas.setAttribute("data-labels", String(placed));
    labelled = boxes;
  }

  // -- interaction --------------------------------------------------------------------------------
  function nodeAt(cx, cy) {
    const wx = (cx - tx) / s, wy = (cy - ty) / s;
    let best = -1, bd = Infinity;
    for (let i = 0; i < n; i++) {
      if (!visible[i]) continue;
      const dx = PX[i] - wx, dy = PY[i] - wy, d2 = dx * dx + dy * dy, r = Math.max(radius(i), 6 / s);
      if (d2 <= r * r && d2 < bd) { bd = d2; best = i; }
    }
    return best;
  }
  let drag = null;
  const point = (ev) => { const r = canvas.getBoundingClientRect(); return [ev.clientX - r.left, ev.clientY - r.top]; };
  canvas.addEventListener("pointerdown", (ev) => {
    drag = {x: ev.clientX, y: ev.clientY, tx: tx, ty: ty, moved: false};
    canvas.classList.add("dragging");
  });
  window.addEventListener("pointerup", (ev) => {
    if (!drag) return;
    const click = !drag.moved;
    drag = null;
    canvas.classList.remove("dragging");
    if (click && ev.target === canvas) { const [cx, cy] = point(ev), i = nodeAt(cx, cy); if (i >= 0) select(i); else if (!local) select(-1); }
  });
  canvas.addEventListener("pointermove", (ev) => {
    if (drag) {
      if (Math.abs(ev.clientX - drag.x) + Math.abs(ev.clientY - drag.y) > 4) drag.moved = moved = true;
      if (drag.moved) { tx = drag.tx + ev.clientX - drag.x; ty = drag.ty + ev.clientY - drag.y; redraw(); }
      return;
    }
    const [cx, cy] = point(ev), i = nodeAt(cx, cy);
    if (i !== hover) {
      hover = i;
      highlight();
      redraw();
    }
    if (i >= 0) {
      const d = nodes[i];
      tip.textContent = d.title + " \\u00b7 " + (d.kind === "note" ? d.type : d.kind === "external" ? "external " + d.type : d.kind) + (pathOf(d) ? " \\u00b7 " + pathOf(d) : "") + " \\u00b7 " + deg[i] + " linked";
      tip.style.display = "block"; tip.style.left = Math.min(cx + 12, W - 200) + "px"; tip.style.top = (cy + 12) + "px";
    } else tip.style.display = "none";
  });
  canvas.addEventListener("pointerleave", () => { tip.style.display = "none"; if (hover >= 0) { hover = -1; highlight(); redraw(); } });
  canvas.addEventListener("dblclick", (ev) => {
    const [cx, cy] = point(ev), i = nodeAt(cx, cy);
    if (i >= 0) { $("local").checked = local = true; select(i); }
  });
  canvas.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const [cx, cy] = point(ev), f = Math.pow(1.0015, -ev.deltaY);
    tx = cx - (cx - tx) * f; ty = cy - (cy - ty) * f; s *= f;
    moved = true;
    redraw();
  }, {passive: false});
  window.addEventListener("keydown", (ev) => { if (ev.key === "Escape") { $("local").checked = local = false; select(-1); } });
  window.addEventListener("resize", () => { resize(); redraw(); });

  const info = $("info");
  function select(i) {
    selected = i;
    hover = -1;
    recompute();
    if (local && i >= 0) fit();
    redraw();
    info.textContent = "";
    if (i < 0) { el("p", "Click a node for its links, double-click for its local view.", "meta", info); return; }
    const d = nodes[i];
    el("h2", d.title, "", info);
    el("div", [d.kind === "note" ? d.type : d.kind === "external" ? "external " + d.type : d.kind, d.status, d.id].filter(Boolean).join(" \\u00b7 "), "meta", info);
    if (pathOf(d)) el("div", pathOf(d), "meta", info);
    if (d.tags.length) el("div", d.tags.map((t) => "#" + t).join(" "), "meta", info);
    const b = el("button", local ? "Back to the whole graph" : "Local view", "", info);
    b.addEventListener("click", () => { $("local").checked = local = !local; select(selected); if (!local) fit(); redraw(); });
    // One entry per linked node, with the number of links and their types: → out, ← in.
    for (const [head, arrow, mine, other] of [["Links", "\\u2192 ", "s", "t"], ["Backlinks", "\\u2190 ", "t", "s"]]) {
      const by = new Map();
      for (const L of links) {
        if (L[mine] !== i) continue;
        const e = by.get(L[other]) || {count: 0, types: new Set(), reason: null};
        e.count++; e.types.add(L.e.type); e.reason = e.reason || L.e.reason;
        by.set(L[other], e);
      }
      if (!by.size) continue;
      el("h3", head + " (" + by.size + ")", "", info);
      const ul = el("ul", "", head === "Links" ? "out" : "in", info);
      [...by.entries()].sort((a, b) => b[1].count - a[1].count || (nodes[a[0]].title < nodes[b[0]].title ? -1 : 1)).forEach(([j, e]) => {
        const li = el("li", "", "", ul), go = el("button", arrow + nodes[j].title, "", li);
        li.setAttribute("data-key", nodes[j].key);
        go.addEventListener("click", () => select(j));
        if (e.count > 1) el("span", "\\u00d7" + e.count, "n", li);
        const t = [...e.types].filter((x) => x !== "mentions");
        if (t.length || e.reason) el("span", t.join(", ") + (e.reason ? " \\u2014 " + e.reason : ""), "t", li);
      });
    }
  }

  // -- controls -------------------------------------------------------------------------------------
  function legend(ul, list, on, colors) {
    ul.textContent = "";
    for (const [value, count] of list) {
      const li = el("li", "", "", ul), box = el("input", "", "", li), dot = el("i", "", "", li);
      box.type = "checkbox"; box.checked = on.get(value);
      li.setAttribute("data-value", value);
      if (colors) dot.style.background = colors.get(value); else dot.style.display = "none";
      el("span", value, "", li); el("span", String(count), "n", li);
      box.addEventListener("change", () => { on.set(value, box.checked); recompute(); redraw(); });
    }
  }
  function legends() {
    legend($("folders"), folders, folderOn, colorBy === "folder" ? folderColor : null);
    legend($("types"), types, typeOn, colorBy === "type" ? typeColor : null);
  }
  legends();
  const kindBox = $("kinds");
  for (const [k, count] of kinds) {
    const lab = el("label", "", "", kindBox), box = el("input", "", "", lab), dot = el("i", "", "", lab);
    box.type = "checkbox"; box.checked = kindOn.get(k); box.setAttribute("data-kind", k);
    dot.style.background = k === "note" ? PALETTE[0] : KIND[k] || OTHER;
    if (k === "missing") dot.style.border = "1px dashed #cf222e";
    if (k === "attachment" || k === "external") dot.style.borderRadius = "1px";
    if (k === "external") dot.style.transform = "rotate(45deg) scale(0.8)";
    lab.appendChild(document.createTextNode(k + " (" + count + ")" + (box.checked ? "" : " \u2014 hidden at first: more than the notes")));
    box.addEventListener("change", () => { kindOn.set(k, box.checked); if (k === "external" && manyExternal) placeExternals(); recompute(); redraw(); });
  }
  if (manyExternal) recompute();  // says how many are shown
  const tagSel = $("tag");
  for (const [t, count] of tags) { const o = el("option", t + " (" + count + ")", "", tagSel); o.value = t; }
  tagSel.addEventListener("change", () => { tag = tagSel.value; recompute(); redraw(); });
  $("color").addEventListener("change", (ev) => { colorBy = ev.target.value; legends(); redraw(); });
  $("local").addEventListener("change", (ev) => { local = ev.target.checked; select(selected); if (!local) fit(); redraw(); });
  $("depth").addEventListener("input", (ev) => { depth = +ev.target.value; $("depthv").textContent = String(depth); if (local) select(selected); });
  $("filter").addEventListener("input", (ev) => { query = ev.target.value.trim().toLowerCase(); highlight(); redraw(); });

  // -- run: settle the layout in slices so the page draws while it settles ------------------------
  resize();
  const started = performance.now();
  const api = {
    nodes: n, steps: STEPS, settledMs: null, laidOut: all.length,
    visibleKeys: () => nodes.filter((d, i) => visible[i]).map((d) => d.key),
    labelled: () => labelled.map((i) => nodes[i].key),
    top: (k) => order.slice(0, k).map((i) => nodes[i].key),
    point(key) { const i = index.get(key), r = canvas.getBoundingClientRect(); return [PX[i] * s + tx + r.left, PY[i] * s + ty + r.top]; },
    select: (key) => select(key === null ? -1 : index.get(key)),
    zoom(f) { tx = W / 2 - (W / 2 - tx) * f; ty = H / 2 - (H / 2 - ty) * f; s *= f; draw(); },
  };
  window.mdmemGraph = api;
  (function slice() {
    // On a slow or busy machine the layout stops refining after ~4 s rather than keep the page busy.
    if (performance.now() - started > 4000) global.hurry();
    const finished = global.run(60);
    if (manyExternal && kindOn.get("external")) placeExternals();
    if (!moved && !local) fit();  // follow the settling graph until the user pans or zooms
    draw();
    if (finished) {
      api.settledMs = Math.round(performance.now() - started);
      api.stepsDone = global.done;
      document.body.setAttribute("data-settled", String(api.settledMs));
    } else setTimeout(slice, 0);
  })();
  document.body.setAttribute("data-rendered", String(n));
})();
"""
