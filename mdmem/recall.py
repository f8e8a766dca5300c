"""recall (intent-routed retrieval) and context (memory for a prompt within a token budget)."""

from __future__ import annotations

import datetime as dt
import re
import time
from typing import TYPE_CHECKING, Any

from .memory import PRIOR_WEIGHT, classify

if TYPE_CHECKING:
    from .hybrid import Candidate
    from .rank import Filters
    from .vault import Vault

CAUSAL = frozenset({"caused_by", "because", "depends_on", "led_to", "causes", "motivated_by", "reason",
                    "supersedes", "due_to", "blocked_by", "enables", "requires", "result_of"})
NEIGHBOUR_DECAY = 0.7  # a linked note scores this fraction of the hit that led to it
_MONTHS = {m: i for i, m in enumerate(("january february march april may june july august september "
                                        "october november december").split(), 1)}


def recall(vault: Vault, text: str, limit: int, filters: Filters, *, vectors: bool = True,
           prior_weight: float | None = None) -> tuple[list[Candidate], dict[str, Any]]:
    """Classify the query, then run the route that suits it."""
    from .hybrid import hybrid_search

    intent = classify(text)
    sem = vault.semantic if vectors else None
    pool = max(limit * 3, 20)
    recent = intent == "recent"
    ranked, info = hybrid_search(vault, sem, text, pool, filters, prior_weight=prior_weight,
                                 recent_intent=recent)
    route = {"why": "hybrid + causal links", "who": "hybrid + entity match", "when": "hybrid + time window",
             "recent": "hybrid, recency-weighted", "general": "hybrid"}[intent]
    if intent == "why":
        ranked = _follow_causal(vault, ranked, filters)
    elif intent == "who":
        ranked = _entity_boost(vault, text, ranked, filters)
    elif intent == "when":
        ranked = _time_boost(vault, text, ranked)
    info.update({"intent": intent, "route": route})
    return ranked[:limit], info


def _follow_causal(vault: Vault, ranked: list[Candidate], filters: Filters) -> list[Candidate]:
    """Add the causes and consequences (one hop, both directions) of the top hits."""
    from .hybrid import Candidate

    cat = vault.catalog
    by_path = {c.path: c for c in ranked}
    seeds = ranked[:5]
    seed_ids = {p: r["id"] for p, r in cat.rows(c.path for c in seeds).items()}
    for c in seeds:
        edges: list[tuple[str, str, str]] = []  # (other path, edge type, direction)
        for ln in cat.links_from(c.path):
            if ln["type"] in CAUSAL:
                for path, _ in cat.lookup(ln["target"])[:1]:
                    edges.append((path, ln["type"], "out"))
        for src, typ in cat.db.execute(
                "SELECT l.src, l.type FROM links l JOIN names n ON n.norm = l.target_norm "
                "WHERE n.path = ? AND l.src != ?", (c.path, c.path)):
            if typ in CAUSAL:
                edges.append((src, typ, "in"))
        rows = cat.rows(p for p, _, _ in edges)
        for path, typ, direction in edges:
            row = rows.get(path)
            if row is None or not filters.matches(row):
                continue
            score = c.score * NEIGHBOUR_DECAY
            via = f"{typ} {'of' if direction == 'in' else 'from'} {seed_ids.get(c.path, c.path)}"
            other = by_path.get(path)
            if other is None:
                other = by_path[path] = Candidate(path=path, score=score, explain={"via": via})
            elif score > other.score:
                other.score = score
                other.explain["via"] = via
    return sorted(by_path.values(), key=lambda c: (-c.score, c.path))


def _entity_boost(vault: Vault, text: str, ranked: list[Candidate], filters: Filters) -> list[Candidate]:
    """Notes whose entities or aliases are named in the query rise (and join if missing)."""
    from .hybrid import Candidate

    words = {w.casefold() for w in re.findall(r"[^\W\d_][\w.\-]*", text) if len(w) > 2}
    if not words:
        return ranked
    cat = vault.catalog
    top = max((c.score for c in ranked), default=1.0) or 1.0
    by_path = {c.path: c for c in ranked}
    for path, entities, aliases, title in cat.db.execute("SELECT path, entities, aliases, title FROM notes"):
        names = {n.casefold() for n in _json_list(entities) + _json_list(aliases)}
        hit = [n for n in names if n in words or any(part in words for part in n.split())]
        if not hit:
            continue
        c = by_path.get(path)
        if c is None:
            row = cat.row(path)
            if row is None or not filters.matches(row):
                continue
            c = by_path[path] = Candidate(path=path, score=0.4 * top, explain={"via": "entity"})
        c.score += 0.25 * top
        c.explain["entity"] = sorted(hit)[0]
    return sorted(by_path.values(), key=lambda c: (-c.score, c.path))


