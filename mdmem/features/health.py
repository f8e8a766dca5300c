"""Vault health: ``status`` (counts, freshness, vectors, git) and ``doctor`` (every problem with file,
field and fix), and the newest handoffs an agent session starts from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..adapters.files import content_hash
from ..core.errors import MdmemError
from ..core.note import Problem
from ..results.reports import DoctorReport, GitInfo, IndexInfo, Pending, ServeInfo, VaultStatus, VectorStatus

if TYPE_CHECKING:
    from ..index.semantic import Semantic
    from ..index.store import IndexStore


def status(store: IndexStore, sem: Semantic, served: dict[str, Any] | None = None) -> VaultStatus:
    """Counts, index freshness, vector coverage, git state (``served``: a running server's info)."""
    from ..adapters.git import find_git_dir, hooks_installed
    from .sync import conflicts as sync_conflicts
    from .sync import file_conflicts

    with store.reading(notice=False) as idx:  # status reports what the index lacks; reads catch up
        # doctor first (the same count as doctor's), in this read: a rebuild it has done is what the rest reads
        report = doctor(store, notice=False)
        problems = report.problems
        others: list[str] = []  # the files that are not notes (attachments …): their conflict copies too
        disk = store.files.scan(attachments=others)
        stamps = idx.stamps()
        new = [p for p in disk if p not in stamps]
        deleted = [p for p in stamps if p not in disk]
        maybe = [p for p, st in disk.items() if p in stamps and stamps[p] != (st.st_mtime_ns, st.st_size)]
        known = idx.hashes(maybe)
        changed = [p for p in maybe if content_hash(store.files.safe_path(p).read_bytes()) != known.get(p)]
        head = store.head()
        last = idx.meta("last_commit")
        manifest = store.state.manifest() or {}
        job = store.state.job_request()
        catching_up = (
            None
            if job is None
            else (
                str(job.get("why") or "git") if store.state.job_active() else "interrupted; the next search finishes it"
            )
        )
        conflicts = {c.copy: c.note for c in sync_conflicts(store, disk) if c.copy} | file_conflicts(others)
        try:
            done, total = sem.coverage(notice=False)
            failure = getattr(sem.embedder, "export_failure", None)
            pack = sem.pack_report()
            vectors = VectorStatus(
                sem.embedder.name,
                done,
                total,
                done >= total,
                # A request mark left behind (a killed job) says nothing once every chunk has its vector.
                embedding=sem.embedding() if done < total else None,
                running=sem.running_embed(),
                note=failure() if failure else None,
                from_pack=pack["from_pack"],
                unchecked=pack["unchecked"],
            )
        except MdmemError as exc:
            vectors = VectorStatus(error=str(exc))
        return VaultStatus(
            vault=str(store.root),
            notes=idx.count(),
            types=idx.counts_by("type"),
            statuses=idx.counts_by("status"),
            problems=len(problems),
            notes_with_problems=len({p.path for p in problems if is_note_problem(p)}),
            index=IndexInfo(
                manifest.get("engine"),
                manifest.get("schema"),
                manifest.get("generation"),
                idx.meta("indexed_at"),
                store.state.size_bytes(),
            ),
            vectors=vectors,
            serve=ServeInfo(served["pid"], served["port"]) if served else None,
            pending=Pending(sorted(new), sorted(changed), sorted(deleted)),
            fresh=not (new or changed or deleted) and (head is None or head == last),
            git=GitInfo(find_git_dir(store.root) is not None, head, last, hooks_installed(store.root)),
            catching_up=catching_up,
            conflicts=conflicts,
            vault_problems=sum(not is_note_problem(p) for p in problems),
            unwritten_links=report.links_unwritten,
        )


def is_note_problem(p: Problem) -> bool:
    """A problem in a note's file, not in the vault's set-up (missing git hooks, .gitignore)."""
    return p.path.endswith(".md")


def doctor(store: IndexStore, *, notice: bool = True) -> DoctorReport:
    """Every problem with the vault: broken notes (file, field, fix) and vault setup (``notice``:
    catch up with what no hook reported first, as reads do; status does not)."""
    from ..adapters.git import HOOK_NAMES, find_git_dir, hooks_installed
    from .graph_view import dangling  # the graph: loaded only when a report is asked for
    from .people import identity_problems
    from .sync import conflict_problems

    with store.reading(notice=notice) as idx:
        out = idx.problems()
        missing, unwritten = dangling(store, notice=notice)
        out += missing
        out += identity_problems(store, notice=notice)
        out += conflict_problems(store)
        for tmp, target in store.files.unfinished_writes():
            out.append(
                Problem(
                    tmp,
                    "file",
                    f"unfinished write of {target}: mdmem was stopped before the note "
                    "reached its place; this hidden file holds the text it was writing",
                    f"to keep it, rename it to {target} (or another .md name); else delete it",
                )
            )
        if find_git_dir(store.root) is not None:
            installed = hooks_installed(store.root)
            if len(installed) < len(HOOK_NAMES):
                out.append(
                    Problem(
                        ".git/hooks",
                        "hooks",
                        "git hooks not installed; the index goes stale after commits",
                        "run: mdmem hooks install",
                    )
                )
        if find_git_dir(store.root) is not None:
            out += _tracked_state(store)
        gi = store.root / ".gitignore"
        if find_git_dir(store.root) is not None and (not gi.exists() or ".mdmem" not in gi.read_text(errors="replace")):
            out.append(
                Problem(
                    ".gitignore",
                    ".mdmem/",
                    ".mdmem/ is not in .gitignore (an inner .gitignore keeps it out for now)",
                    "add a line '.mdmem/' to .gitignore",
                )
            )
        out += _pack_problems(store)
        return DoctorReport(out, unwritten)


def _pack_problems(store: IndexStore) -> list[Problem]:
    """A fetched vector pack that disagreed with the local model: who made it, and why it was refused."""
    try:
        remotes = store.semantic.pack_report()["remotes"]
    except (MdmemError, OSError):
        return []
    return [
        Problem(
            f"refs/mdmem/remotes/{remote}/vectors",
            "vector pack",
            f"the vector pack of {remote} (commit {str(mark.get('commit'))[:12]}, "
            f"by {mark.get('author') or 'unknown'}) "
            f"was refused: {mark.get('reason')}; its vectors were not used, the chunks are embedded here",
            "ask its author to re-embed (mdmem embed, then mdmem sync); a pack that does not come from "
            "mdmem with the same model is altered: check who can push to that remote",
        )
        for remote, mark in sorted(remotes.items())
        if mark.get("trusted") is False
    ]


def _tracked_state(store: IndexStore) -> list[Problem]:
    """A ``.mdmem/`` that git tracks (someone force-added the index or its marks): mdmem trusts none of it
    (the index is sealed with this user's key, links there are removed, small files are read only when
    plain), but every clone gets those files, so it is reported with the way to untrack them."""
    from ..adapters.git import tracked_files
    from ..index.state import STATE_DIR

    tracked = tracked_files(store.root, [STATE_DIR])
    if not tracked:
        return []
    return [
        Problem(
            f"{STATE_DIR}/",
            "git",
            f"{len(tracked)} file(s) in {STATE_DIR}/ are tracked by git ({tracked[0]}"
            + (", …" if len(tracked) > 1 else "")
            + "); mdmem ignores what they say, but every clone gets them",
            f'untrack them: git rm -r -q --cached {STATE_DIR} && git commit -m "Untrack {STATE_DIR}/"',
        )
    ]


def latest_handoffs(store: IndexStore, scope: str | None, limit: int = 3) -> list[dict[str, Any]]:
    """The newest visible handoff notes (catalogue rows), those of ``scope`` first when it has any."""
    filters = store.filters()
    with store.reading() as idx:
        rows = idx.rows(idx.newest_paths("handoff", 50))
    handoffs = sorted(
        (r for r in rows.values() if filters.matches(r)), key=lambda r: (-(r.get("date") or 0.0), r["path"])
    )
    mine = [r for r in handoffs if scope and r.get("scope") == scope] or handoffs
    return mine[:limit]
