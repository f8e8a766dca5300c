"""``mdmem init``: make a vault from the template, or adopt a folder of notes as it is."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..adapters.config import CONFIG_FILE, Config
from ..adapters.files import is_hidden
from ..core.errors import MdmemError
from ..results.reports import InitReport

GITIGNORE_LINE = ".mdmem/"


def template_dir() -> Path:
    """The vault template: inside the installed package, or at the top of a source checkout."""
    here = Path(__file__).resolve().parents[1]  # the mdmem package
    for candidate in (here / "vault_template", here.parent / "vault_template"):
        if candidate.is_dir():
            return candidate
    raise MdmemError("The vault template is missing from this installation; reinstall mdmem.")


def init_vault(path: Path, *, use_git: bool = True, commit: bool = True) -> InitReport:
    """Create or adopt a vault at ``path``. Never overwrites an existing file (``.gitignore`` is
    appended to); in git, commits the files it made in one commit of their own unless ``commit`` is
    False, and never commits anything else."""
    from ..adapters import git
    from ..api.vault import Vault

    root = path.expanduser().resolve()
    if root.exists() and not root.is_dir():
        raise MdmemError(f"{root} is a file; give a folder.")
    root.mkdir(parents=True, exist_ok=True)
    has_notes = any(not any(part.startswith(".") for part in p.relative_to(root).parts) for p in root.rglob("*.md"))
    created_repo = git.init_repo(root) if use_git else False
    in_git = git.find_git_dir(root) is not None
    # A .gitignore with changes of the user's own is appended to but not committed: the commit
    # would carry their changes too.
    theirs = [".gitignore"] if in_git and (root / ".gitignore").exists() and git.has_changes(root, ".gitignore") else []
    created: list[str] = []
    template = template_dir()
    for src in sorted(template.rglob("*")):
        rel = src.relative_to(template)
        if src.is_dir() or "__pycache__" in rel.parts or src.name == "__init__.py":
            continue
        if has_notes and rel.as_posix() not in (CONFIG_FILE,):
            continue  # adopting: add settings only, leave the user's folder as it is
        dest = root / rel
        if rel.as_posix() == "gitignore":
            continue  # handled below (a file named .gitignore does not survive packaging)
        if dest.exists():
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        created.append(rel.as_posix())
    appended = _ensure_gitignore(root, created)
    done = [f"created {', '.join(created)}"] if created else []
    done += [f"appended {GITIGNORE_LINE} to {', '.join(appended)}"] if appended else []
    messages = [
        ("Adopted" if has_notes else "Created") + f" vault at {root}" + (f" ({'; '.join(done)})" if done else "")
    ]
    if created_repo:
        messages.append(f"Initialised a git repository in {root}.")
    if use_git:
        messages += git.install_hooks(root)
        messages += _vector_pack(root)  # before the first index: its vectors then come from the pack
    vault = Vault.open(root)
    report = vault.reindex()
    ours = created + appended
    sha = None
    if in_git and ours:
        to_commit = [p for p in ours if p not in theirs]
        if commit and use_git and to_commit:
            committed = vault.commit(
                to_commit,
                "mdmem: new vault from template"
                if not has_notes
                else f"mdmem: adopt this folder as a vault ({', '.join(to_commit)})",
            )
            sha = committed.commit
            messages += [f"warning: {w}" for w in committed.warnings]
        if sha:
            messages.append(f"Committed {', '.join(to_commit)} ({sha[:8]}); nothing else.")
        left = [p for p in ours if sha is None or p in theirs]
        if left:
            why = (
                "it has changes of yours"
                if left == theirs
                else "--no-commit"
                if not commit
                else "--no-git"
                if not use_git
                else "git did not commit them"
            )
            messages.append(f"Not committed ({why}): {', '.join(str(root / p) for p in left)}.")
    health = vault.doctor()  # doctor's count (missing attachments too), as status gives it
    problems = health.problems
    planned = health.links_unwritten  # Obsidian's planned notes: counted apart, no problem
    messages.append(
        f"Indexed {len(report.added) + len(report.updated) + report.unchanged} notes"
        + (f' ({len(problems)} problem(s): run "mdmem doctor")' if problems else "")
        + (f"; {planned} link{'' if planned == 1 else 's'} to notes not written yet" if planned else "")
        + "."
    )
    skipped = _repository_files(root, vault.config)
    if skipped:
        shown = ", ".join(skipped[:6]) + (f", … ({len(skipped) - 6} more)" if len(skipped) > 6 else "")
        messages.append(
            f"Excluded {len(skipped)} repository file(s) ({vault.config.repository_why}): {shown}; "
            f'undo in {CONFIG_FILE}: [vault] include = ["{skipped[0]}"] (globs), or skip_repository_files = false.'
        )
    vault.close()
    return InitReport(
        str(root),
        has_notes,
        ours,
        created_repo,
        len(report.added) + len(report.updated) + report.unchanged,
        messages,
        created=created,
        appended=appended,
        commit=sha,
    )


def _vector_pack(root: Path) -> list[str]:
    """Have ``git fetch`` bring each remote's vector pack too, and fetch it now where there is one."""
    from ..adapters import git, gitpack

    top = git.find_git_dir(root)
    if top is None:
        return []
    lines = []
    for remote in gitpack.remotes(top):
        gitpack.add_fetch_refspec(top, remote)
        if gitpack.fetch(top, remote) is None and gitpack.rev(top, gitpack.remote_ref(remote)):
            who = gitpack.author(top, gitpack.remote_ref(remote)) or "someone"
            lines.append(f"Fetched the vector pack of {remote} (by {who}); it is checked before use.")
    return lines


def _repository_files(root: Path, config: Config) -> list[str]:
    """The markdown files the repository rule leaves out (and ``exclude`` does not, ``include`` keeps)."""
    import fnmatch

    def matches(rel: str, patterns: tuple[str, ...]) -> bool:
        return any(fnmatch.fnmatch(rel, pat) for pat in patterns)

    if not config.repository:
        return []
    found = (p.relative_to(root).as_posix() for p in root.rglob("*.md"))
    return sorted(
        rel
        for rel in found
        if not is_hidden(rel)
        and matches(rel, config.repository)
        and not matches(rel, config.exclude)
        and not matches(rel, config.include)
    )


def _ensure_gitignore(root: Path, created: list[str]) -> list[str]:
    """Make ``.gitignore`` ignore the index: a new file goes in ``created``; returns ``[".gitignore"]``
    when an existing one was appended to."""
    gi = root / ".gitignore"
    existed = gi.exists()
    text = gi.read_text(encoding="utf-8", errors="replace") if existed else ""
    if any(line.strip().rstrip("/") == ".mdmem" or line.strip() == "/.mdmem/" for line in text.splitlines()):
        return []
    sep = "" if not text or text.endswith("\n") else "\n"
    with open(gi, "a", encoding="utf-8") as fh:
        fh.write(f"{sep}# mdmem's derived index (rebuild with: mdmem reindex --full)\n{GITIGNORE_LINE}\n")
    if existed:
        return [".gitignore"]
    created.append(".gitignore")
    return []
