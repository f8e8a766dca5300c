"""CLI text: what each command prints in text mode (stdout, stderr, exit code) for its result."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import cli_graph  # noqa: F401  (registers the graph answers)
from .cli_base import CLI_TABLE, Output, Printer
from .lines import (
    bold,
    commit_suffix,
    fields_text,
    highlight,
    hints_line,
    language_line,
    local_time,
    nothing_relevant,
    revision_line,
    shell_path,
    similar_detail,
    skipped_line,
    unmentioned_line,
    warning_lines,
)

if TYPE_CHECKING:
    from ..results.changes import AddReport, Change, Correction, History, NoteAt, NoteDiff, SweepReport
    from ..results.indexing import EmbedReport, ReindexReport
    from ..results.notes import NoteDoc, NoteText
    from ..results.reports import (
        DoctorReport,
        ExportReport,
        FileChange,
        ImportReport,
        InitReport,
        SetupReport,
        VaultStatus,
        VaultStatuses,
    )
    from ..results.review import Dismissal, ReviewQueue, Superseded
    from ..results.search import Hits, MemoryContext, Profile, SimilarNotes
    from ..results.sync import Resolution, SyncReport
    from ..results.vaults import VaultChange, VaultList


_cli = CLI_TABLE


def cli(result: Any, **options: Any) -> Output:
    """What a CLI command prints in text mode for ``result``; ``options`` are the command's (color, explain, …).
    An answer's warnings follow on stderr, one line each."""
    p = Printer()
    code = _cli(result, p, **options)
    p(warning_lines(getattr(result, "warnings", ())), err=True, nl=False)
    return p.done(code or 0)


# -- retrieval and notes ---------------------------------------------------------------------------------


@_cli.register
def _hits(hits: Hits, p: Printer, *, color: bool = False, explain: bool = False) -> None:
    info = hits.info
    if explain and "intent" in info:
        p(f"intent: {info.get('intent')}  route: {info.get('route')}")
        if win := info.get("window"):
            p(f'window: {win.get("from") or "…"} – {win.get("to") or "…"} ("{win.get("phrase")}", {win.get("source")})')
        if info.get("topics"):
            p(f"plan: {info.get('plan')} over " + " | ".join(f'"{t["query"]}"' for t in info["topics"]))
    cov = info.get("coverage")
    if cov and not cov.get("complete"):
        finish = (
            "The rest are being embedded in the background."
            if cov.get("embedding") == "in the background"
            else 'Run "mdmem embed" to finish.'
        )
        unseen = (
            f" (the vector leg abstained on {cov['candidates_not_embedded']} of {cov['candidates']} BM25 "
            "matches it has not read)"
            if cov.get("candidates_not_embedded")
            else ""
        )
        p(
            f"note: only {cov['chunks_with_vectors']}/{cov['chunks']} chunks have vectors{unseen}; "
            f"results lean on BM25. {finish}",
            err=True,
        )
    for s in info.get("skipped") or ():
        p(skipped_line(s), err=True)
    if info.get("language"):
        p(language_line(info), err=True)
    if not hits:
        p("No notes pass these filters." if "listed" in info else f"No notes match {hits.query!r}.", err=True)
        return
    if info.get("relevant") is False:
        p(nothing_relevant(info))
        if not explain:
            return
        p("closest anyway:")
    elif info.get("unknown"):
        p(unmentioned_line(info))
    for i, h in enumerate(hits, 1):
        where = f"{h.vault}:{h.path}" if h.vault else h.path
        rank = f"{(h.date or 'undated')[:10]}" if "listed" in info else f"score {h.score:.4g}"
        p(f"{i:>2}. {bold(h.title, color)}  [{h.type}]  {where}  {rank}")
        if h.snippet:
            p(f"    {highlight(h.snippet, color)}")
        p(f"    id: {h.id}")
        if h.links:
            p("    links: " + hints_line(h.links, short=True))
        if explain and h.explain:
            p("    explain: " + ", ".join(f"{k}={v}" for k, v in h.explain.items() if not isinstance(v, dict)))
            for k, v in h.explain.items():  # the relevance model's features and their log-odds, a line each
                if isinstance(v, dict):
                    p(f"    {k}: " + ", ".join(f"{n}={x}" for n, x in v.items()))
    if explain and info.get("stages"):
        p("pipeline: " + " → ".join(info["stages"]) + (" (served)" if info.get("served") else ""))


