"""``profile``: what an agent starting cold should know, within a token budget — the user's standing
facts (pinned notes, salient preferences and facts, notes tagged identity or convention) and the recent
context (the latest handoffs, active decisions, open problems). Same vault, same answer: every list
has a fixed order (date or salience, then path)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.text import estimate_tokens
from ..results.search import ContextItem, Profile
from .health import latest_handoffs
from .recall import memory_line

if TYPE_CHECKING:
    from ..index.store import IndexStore

STANDING_TYPES = ("preference", "fact", "context")
STANDING_TAGS = frozenset({"identity", "convention", "conventions"})
STANDING_SALIENCE = 0.7  # a preference or fact this important is a standing fact
STANDING_SHARE = 0.6  # of the budget, at most, so the recent context always gets a say
RECENT = (("handoff", 2), ("decision", 3), ("problem", 3))  # newest of each, in this order


def profile(store: IndexStore, budget: int = 600, *, scope: str | None = None) -> Profile:
    """Standing facts, then recent context, each line a note's type, title, key line and id."""
    with store.reading() as idx:
        filters = store.filters(scope=[scope] if scope else None)

        def visible(paths: list[str]) -> list[dict[str, Any]]:
            """The rows of the active, visible notes among ``paths`` that no active note supersedes (a
            decision its correction replaced is no standing fact, even before anyone archives it)."""
            rows = idx.rows(paths)
            shown = [p for p in paths if p in rows and filters.matches(rows[p]) and rows[p]["status"] == "active"]
            successors = idx.superseded_by(shown)
            live = {p for p, r in idx.rows(set(successors.values())).items() if r["status"] == "active"}
            return [rows[p] for p in shown if successors.get(p) not in live]

        standing = visible(idx.pinned_paths())
        more = visible([p for t in STANDING_TYPES for p in idx.newest_paths(t, 500)])
        standing += sorted(
            (
                r
                for r in more
                if not r.get("pinned")
                and (
                    (r.get("salience") or 0.5) >= STANDING_SALIENCE
                    and r["type"] != "context"
                    or STANDING_TAGS & set(r.get("tags") or ())
                )
            ),
            key=lambda r: (-(r.get("salience") or 0.5), r["path"]),
        )
        recent: list[dict[str, Any]] = []
        for typ, n in RECENT:
            rows = latest_handoffs(store, scope, n) if typ == "handoff" else visible(idx.newest_paths(typ, 50))[:n]
            recent += rows[:n]

        heads = (
            "## Standing facts (pinned, preferences, conventions)\n",
            "## Recent context (handoffs, decisions, open problems)\n",
        )
        lines: list[str] = []
        items: list[ContextItem] = []
        used, omitted, seen = 0, 0, set()
        for head, rows, why, cap in (
            (heads[0], standing, "standing", int(budget * STANDING_SHARE)),
            (heads[1], recent, "recent", budget),
        ):
            section: list[str] = []
            cost = estimate_tokens(head)
            for row in rows:
                if row["path"] in seen:
                    continue
                try:
                    body = store.files.body(row["path"])
                except OSError:
                    continue
                pin = " (pinned)" if row.get("pinned") else ""
                line = memory_line(row["type"], row["title"], body, row["id"], pin)
                more_cost = estimate_tokens(line)
                if used + cost + more_cost > cap:
                    omitted += 1
                    continue
                cost += more_cost
                seen.add(row["path"])
                section.append(line)
                items.append(ContextItem(row["id"], row["path"], row["title"], row["type"], why, None))
            if section:
                used += cost
                lines += [head, *section]
        return Profile("".join(lines), used, budget, items, omitted)