def _time_boost(vault: Vault, text: str, ranked: list[Candidate]) -> list[Candidate]:
    """If the query names a month or a year, notes dated then rise."""
    window = time_window(text)
    if window is None or not ranked:
        return ranked
    start, end = window
    top = max(c.score for c in ranked) or 1.0
    rows = vault.catalog.rows(c.path for c in ranked)
    for c in ranked:
        date = (rows.get(c.path) or {}).get("date")
        if date is not None and start <= date < end:
            c.score += 0.3 * top
            c.explain["in_window"] = True
    return sorted(ranked, key=lambda c: (-c.score, c.path))


def time_window(text: str) -> tuple[float, float] | None:
    """(start, end) timestamps of a month ("March 2026") or year ("in 2025") the query names."""
    m = re.search(r"\b(" + "|".join(_MONTHS) + r")\s+(\d{4})\b", text, re.I)
    if m:
        month, year = _MONTHS[m.group(1).lower()], int(m.group(2))
        start = dt.datetime(year, month, 1, tzinfo=dt.timezone.utc)
        end = dt.datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=dt.timezone.utc)
        return start.timestamp(), end.timestamp()
    m = re.search(r"\b(19|20)(\d{2})\b", text)
    if m:
        year = int(m.group(0))
        return (dt.datetime(year, 1, 1, tzinfo=dt.timezone.utc).timestamp(),
                dt.datetime(year + 1, 1, 1, tzinfo=dt.timezone.utc).timestamp())
    return None


def _json_list(raw: Any) -> list[str]:
    import json

    try:
        v = json.loads(raw) if raw else []
    except ValueError:
        return []
    return [str(x) for x in v] if isinstance(v, list) else []


# -- context ---------------------------------------------------------------------------------------


def key_line(body: str, limit: int = 160) -> str:
    """The first line of a body that says something (no headings, fences or blank lines)."""
    for line in body.splitlines():
        line = line.strip().lstrip("-*> ").strip()
        if not line or line.startswith(("#", "```", "|", "---")):
            continue
        line = re.sub(r"\[\[([^\]|]+)\|([^\]]+)\]\]", r"\2", line)
        line = re.sub(r"\[\[([^\]]+)\]\]", r"\1", line).replace("**", "")
        return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
    return ""


def build_context(vault: Vault, prompt: str, *, budget: int = 600, scope: list[str] | None = None,
                  vectors: bool = True, as_of: str | None = None) -> dict[str, Any]:
    """The memories for a prompt within ``budget`` tokens: pinned notes first, then the most
    relevant (priors weigh more here than in a direct query). Deterministic for the same vault."""
    from .text import estimate_tokens

    started = time.perf_counter()
    filters = vault._filters(scope=scope, as_of=as_of)
    header = "Relevant memory from the mdmem vault (type, title, key line, id):\n"
    used = estimate_tokens(header)
    items: list[dict[str, Any]] = []
    lines: list[str] = []
    seen: set[str] = set()

    def take(path: str, why: str, score: float | None) -> bool:
        nonlocal used
        row = vault.catalog.row(path)
        if row is None or path in seen:
            return True
        try:
            body = vault._body_for_snippet(path)
        except OSError:
            return True
        line = f"- [{row['type']}] {row['title']} — {key_line(body)} (id: {row['id']})\n"
        cost = estimate_tokens(line)
        if used + cost > budget:
            return False
        used += cost
        seen.add(path)
        lines.append(line)
        items.append({"id": row["id"], "path": path, "title": row["title"], "type": row["type"], "why": why,
                      "score": round(score, 4) if score is not None else None})
        return True

    pinned = [r for r in vault.catalog.db.execute(
        "SELECT path FROM notes WHERE pinned=1 AND status='active' ORDER BY salience DESC, path")]
    for (path,) in pinned:
        row = vault.catalog.row(path)
        if row is None or not filters.matches(row):
            continue
        if used > budget // 2 or not take(path, "pinned", None):
            break
    intent = None
    if prompt.strip():
        ranked, info = recall(vault, prompt, 15, filters, vectors=vectors, prior_weight=PRIOR_WEIGHT["context"])
        intent = info.get("intent")
        for c in ranked:
            if not take(c.path, "relevant", c.score):
                break
    text = header + "".join(lines) if lines else ""
    return {"text": text, "tokens": used if lines else 0, "budget": budget, "items": items, "intent": intent,
            "ms": round((time.perf_counter() - started) * 1000, 1)}