@_cli.register
def _note(note: NoteDoc, p: Printer) -> None:
    for key, value in note.to_dict().items():
        if key != "body" and value not in (None, [], ""):
            p(f"{key}: {value}")


@_cli.register
def _note_text(note: NoteText, p: Printer, *, meta: bool = False) -> None:
    if meta:
        _note(note.note, p)
    else:
        p(note.text, nl=False)


@_cli.register
def _context(ctx: MemoryContext, p: Printer) -> None:
    for s in ctx.skipped or ():
        p(skipped_line(s), err=True)
    p(ctx.text, nl=False)


# -- writing and lifecycle -------------------------------------------------------------------------------


@_cli.register
def _add(r: AddReport, p: Printer) -> None:
    if r.updated is not None:
        u = r.updated
        if u.changed:
            p(f"UPDATE: {r.check.reason}; it took the new text: {u.path}  (id {u.id})" + commit_suffix(u.commit))
        else:
            p(f"UPDATE: {u.path} (id {u.id}) holds this text already; nothing written.")
        p('(a new note instead: "mdmem add --force …")', err=True)
    elif r.added is None:
        m = r.check.matches[0]
        p(f"{r.check.decision}: not written — {r.check.reason}. Existing: {m.path} (id {m.id})")
        return
    else:
        p(f"added {r.added.path}  (id {r.added.id})" + commit_suffix(r.added.commit))
    for m in r.check.contradicts:
        new = r.added.id if r.added else "NEW"
        p(f"may contradict {m.path} ({m.title}, id {m.id}): {'; '.join(m.evidence)}")
        p(f"  if the new note replaces it: mdmem supersede {shell_path(new)} {shell_path(m.id)}")
    if r.suggested_links:
        p("maybe link it (pick the --type that fits: caused_by, depends_on, led_to, …):")
        for sg in r.suggested_links:
            p(f"  {sg.command}    # {sg.title}")


@_cli.register
def _correct(c: Correction, p: Printer) -> None:
    p(f"corrected {c.old.path} → {c.new.path} (id {c.new.id}); the old note is archived" + commit_suffix(c.old.commit))


@_cli.register
def _change(c: Change, p: Printer) -> None:
    if c.action in ("link", "unlink"):
        _link_change(c, p)
    elif not c.changed:
        p(f"{c.path}: already so, nothing to do.")
    elif c.action == "identity":
        f = c.fields
        said = (
            "new person note"
            if f.get("created")
            else ", ".join([*(f"+{x}" for x in f.get("added", [])), *(f"-{x}" for x in f.get("removed", []))])
        )
        p(f"identities of {c.title} ({c.path}): {said}; now {', '.join(f['identities'])}" + commit_suffix(c.commit))
    else:
        p(f"{c.action}: {c.path}  ({fields_text(c.fields)})" + commit_suffix(c.commit))


def _link_change(c: Change, p: Printer) -> None:
    f = c.fields
    to = f.get("to") or {}
    if not c.changed:
        if c.action == "link":
            p(f"{c.path} already links to {to.get('title', '?')}; nothing to do.")
        else:
            p(f'{c.path} has no frontmatter link to that note; nothing to do (see "mdmem links {c.id}").')
    elif c.action == "link" and "links" not in f:  # an entity: the note is about it
        p(f"linked {c.path} -about-> entity {to.get('title')} (entities){commit_suffix(c.commit)}")
    elif c.action == "link":
        entry = f["links"]
        what = "entity " if to.get("kind") == "entity" else ""
        p(f"linked {c.path} -{entry['type']}-> {what}{to.get('title')} ({entry['to']}){commit_suffix(c.commit)}")
    else:
        n = f["removed"]
        p(
            f"unlinked {c.path} from {to.get('title')} ({n} entr{'y' if n == 1 else 'ies'} removed)"
            + commit_suffix(c.commit)
        )
        if f.get("body_mentions_left"):
            p("note: the body still mentions it; edit the text to remove that link too.")


