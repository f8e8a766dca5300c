"""The review queue (``review``): what needs judgement, each item with its evidence and the commands
that settle it; ``dismiss`` (remembered in a committed file of the vault, so it survives a rebuild and
travels with the vault) and ``supersede`` (one note replaces another). Nothing here changes a note
unless a command is given: the queue is read from the index and the notes' text.

The pairs come from ``similar`` (the newest notes' neighbours by words and meaning); whether a pair
disagrees, duplicates or only relates is ``core.disagree`` and the duplicate check's thresholds."""

from __future__ import annotations

import datetime as dt
import shlex
from typing import TYPE_CHECKING, Any

from ..core.disagree import disagreement, names
from ..core.disagree import subject as core_subject
from ..core.errors import MdmemError
from ..core.text import terms
from ..results.review import Dismissal, ReviewItem, ReviewNote, ReviewQueue, Superseded

if TYPE_CHECKING:
    from ..core.graph import Graph, Node
    from ..core.note import Note
    from ..index.semantic import Semantic
    from ..index.store import IndexStore
    from ..results.changes import Change

DISMISSED_FILE = ".mdmem-review.yaml"  # hidden in Obsidian, committed with the notes
KINDS = (
    "contradiction",
    "duplicate",
    "superseded_linked",
    "expired_linked",
    "unlinked",
    "candidate",
    "stale_handoff",
)
# Types whose notes make claims that can disagree (a handoff or a conversation only reports).
CLAIM_TYPES = frozenset("decision preference fact domain problem antipattern feedback note project".split())
REPORTS = frozenset({"handoff", "conversation"})  # alike by their form: never a duplicate or a link to make
SCAN = 200  # the newest notes whose neighbours are looked at: new notes are what disagree with old ones
NEIGHBOURS = 6  # per scanned note
DUPLICATE_COSINE = 0.9  # a paraphrase: closer than related notes, a little below the add check's near duplicate
DUPLICATE_WORDS = 0.6  # or this share of words in common (as the add check)
# A paraphrase keeps the names (Kamal, Hetzner, Tuesday) while its words change: with most names shared,
# a lower cosine than a near duplicate's is enough.
PARAPHRASE_COSINE = 0.55
PARAPHRASE_NAMES = 0.75  # share of the two notes' names in common (at least two of them)
STALE_HANDOFF_DAYS = 14
KEEP_HANDOFFS = 3  # the newest handoffs a session starts from are never stale
CANDIDATE_HANDOFFS = 5  # the newest handoffs whose candidate memories (``## Candidates``) are listed
COUNT_FILE = "review-count.json"  # in .mdmem/: the queue's size, with the index stamp it was counted at


def review(store: IndexStore, sem: Semantic | None, limit: int = 20, *, scan: int = SCAN) -> ReviewQueue:
    """The items to judge, most pressing first (contradictions, duplicates, links to old versions,
    links to expired facts, related notes not linked, candidate memories from sessions, stale handoffs),
    those dismissed left out. A whole review (the default ``scan``) leaves its count in ``COUNT_FILE``
    for the session-start nudge (``cached_count``)."""
    from .graph_view import graph_of

    dismissed = dismissed_keys(store)
    items: list[ReviewItem] = []
    now = store.now()
    filters = store.filters()
    with store.settled(), store.reading() as idx:  # one repair for the whole pass, not one per read
        g = graph_of(idx)
        stamp = count_stamp(store) if scan == SCAN else None  # after the read's repair, which may write
        recent = [p for p in idx.dated_between(None, None, scan * 3) if p in g.nodes]
        rows = idx.rows(recent)
        active = [p for p in recent if p in rows and filters.matches(rows[p])][:scan]
        read: dict[str, tuple[Note, set[str]]] = {}  # each note read and counted once in the pass
        items += _pairs(store, sem, g, active, read)
        items += _old_targets(g, idx.superseded_by([p for p, n in g.nodes.items() if n.kind == "note"]), now)
        handoffs = idx.newest_paths("handoff", 200)
        handoff_rows = idx.rows(handoffs)
        items += _stale_handoffs(g, handoffs, handoff_rows, now)
        claims = [p for p in active if g.nodes[p].type not in REPORTS]
        items += _candidates(store, g, handoffs, handoff_rows, claims, read)
    order = {k: i for i, k in enumerate(KINDS)}
    items.sort(key=lambda it: (order[it.kind], -it.score, it.key))
    kept = [it for it in items if it.key not in dismissed]
    if stamp is not None:  # a write while it counted (vectors arriving) leaves a count marked as old
        store.save_state_json(COUNT_FILE, {"stamp": stamp, "count": len(kept)})
    return ReviewQueue(kept[:limit], len(kept), len(items) - len(kept), len(active), DISMISSED_FILE)


