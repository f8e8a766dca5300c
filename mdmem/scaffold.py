"""``mdmem init``: make a vault from the template, or adopt a folder of notes as it is."""

from __future__ import annotations

import shutil
from pathlib import Path

from .config import CONFIG_FILE
from .errors import MdmemError
from .results import InitReport

GITIGNORE_LINE = ".mdmem/"


def template_dir() -> Path:
    """The vault template: inside the installed package, or at the top of a source checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "vault_template", here.parent / "vault_template"):
        if candidate.is_dir():
            return candidate
    raise MdmemError("The vault template is missing from this installation; reinstall mdmem.")


def init_vault(path: Path, *, use_git: bool = True) -> InitReport:
    """Create or adopt a vault at ``path``. Never overwrites an existing file."""
    from .vault import Vault

    root = path.expanduser().resolve()
    if root.exists() and not root.is_dir():
        raise MdmemError(f"{root} is a file; give a folder.")
    root.mkdir(parents=True, exist_ok=True)
    has_notes = any(not any(part.startswith(".") for part in p.relative_to(root).parts) for p in root.rglob("*.md"))
    messages: list[str] = []
    written: list[str] = []
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
        written.append(rel.as_posix())
    _ensure_gitignore(root, written)
    messages.append(("Adopted" if has_notes else "Created") + f" vault at {root}"
                    + (f" (added {', '.join(written)})" if written else ""))

    from . import git

    created_repo = False
    if use_git:
        created_repo = git.init_repo(root)
        if created_repo:
            messages.append("Initialised a git repository.")
        messages += git.install_hooks(root)
    vault = Vault.open(root)
    report = vault.reindex()
    if created_repo and written:
        sha = vault.commit(written, "mdmem: new vault from template")
        if sha:
            messages.append(f"Committed the template ({sha[:8]}).")
    messages.append(f"Indexed {len(report.added) + len(report.updated) + report.unchanged} notes"
                    + (f" ({len(report.problems)} problem(s): run \"mdmem doctor\")" if report.problems else "") + ".")
    vault.close()
    return InitReport(str(root), has_notes, written, created_repo,
                      len(report.added) + len(report.updated) + report.unchanged, messages)


def _ensure_gitignore(root: Path, written: list[str]) -> None:
    gi = root / ".gitignore"
    text = gi.read_text(encoding="utf-8", errors="replace") if gi.exists() else ""
    if any(line.strip().rstrip("/") == ".mdmem" or line.strip() == "/.mdmem/" for line in text.splitlines()):
        return
    sep = "" if not text or text.endswith("\n") else "\n"
    with open(gi, "a", encoding="utf-8") as fh:
        fh.write(f"{sep}# mdmem's derived index (rebuild with: mdmem reindex --full)\n{GITIGNORE_LINE}\n")
    written.append(".gitignore")
