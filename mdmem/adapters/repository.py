"""Repository files a vault leaves out: the boilerplate of a code or site repository that holds notes.

Two rules, read off the vault's folder when its settings load:

- A site generator's repository (its configuration file at the root: Quartz, Hugo, MkDocs, Docusaurus)
  keeps its notes in its content folder (``content/``, ``docs/``); every other top-level folder (the
  generator's own documentation, themes, layouts) but ``notes_dir`` and every markdown file at the root
  is the generator's, not a note.
- Any other vault whose notes live in a subfolder: the repository's files at the root
  (``CODE_OF_CONDUCT.md``, ``CONTRIBUTING.md``, ``LICENSE.md``, ``SECURITY.md``, ``CHANGELOG.md`` …, named
  as repositories name them, in capitals) are not notes. A flat vault, all notes at the root, keeps them.

``.github/`` and other hidden folders are never read. ``[vault] include`` in ``mdmem.toml`` takes any of
them back, ``skip_repository_files = false`` all of them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# Root files repositories carry for their hosting and their contributors, as they are conventionally
# spelled: a note named "Changelog" or "License" in a personal vault is not one of them.
BOILERPLATE = frozenset(
    {
        "AUTHORS.md",
        "CHANGELOG.md",
        "CHANGES.md",
        "CODEOWNERS.md",
        "CODE_OF_CONDUCT.md",
        "CONTRIBUTING.md",
        "CONTRIBUTORS.md",
        "COPYING.md",
        "FUNDING.md",
        "GOVERNANCE.md",
        "HISTORY.md",
        "ISSUE_TEMPLATE.md",
        "LICENCE.md",
        "LICENSE.md",
        "MAINTAINERS.md",
        "NOTICE.md",
        "PULL_REQUEST_TEMPLATE.md",
        "SECURITY.md",
        "SUPPORT.md",
    }
)
# A site generator's configuration file at the root → (its name, the folders its notes live in).
GENERATORS: dict[str, tuple[str, tuple[str, ...]]] = {
    "quartz.config.ts": ("Quartz", ("content",)),
    "quartz.config.js": ("Quartz", ("content",)),
    "hugo.toml": ("Hugo", ("content",)),
    "hugo.yaml": ("Hugo", ("content",)),
    "hugo.json": ("Hugo", ("content",)),
    "mkdocs.yml": ("MkDocs", ("docs",)),
    "mkdocs.yaml": ("MkDocs", ("docs",)),
    "docusaurus.config.js": ("Docusaurus", ("docs", "blog")),
    "docusaurus.config.ts": ("Docusaurus", ("docs", "blog")),
}
LOOK_MAX = 200  # folders looked into for a note before a vault is taken to keep its notes in subfolders


@dataclass(frozen=True, slots=True)
class RepositoryFiles:
    """What the rules leave out (vault-relative globs: a file, or ``folder/*``) and why, in words."""

    patterns: tuple[str, ...] = ()
    why: str = ""


def repository_files(root: Path, notes_dir: str = "") -> RepositoryFiles:
    """The repository files of the vault at ``root`` that are not notes (see the module's docstring);
    the folder ``mdmem add`` writes to (``notes_dir``) is never one of them."""
    try:
        entries = [e for e in os.scandir(root) if not e.name.startswith(".")]
    except OSError:
        return RepositoryFiles()
    files = {e.name for e in entries if _is_file(e)}
    folders = sorted(e.name for e in entries if _is_dir(e))
    for marker, (name, content) in GENERATORS.items():
        kept = [c for c in content if c in folders and _holds_notes(root / c)]
        if marker in files and kept:
            md = sorted(f for f in files if f.lower().endswith(".md"))
            others = [f"{d}/*" for d in folders if d not in kept and d != notes_dir.split("/")[0]]
            where = " and ".join(f"{k}/" for k in kept)
            return RepositoryFiles((*md, *others), f"a {name} site's repository: its notes are in {where}")
    found = sorted(files & BOILERPLATE)
    if found and any(_holds_notes(root / d) for d in folders):
        return RepositoryFiles(tuple(found), "a repository with its notes in folders")
    return RepositoryFiles()


def _holds_notes(folder: Path) -> bool:
    """Whether a markdown file lies in ``folder`` or below (hidden folders skipped; at most ``LOOK_MAX``
    folders looked into: a folder tree that big holds notes somewhere)."""
    stack, looked = [folder], 0
    while stack and looked < LOOK_MAX:
        looked += 1
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for e in entries:
            if e.name.startswith("."):
                continue
            if e.name.lower().endswith(".md") and _is_file(e):
                return True
            if _is_dir(e):
                stack.append(Path(e.path))
    return bool(stack)


def _is_file(e: os.DirEntry[str]) -> bool:
    try:
        return e.is_file()
    except OSError:
        return False


def _is_dir(e: os.DirEntry[str]) -> bool:
    try:
        return e.is_dir(follow_symlinks=False)
    except OSError:
        return False