def review_count(store: IndexStore, sem: Semantic | None) -> int:
    """How many items the queue holds (for the session-start nudge)."""
    return review(store, sem, limit=1).total


def count_stamp(store: IndexStore) -> str | None:
    """What the queue's count depends on: the index (every write changes it), the dismissals and the day."""
    stamp = store.stamp(store.root / DISMISSED_FILE)
    day = dt.datetime.fromtimestamp(store.now(), dt.UTC).date().isoformat()
    return f"{stamp}:{day}" if stamp else None


def cached_count(store: IndexStore) -> tuple[int, bool] | None:
    """The queue's size as the last whole review counted it, and whether it is still true (nothing
    written to the index or the dismissals since, the same day); None when never counted. A few stat
    calls: no index is opened, nothing is compared."""
    data = store.state_json(COUNT_FILE)
    if not data or not isinstance(data.get("count"), int):
        return None
    return int(data["count"]), data.get("stamp") == count_stamp(store)


# -- pairs: contradictions, duplicates, related notes not linked -----------------------------------------


def _pairs(
    store: IndexStore, sem: Semantic | None, g: Graph, active: list[str], read: dict[str, tuple[Note, set[str]]]
) -> list[ReviewItem]:
    """``read``: the pass's notes and their terms, shared with ``similar``, filled here."""
    from .linking import SUGGEST_MIN_COSINE, SUGGEST_MIN_SHARE
    from .similar import similar

    named: dict[str, set[str]] = {}

    def note(path: str) -> tuple[Note, set[str], set[str]]:
        """The note, its terms and its names: read and counted once however many pairs it is in."""
        if path not in read:
            n = store.files.read_note(path)[0]
            read[path] = (n, set(terms(f"{n.title}\n{n.body}")))
        n, words = read[path]
        if path not in named:
            named[path] = names(f"{n.title}\n{n.body}")
        return n, words, named[path]

    seen: set[tuple[str, str]] = set()
    out: list[ReviewItem] = []
    dup_pairs: list[tuple[str, str, list[str]]] = []
    filters = store.filters()
    for src in active:
        if g.nodes[src].type in REPORTS:
            continue
        try:
            found = similar(store, sem, src, NEIGHBOURS, filters, fresh=False, notes=read)
        except (MdmemError, OSError):
            continue
        for s in found.results:
            pair = (min(src, s.path), max(src, s.path))
            if s.path not in g.nodes or s.type in REPORTS or pair in seen or _versions(g, *pair):
                continue
            seen.add(pair)
            (a, ta, na), (b, tb, nb) = note(pair[0]), note(pair[1])
            jac = len(ta & tb) / len(ta | tb) if ta | tb else 0.0
            cos = s.cosine or 0.0
            same_names = sorted(na & nb)
            subject = core_subject((a.title, a.entities, ""), (b.title, b.entities, ""), cos, (na, nb))
            evidence = [f"similarity: cosine {cos:.2f}, {jac:.0%} of words shared"] if s.cosine else []
            evidence = evidence or [f"{jac:.0%} of words shared"]
            differ = disagreement(f"{a.title}. {a.body}", f"{b.title}. {b.body}") if subject else []
            paraphrase = (
                len(same_names) >= 2
                and len(same_names) >= PARAPHRASE_NAMES * len(na | nb)
                and (cos >= PARAPHRASE_COSINE if s.cosine is not None else jac >= 0.3)
            )
            if a.type == b.type and a.type in CLAIM_TYPES and subject and differ:
                out.append(_contradiction(g, a, b, [*subject, *differ, *evidence], cos + jac))
            elif cos >= DUPLICATE_COSINE or jac >= DUPLICATE_WORDS or (paraphrase and not differ):
                dup_pairs.append((pair[0], pair[1], [*subject, *evidence]))
            elif not s.linked and (
                cos >= SUGGEST_MIN_COSINE or (s.words >= 2 and s.shared >= SUGGEST_MIN_SHARE and jac >= 0.2)
            ):
                out.append(_unlinked(g, a, b, evidence, cos + jac))
    out += _clusters(g, dup_pairs)
    return out