@_cli.register
def _history(h: History, p: Printer) -> None:
    for v in h.versions:
        p(f"{'*' if v.current else ' '} {v.id}  {v.title}  [{v.status}]  {v.path}")
        for c in v.git_log:
            p(f"      {c.commit[:8]} {local_time(c.date)} {c.subject}")
            if c.diff is not None:
                p("".join(f"        {line}" for line in c.diff.splitlines(keepends=True)), nl=False)
        if v.truncated:
            p(f"      … the newest {len(v.git_log)} of {v.commits} commits; --all shows every one")


@_cli.register
def _note_diff(d: NoteDiff, p: Printer) -> None:
    p(
        f"{d.path}: {revision_line(d.old, local=True)} → {revision_line(d.new, 'the file', local=True)}  "
        f"(+{d.added} -{d.removed})",
        err=True,
    )
    if d.diff:
        p(d.diff, nl=False)
    else:
        p("no change", err=True)


@_cli.register
def _note_at(n: NoteAt, p: Printer) -> None:
    p(f"{n.revision.path} at {revision_line(n.revision, local=True)}", err=True)
    p(n.text, nl=False)


@_cli.register
def _similar(a: SimilarNotes, p: Printer) -> None:
    p(f"like {a.title} ({a.path})" + ("" if a.vectors else ", by words alone (no vectors for it yet)") + ":")
    for i, n in enumerate(a.results, 1):
        p(f"{i:>2}. {n.title}  [{n.type}]  {n.path}  {similar_detail(n)}")
    if not a.results:
        p("nothing similar")


@_cli.register
def _profile(pr: Profile, p: Printer) -> None:
    p(pr.text or "Nothing yet: pin standing rules, add preferences and decisions, and they show here.\n", nl=False)
    if pr.omitted:
        p(f"({pr.omitted} more did not fit {pr.budget} tokens; --budget N)", err=True)


@_cli.register
def _sweep(r: SweepReport, p: Printer) -> None:
    for n in r.notes:
        p(
            f"{'archived' if r.applied else 'would archive'}: {n.path}  [{n.type}, salience {n.salience}, "
            f"{n.age_days} days]"
        )
    if not r.notes:
        p("Nothing to sweep.")
    elif not r.applied:
        p(f"\n{len(r.notes)} note(s). Run with --apply to archive them.")


@_cli.register
def _review(r: ReviewQueue, p: Printer) -> None:
    for i, it in enumerate(r.items, 1):
        p(f"{i}. {it.kind}: {it.summary}")
        p("   notes: " + "; ".join(f"{n.title} ({n.id}, {n.type}{', ' + n.date if n.date else ''})" for n in it.notes))
        if it.evidence:
            p("   why: " + "; ".join(it.evidence))
        p("   settle: " + "\n           ".join(it.commands))
    more = r.total - len(r.items)
    dismissed = f"{r.dismissed} dismissed (in {r.dismissals})" if r.dismissed else ""
    if not r.items:
        p("Nothing to review." + (f" {dismissed}." if dismissed else ""))
    elif more or dismissed:
        tail = [f"{more} more (-n {r.total})" if more else "", dismissed]
        p("(" + "; ".join(t for t in tail if t) + ")", err=True)


@_cli.register
def _dismissal(r: Dismissal, p: Printer) -> None:
    if r.keys:
        p(f"dismissed {len(r.keys)} item(s) in {r.path}" + commit_suffix(r.commit))
    if r.already:
        p(f"already dismissed: {', '.join(r.already)}")


@_cli.register
def _superseded(r: Superseded, p: Printer) -> None:
    olds = [c.path for c in r.changes if c.path != r.path]
    if not any(c.changed for c in r.changes):
        p(f"{r.path} already supersedes {', '.join(olds)}; nothing to do.")
        return
    p(f"{r.path} supersedes {', '.join(olds)} (archived, pointing to it)" + commit_suffix(r.commit))


# -- vault reports ---------------------------------------------------------------------------------------


@_cli.register
def _vault_list(r: VaultList, p: Printer) -> None:
    if not r.vaults:
        p(f"No named vaults yet ({r.config}). Add one: mdmem vaults add NAME PATH [--default]")
        return
    width = max(len(v.name) for v in r.vaults)
    for v in r.vaults:
        mark = "  (personal)" if v.personal else ""
        p(f"{'*' if v.default else ' '} {v.name:<{width}}  {v.path}  {v.status}{mark}")
    p(f"({'* default; ' if any(v.default for v in r.vaults) else ''}{r.config})", err=True)