def _versions(g: Graph, a: str, b: str) -> bool:
    """Whether one of the two notes supersedes the other (they are versions, not rivals)."""
    return any(e.type == "supersedes" and e.dst in (a, b) for p in (a, b) for e in g.out.get(p, ()))


def _node(g: Graph, n: Note | str) -> ReviewNote:
    path = n if isinstance(n, str) else n.path
    node = g.nodes[path]
    day = dt.datetime.fromtimestamp(node.date, dt.UTC).date().isoformat() if node.date else None
    return ReviewNote(node.id, path, node.title, node.type, day)


def _key(kind: str, *ids: str) -> str:
    return f"{kind}:{'+'.join(sorted(ids))}"


def _q(text: str) -> str:
    return shlex.quote(text)


def _contradiction(g: Graph, a: Note, b: Note, evidence: list[str], score: float) -> ReviewItem:
    old, new = (_node(g, p) for p in sorted((a.path, b.path), key=lambda p: (g.nodes[p].date or 0.0, p)))
    key = _key("contradiction", old.id, new.id)
    return ReviewItem(
        key,
        "contradiction",
        f'"{new.title}" may contradict the older "{old.title}", and does not supersede it',
        [new, old],
        evidence,
        [
            f"mdmem supersede {_q(new.id)} {_q(old.id)}",
            f"mdmem link {_q(new.id)} {_q(old.id)} --type contradicts",
            f"mdmem dismiss {_q(key)}",
        ],
        score,
    )


def _unlinked(g: Graph, a: Note, b: Note, evidence: list[str], score: float) -> ReviewItem:
    na, nb = _node(g, a), _node(g, b)
    key = _key("unlinked", na.id, nb.id)
    return ReviewItem(
        key,
        "unlinked",
        f'"{na.title}" and "{nb.title}" are closely related but not linked',
        [na, nb],
        evidence,
        [f"mdmem link {_q(na.id)} {_q(nb.id)} --type related", f"mdmem dismiss {_q(key)}"],
        score,
    )


def _clusters(g: Graph, pairs: list[tuple[str, str, list[str]]]) -> list[ReviewItem]:
    """Duplicate pairs joined into clusters (a note like two others makes one cluster of three)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    why: dict[str, list[str]] = {}
    for a, b, evidence in pairs:
        parent[find(a)] = find(b)
        why.setdefault(a, evidence)
    groups: dict[str, list[str]] = {}
    for p in parent:
        groups.setdefault(find(p), []).append(p)
    out = []
    for members in groups.values():
        nodes = [_node(g, p) for p in sorted(members, key=lambda p: (g.nodes[p].date or 0.0, p))]
        keep, rest = nodes[-1], nodes[:-1]  # the newest stays, the older copies point to it
        key = _key("duplicate", *(n.id for n in nodes))
        evidence = [e for p in members for e in why.get(p, [])][:3]
        out.append(
            ReviewItem(
                key,
                "duplicate",
                f'{len(nodes)} notes say the same thing as "{keep.title}"',
                nodes[::-1],
                evidence,
                [
                    f"mdmem supersede {_q(keep.id)} " + " ".join(_q(n.id) for n in rest),
                    f"mdmem dismiss {_q(key)}",
                ],
                float(len(nodes)),
            )
        )
    return out


# -- old notes linked as current, stale handoffs ---------------------------------------------------------


def _old_targets(g: Graph, successors: dict[str, str], now: float) -> list[ReviewItem]:
    """Active notes that link to a superseded note or to a fact past its ``valid_until``."""
    today = dt.datetime.fromtimestamp(now, dt.UTC).date().isoformat()
    out = []
    for src, edges in g.out.items():
        node = g.nodes.get(src)
        if node is None or node.kind != "note" or not _current(node, today):
            continue
        for e in edges:
            dst = g.nodes.get(e.dst) if e.dst else None
            if dst is None or dst.kind != "note" or e.type in ("supersedes", "superseded_by") or e.dst == src:
                continue
            if e.dst in successors and successors[e.dst] != src:
                new = _node(g, successors[e.dst])
                key = _key("superseded_linked", node.id, dst.id)
                fix = (
                    f"edit {src}: point [[{e.target}]] to [[{new.title}]]"
                    if e.type == "mentions"
                    else f"mdmem unlink {_q(node.id)} {_q(dst.id)} && mdmem link {_q(node.id)} {_q(new.id)} "
                    f"--type {e.type}"
                )
                out.append(
                    ReviewItem(
                        key,
                        "superseded_linked",
                        f'"{node.title}" links to "{dst.title}", which "{new.title}" superseded',
                        [_node(g, src), _node(g, dst.key), new],
                        [f"{e.type} link to an archived version"],
                        [fix, f"mdmem dismiss {_q(key)}"],
                    )
                )
            elif dst.valid_until and dst.valid_until[:10] < today and dst.status == "active":
                key = _key("expired_linked", node.id, dst.id)
                out.append(
                    ReviewItem(
                        key,
                        "expired_linked",
                        f'"{node.title}" links to "{dst.title}", true only until {dst.valid_until[:10]}',
                        [_node(g, src), _node(g, dst.key)],
                        [f"{e.type} link; valid_until {dst.valid_until[:10]} has passed"],
                        [
                            f"mdmem unlink {_q(node.id)} {_q(dst.id)}",
                            f"mdmem set {_q(dst.id)} valid_until=   # if it is still true",
                            f"mdmem dismiss {_q(key)}",
                        ],
                    )
                )
    return out


def _current(node: Node, today: str) -> bool:
    return node.status == "active" and not (node.valid_until and node.valid_until[:10] < today)


def _stale_handoffs(g: Graph, newest: list[str], rows: dict[str, Any], now: float) -> list[ReviewItem]:
    """Active handoffs beyond the newest few and older than two weeks: a session will not start from them."""
    live = [p for p in newest if p in rows and rows[p]["status"] == "active" and p in g.nodes]
    out = []
    for p in live[KEEP_HANDOFFS:]:
        date = rows[p].get("date")
        if not date or (now - date) / 86400 < STALE_HANDOFF_DAYS:
            continue
        n = _node(g, p)
        key = _key("stale_handoff", n.id)
        out.append(
            ReviewItem(
                key,
                "stale_handoff",
                f'handoff "{n.title}" is {round((now - date) / 86400)} days old and still active',
                [n],
                [f"{len(live)} active handoffs; sessions start from the newest {KEEP_HANDOFFS}"],
                [f"mdmem forget {_q(n.id)}", f"mdmem dismiss {_q(key)}"],
                -date,
            )
        )
    return out


def _candidates(
    store: IndexStore,
    g: Graph,
    handoffs: list[str],
    rows: dict[str, Any],
    notes: list[str],
    read: dict[str, tuple[Note, set[str]]],
) -> list[ReviewItem]:
    """Decisions, preferences and facts the stop hook found in a session (the ``## Candidates`` of the
    newest active handoffs), each with its sentence and the command that saves it as a note. A
    candidate whose sentence one of ``notes`` (the newest active notes, no reports) holds is saved:
    it leaves the queue by itself, however the note was written (its ``add``, an agent's, an editor)."""
    from ..core.candidates import parse_section
    from ..core.text import shorten

    out = []
    live = [p for p in handoffs if p in rows and rows[p]["status"] == "active" and p in g.nodes]
    saved: list[str] | None = None  # the notes' text as compared, read once the first candidate needs it
    for p in live[:CANDIDATE_HANDOFFS]:
        try:
            body = store.files.read_note(p)[0].body
        except (MdmemError, OSError, ValueError):
            continue
        n = _node(g, p)
        for c in parse_section(body):
            if saved is None:
                saved = _texts(store, notes, read)
            said = _folded(c.text)
            if any(said in t for t in saved):
                continue
            key = f"candidate:{n.id}+{c.digest}"
            title = shorten(c.text, 80)
            out.append(
                ReviewItem(
                    key,
                    "candidate",
                    f'a {c.kind} said in the session of "{n.title}", not saved as a note',
                    [n],
                    [f"said: {c.text}"],
                    [
                        f"mdmem add --type {c.kind} --title {_q(title)} --body {_q(c.text)}",
                        f"mdmem dismiss {_q(key)}",
                    ],
                    g.nodes[p].date or 0.0,  # the newest session's first
                )
            )
    return out


def _texts(store: IndexStore, paths: list[str], read: dict[str, tuple[Note, set[str]]]) -> list[str]:
    """The notes' titles and bodies as ``_folded`` compares them (each read once in the pass)."""
    out = []
    for p in paths:
        if p not in read:
            try:
                n = store.files.read_note(p)[0]
            except (MdmemError, OSError, ValueError):
                continue
            read[p] = (n, set(terms(f"{n.title}\n{n.body}")))
        n = read[p][0]
        out.append(_folded(f"{n.title}\n{n.body}"))
    return out


def _folded(text: str) -> str:
    """Text as a saved candidate is recognised in a note: case and runs of white space do not count."""
    return " ".join(text.casefold().split())


# -- dismiss, supersede ------------------------------------------------------------------------------------

_HEADER = (
    '# Review items dismissed with "mdmem dismiss": "mdmem review" does not list them again.\n'
    "# One key a line (kind:note ids); delete a line to see that item again.\n"
)


def dismissed_keys(store: IndexStore) -> set[str]:
    """The keys in the vault's dismissals file (none when there is no file)."""
    path = store.root / DISMISSED_FILE
    if not path.is_file():
        return set()
    text = path.read_text(encoding="utf-8", errors="replace")
    return {line.strip()[2:].strip().strip("'\"") for line in text.splitlines() if line.strip().startswith("- ")}


def dismiss(store: IndexStore, keys: list[str], *, commit: bool | None = None) -> Dismissal:
    """Remember ``keys`` (from ``review``) as dismissed, in the vault's dismissals file, committed."""
    keys = [k.strip() for k in keys if k.strip()]
    bad = [k for k in keys if k.partition(":")[0] not in KINDS or not k.partition(":")[2]]
    if not keys or bad:
        what = f"{bad[0]!r} is not a review item key" if bad else "Name the item to dismiss"
        raise MdmemError(f'{what}; copy its key from "mdmem review" (e.g. contradiction:ID1+ID2). Nothing was written.')
    with store.writer_lock():
        had = dismissed_keys(store)
        new = [k for k in dict.fromkeys(keys) if k not in had]
        if new:
            path = store.root / DISMISSED_FILE
            old = path.read_text(encoding="utf-8") if path.is_file() else _HEADER + "dismissed:\n"
            text = old + ("" if old.endswith("\n") else "\n") + "".join(f"- {k!r}\n" for k in new)
            store.files.write(DISMISSED_FILE, text)
    sha = None
    if new and (store.config.git_commit if commit is None else commit):
        sha = store.commit([DISMISSED_FILE], f"mdmem: dismiss {len(new)} review item(s)")
    return Dismissal(new, [k for k in keys if k in had], DISMISSED_FILE, sha)


def supersede(store: IndexStore, new: str, olds: list[str], *, commit: bool | None = None) -> Superseded:
    """``new`` replaces each of ``olds``: it records ``supersedes`` (the key, or a typed link when the key
    is taken) and each old note is archived pointing to it; their texts stay. One commit."""
    from .lifecycle import update_note
    from .linking import link

    if not olds:
        raise MdmemError("Name the note NEW replaces: mdmem supersede NEW OLD.")
    from dataclasses import replace

    succ = store.get(new)
    changes: list[Change] = []
    titles = []
    for ref in olds:
        old = store.get(ref)
        titles.append(f'"{old.title}"')
        if old.path == succ.path:
            raise MdmemError("A note cannot supersede itself; name two different notes.")
        if succ.supersedes is None and not changes:
            changes.append(update_note(store, succ.path, {"supersedes": old.id}, "supersede", commit=False))
        else:
            changes.append(link(store, succ.path, old.path, "supersedes", commit=False))
        changes.append(
            update_note(store, old.path, {"status": "archived", "superseded_by": succ.id}, "supersede", commit=False)
        )
    paths = list(dict.fromkeys(c.path for c in changes if c.changed))
    sha = None
    if paths and (store.config.git_commit if commit is None else commit):
        sha = store.commit(paths, f'mdmem: "{succ.title}" supersedes {", ".join(titles)}')
    return Superseded(succ.id, succ.path, succ.title, [replace(c, commit=sha) for c in changes], sha)