@_cli.register
def _vault_change(r: VaultChange, p: Printer) -> None:
    v = r.vault
    if r.action == "removed":
        p(f"Removed {v.name!r} ({v.path}) from {r.config}; its files are untouched.")
        return
    if r.action == "unset":
        p(f"No personal vault now ({v.name!r} stays registered); the prompt hook searches the project's vault only.")
        return
    what = {"added": "Added", "personal": "Personal vault (the prompt hook searches it too):"}.get(
        r.action, "Default vault:"
    )
    p(f"{what} {v.name!r} → {v.path}" + (" (default)" if v.default and r.action == "added" else ""))
    if v.status != "ok":
        p(f'{v.status}: run "mdmem init {shell_path(v.path)}" to make it a vault', err=True)


def _duration(seconds: float) -> str:
    """'40 s', '12 min', '2.5 h'."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{round(seconds / 60)} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


@_cli.register
def _statuses(s: VaultStatuses, p: Printer) -> None:
    for i, (name, one) in enumerate(s.vaults.items()):
        p(("\n" if i else "") + f"== {name} ==")
        _status(one, p)
    for skip in s.skipped:
        p(skipped_line(skip), err=True)


@_cli.register
def _status(s: VaultStatus, p: Printer) -> None:
    p(f"vault     {s.vault}")
    types = ", ".join(f"{k} {v}" for k, v in s.types.items())
    p(f"notes     {s.notes}" + (f"  ({types})" if types else ""))
    idx = s.index
    p(
        f"index     {idx.engine}, schema {idx.schema}, {idx.size_bytes / 1e6:.1f} MB, "
        f"updated {local_time(idx.indexed_at, minutes=True)}"
    )
    vec = s.vectors
    if vec.error is not None:
        p(f"vectors   unavailable: {vec.error}")
    else:
        todo = (
            ""
            if vec.complete
            else " — the rest are being embedded in the background"
            if vec.embedding == "in the background"
            else ' — the background embedding stopped; the next write resumes it, or run "mdmem embed"'
            if vec.embedding
            else ' — run "mdmem embed" (or "mdmem serve") to finish'
        )
        run = vec.running
        if run:
            pct = 100 * run["done"] // max(1, run["total"])
            took = max(0.0, run["updated"] - run["started"])
            rate = run["done"] / took if took > 0 else 0.0
            left = f", ~{_duration((run['total'] - run['done']) / rate)} left" if rate > 0 else ""
            todo = (
                f" — embedding now: {run['done']}/{run['total']} "
                f"{'chunks' if run.get('job') else 'new chunks'} ({pct}%, {rate:.1f} chunks/s{left}, "
                f"pid {run['pid']}, {int(took)} s so far)"
            )
        p(f"vectors   {vec.chunks_with_vectors}/{vec.chunks} chunks embedded ({vec.model}){todo}")
        if vec.note:
            p(f"          {vec.note}")
        if vec.from_pack:
            checking = f", {vec.unchecked} still being checked in the background" if vec.unchecked else ""
            p(f"          {vec.from_pack} came from a fetched vector pack{checking}")
    if s.serve:
        p(f"serve     running on 127.0.0.1:{s.serve.port} (pid {s.serve.pid})")
    if s.catching_up:
        p(f"freshness catching up in the background ({s.catching_up}); searches say so until it is done")
    elif s.fresh:
        p("freshness up to date")
    else:
        n = len(s.pending.new) + len(s.pending.changed) + len(s.pending.deleted)
        detail = f"{n} file change(s) not indexed" if n else "HEAD moved since the last index"
        p(f'freshness STALE: {detail} — run "mdmem reindex"')
    g = s.git
    if g.repository:
        hooks = "installed" if g.hooks else 'NOT installed (run "mdmem hooks install")'
        p(
            f"git       HEAD {(g.head or 'none')[:10]}, last indexed {(g.last_indexed_commit or 'none')[:10]}, "
            f"hooks {hooks}"
        )
    else:
        p("git       not a git repository")
    for copy, note in s.conflicts.items():
        p(
            f"conflict  {note}: another version in {copy} — run "
            f'"mdmem resolve {shell_path(note)} --ours|--theirs|--both"'
        )
    if s.problems:
        where = [f"{s.problems - s.vault_problems} in {s.notes_with_problems} note(s)"] if s.notes_with_problems else []
        where += [f"{s.vault_problems} in the vault's set-up"] if s.vault_problems else []
        p(f'problems  {", ".join(where)} — run "mdmem doctor"')
    if s.unwritten_links:
        p(f"planned   {unwritten_phrase(s.unwritten_links)}")


@_cli.register
def _doctor(r: DoctorReport, p: Printer, *, show_all: bool = False) -> int:
    if not r.problems:
        p("No problems found.")
        _unwritten(r, p, show_all)
        return 0
    kinds = r.kinds(examples=len(r.problems) if show_all else 3)
    for k in kinds:
        p(f"{k.kind}: {k.count} in {k.files} file(s)")
        for pr in k.examples:
            p(f"  {pr.path}: {pr.field}: {pr.message}")
            if pr.fix:
                p(f"      fix: {pr.fix}")
        if k.count > len(k.examples):
            p(f"  … and {k.count - len(k.examples)} more")
        p("")
    more = "" if show_all or all(k.count <= len(k.examples) for k in kinds) else " (all of them: mdmem doctor --all)"
    p(
        f"{len(r.problems)} problem(s) of {len(kinds)} kind(s){more}. Notes with problems are still indexed "
        "with defaults."
    )
    _unwritten(r, p, show_all)
    return 1


def _unwritten(r: DoctorReport, p: Printer, show_all: bool, examples: int = 3) -> None:
    """The links to notes not written yet, apart from the problems: a count and the first few."""
    if not r.unwritten:
        return
    files = len({u.path for u in r.unwritten})
    shown = r.unwritten if show_all else r.unwritten[:examples]
    p("")
    p(f"{unwritten_phrase(r.links_unwritten)} (in {files} note(s); no problem: create them when you write them):")
    for u in shown:
        times = f" ({u.links} links)" if u.links > 1 else ""
        p(f"  {u.path}: {u.field}: [[{u.target}]]{times}")
    if len(r.unwritten) > len(shown):
        p(f"  … and {len(r.unwritten) - len(shown)} more (all of them: mdmem doctor --all)")


def unwritten_phrase(n: int) -> str:
    """ "N link(s) to notes not written yet"."""
    return f"{n} link{'' if n == 1 else 's'} to notes not written yet"


@_cli.register
def _reindex(r: ReindexReport, p: Printer, *, quiet: bool = False) -> None:
    if quiet and not r.problems:
        return
    why = f" ({r.reason})" if r.reason and r.reason != "requested" else ""
    p(
        f"{'Rebuilt' if r.full else 'Updated'} index{why}: {len(r.added)} added, {len(r.updated)} updated, "
        f"{len(r.deleted)} deleted, {r.unchanged} unchanged in {r.seconds:.2f}s."
    )
    if r.problems:
        files = len({pr.path for pr in r.problems})
        p(
            f'{len(r.problems)} problem(s) in {files} note(s) (indexed anyway): run "mdmem doctor" for details.',
            err=True,
        )


@_cli.register
def _embed(r: EmbedReport, p: Printer) -> None:
    p(
        f"Embedded {r.embedded} chunk(s), reused {r.reused} from the cache"
        + (f" ({r.from_pack} from the vector pack)" if r.from_pack else "")
        + f", removed {r.removed}; {r.done}/{r.total} "
        f"chunks have vectors ({r.seconds:.1f}s, model {r.model}"
        + (f", {r.runtime}, {r.threads} thread(s)" if r.runtime else "")
        + ")."
    )


@_cli.register
def _init(r: InitReport, p: Printer) -> None:
    for line in r.messages:
        p(line)
    p(f'\nNext: mdmem --vault {shell_path(r.vault)} search "WORDS"')


@_cli.register
def _import(r: ImportReport, p: Printer) -> int:
    if r.adopted is not None:
        for line in r.adopted.messages:
            p(line)
    elif r.kind == "obsidian":
        p(f"Would adopt the Obsidian vault {r.source} in place (no file rewritten).")
    else:
        p(
            f"{'would import' if r.dry_run else 'imported'} {len(r.written)} new note(s), updated {len(r.updated)}, "
            f"skipped {r.skipped} already in the vault, from {r.source}"
            + (f"; redacted {r.redacted} secret(s)" if r.redacted else "")
            + (f"; commit {r.commit[:8]}" if r.commit else "")
            + "."
        )
        if r.attachment:
            p(f"the original is kept as {r.attachment}" + (f"; parts found by {r.split}" if r.split else "") + ".")
        for path in r.forgotten:
            p(f"forgotten (no longer in the book): {path}")
        for path in r.kept:
            p(f"kept as you edited it (not updated): {path}")
        if r.dropped:
            p(f"not kept (no note holds it): {'; '.join(r.dropped)}.")
    for err in r.errors:
        p(f"error: {err}", err=True)
    return 1 if r.errors else 0


def file_change_lines(c: FileChange) -> list[str]:
    """What setup did to one settings file: one line, then one per thing it skipped."""
    parts = [
        f"{verb} {', '.join(items)}"
        for verb, items in (("added", c.added), ("updated", c.updated), ("removed", c.removed))
        if items
    ]
    state = "; ".join(parts) if parts else "already set up"
    return [
        f"{c.path}: {state}" + ("" if c.written or not c.changed else " (not written)"),
        *(f"  skipped: {s}" for s in c.skipped),
    ]


@_cli.register
def _setup(r: SetupReport, p: Printer, *, remove: bool = False) -> None:
    for c in r.files:
        for line in file_change_lines(c):
            p(line)
    if not remove and not r.dry_run:
        p("Restart Claude Code (or run /hooks and /mcp in it) to pick up the changes.")


@_cli.register
def _export(r: ExportReport, p: Printer) -> None:
    p(f"wrote {r.output} ({r.format})", err=True)


def _lines(result: Any, p: Printer) -> None:
    """refs, cites, person: their lines (``refs_text``) as they are."""
    from .refs_text import cites_lines, person_lines, refs_lines

    if type(result).__name__ == "PersonAnswer":
        lines = person_lines(result, local=True)  # her timeline in this machine's time zone
    else:
        table: dict[str, Callable[[Any], list[str]]] = {"RefsAnswer": refs_lines, "CitesAnswer": cites_lines}
        lines = table[type(result).__name__](result)
    for line in lines:
        p(line)


_cli.register_for(_lines, "RefsAnswer", "CitesAnswer", "PersonAnswer")


# -- sync ------------------------------------------------------------------------------------------


@_cli.register
def _sync(r: SyncReport, p: Printer) -> None:
    if r.committed:
        p(f"committed {len(r.committed)} edited note(s) first")
    if r.staged_elsewhere:
        p(f"left staged, not committed (not the vault's notes): {', '.join(r.staged_elsewhere)}")
    moved = f"fetched {r.fetched} commit(s) from {r.upstream}" if r.fetched else f"{r.upstream}: nothing new"
    p(
        moved
        + (f", pushed {r.pushed}" if r.pushed else ", nothing to push")
        + (f" ({r.retries} push(es) retried: the remote moved meanwhile)" if r.retries else "")
    )
    if r.notes_changed:
        p(f"notes changed here: {len(r.notes_changed)}; index: {r.index}")
    if r.vectors:
        p(r.vectors)
    for note in r.merged_notes:
        p(f"merged    {note} (both sides changed it; the changes did not overlap)")
    for c in r.conflicts:
        p(f"{'CONFLICT' if c.copy else 'kept':<9} {c.note} ({c.kind}): {c.detail}")
        if c.copy:
            p(
                f'          other version: {c.copy} — settle with "mdmem resolve {shell_path(c.note)} '
                '--ours|--theirs|--both"'
            )


@_cli.register
def _resolution(r: Resolution, p: Printer) -> None:
    if not r.resolved:
        p(f"{r.note} has no sync conflict; nothing to resolve.")
        return
    kept = {"ours": "this machine's text", "theirs": "the other version's text", "both": "both texts"}[r.side]
    p(f"resolved {r.note}: kept {kept}; removed {', '.join(r.copies)}" + commit_suffix(r.commit))
