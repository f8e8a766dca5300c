"""A hand-written Obsidian-style vault for tests: two language folders with the same file names,
attachments of several kinds, partial-path, heading, block and table links, embeds, aliases, markdown
links with URL-encoding and relative paths, code that holds no links, notes without dates, and a git
history with real dates that ends in a rename.

``LINKS`` writes down, for every link in every note, the file Obsidian opens for it (None: it
dangles). ``build(root)`` writes the files and commits them in dated steps.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .conftest import write_files

NOTES: dict[str, str] = {
    "Home.md": "# Help vault\n\nStart with [[Start]] or read about [[Canvas]].\n",
    "en/Start.md": (
        "# Start\n\n"
        "Welcome. See [[Canvas]], [[Canvas#Cards|cards]] and [[Canvas#^card-block]].\n"
        "Sync is private: [[Sync/Security and privacy]] (also [privacy](Sync/Security%20and%20privacy.md)).\n"
        "![[diagram.png]] and ![[diagram.png|300]] and ![[manual.pdf#page=2]].\n"
        "Listen: ![[intro.ogg]]. Board: [[Plan.canvas]].\n"
        "Broken: ![[missing.png]] and [[Old name]].\n\n"
        "| Plugin | Page |\n|---|---|\n| Canvas | [[Canvas\\|the canvas]] |\n\n"
        "`[[Not a link]]` stays code.\n\n"
        "```\n[[Also not a link]]\n```\n"
    ),
    "en/Plugins/Canvas.md": (
        "---\naliases: [Whiteboard]\n---\n# Canvas\n\n## Cards\n\nA card. ^card-block\n\n"
        "Back to [[Start]]. Pictures: ![diagram](../Attachments/diagram.png).\n"
    ),
    "en/Plugins/Graph view.md": "# Graph view\n\nLike [[Canvas]] and [[Whiteboard]] (an alias: not a link target).\n",
    "en/Sync/Security and privacy.md": "# Security and privacy\n\nSee [[../Start|start]] and [Canvas](../Plugins/Canvas.md).\n",
    "en/Guides/deep/Tips.md": "# Tips\n\nOpen [[Canvas]]; the German page is [[de/Plugins/Canvas]].\n",
    "de/Start.md": "# Start\n\nWillkommen. Siehe [[Canvas]] und ![[diagram.png]].\n",
    "de/Plugins/Canvas.md": "# Canvas\n\nZurück zu [[Start]].\n",
    "de/Sync/Security and privacy.md": "# Sicherheit\n\n[[Sync/Security and privacy]] und [[Canvas]].\n",
    "zh/Stranger.md": "---\naliases: [Old name]\n---\n# Stranger\n\nAn unrelated note whose alias is the old name.\n",
    "en/New name.md": "# New name\n\nRenamed from 'Old name' (git mv).\n",
}

ATTACHMENTS: dict[str, bytes] = {
    "en/Attachments/diagram.png": b"\x89PNG\r\n\x1a\n en",
    "de/Attachments/diagram.png": b"\x89PNG\r\n\x1a\n de",
    "en/Attachments/manual.pdf": b"%PDF-1.4\n",
    "en/Attachments/intro.ogg": b"OggS",
    "en/Plan.canvas": b'{"nodes":[],"edges":[]}',
}

# (note, target as written) → the file Obsidian opens, None when the link dangles. Each pair is
# one links row (several links to one file are one row).
LINKS: dict[tuple[str, str], str | None] = {
    ("Home.md", "Start"): "de/Start.md",  # same depth and length: the first by path
    ("Home.md", "Canvas"): "de/Plugins/Canvas.md",
    ("en/Start.md", "Canvas"): "en/Plugins/Canvas.md",  # nearest: shares en/ (not de/)
    ("en/Start.md", "Sync/Security and privacy"): "en/Sync/Security and privacy.md",  # path suffix, nearest
    ("en/Start.md", "diagram.png"): "en/Attachments/diagram.png",
    ("en/Start.md", "manual.pdf"): "en/Attachments/manual.pdf",
    ("en/Start.md", "intro.ogg"): "en/Attachments/intro.ogg",
    ("en/Start.md", "Plan.canvas"): "en/Plan.canvas",
    ("en/Start.md", "missing.png"): None,  # a missing attachment
    ("en/Start.md", "Old name"): None,  # renamed away; zh/Stranger's alias must not catch it
    ("en/Plugins/Canvas.md", "Start"): "en/Start.md",
    ("en/Plugins/Canvas.md", "../Attachments/diagram.png"): "en/Attachments/diagram.png",  # relative
    ("en/Plugins/Graph view.md", "Canvas"): "en/Plugins/Canvas.md",  # same folder
    ("en/Plugins/Graph view.md", "Whiteboard"): None,  # aliases are not link targets
    ("en/Sync/Security and privacy.md", "../Start"): "en/Start.md",
    ("en/Sync/Security and privacy.md", "../Plugins/Canvas.md"): "en/Plugins/Canvas.md",
    ("en/Guides/deep/Tips.md", "Canvas"): "en/Plugins/Canvas.md",  # an ancestor folder is nearer
    ("en/Guides/deep/Tips.md", "de/Plugins/Canvas"): "de/Plugins/Canvas.md",  # an exact vault path
    ("de/Start.md", "Canvas"): "de/Plugins/Canvas.md",
    ("de/Start.md", "diagram.png"): "de/Attachments/diagram.png",
    ("de/Plugins/Canvas.md", "Start"): "de/Start.md",
    ("de/Sync/Security and privacy.md", "Sync/Security and privacy"): "de/Sync/Security and privacy.md",
    ("de/Sync/Security and privacy.md", "Canvas"): "de/Plugins/Canvas.md",
}

# How many links the note writes to one target (the rest write one).
COUNTS = {
    ("en/Start.md", "Canvas"): 4,
    ("en/Start.md", "Sync/Security and privacy"): 2,
    ("en/Start.md", "diagram.png"): 2,
}

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ada",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
}


def _git(root: Path, *args: str, when: str | None = None) -> None:
    env = {**os.environ, **GIT_ENV}
    if when:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def build(root: Path) -> Path:
    """Write the vault at ``root`` as a git repository with a dated history: the English notes in
    2023, the German ones in 2024, then 'Old name' renamed to 'New name' (its links left as they were)."""
    root.mkdir(parents=True, exist_ok=True)
    _git(root, "init", "-q", "-b", "main")

    old = {k: v for k, v in NOTES.items() if not k.startswith("de/")}
    old["en/Old name.md"] = old.pop("en/New name.md")
    write_files(root, old)
    write_files(root, {rel: data for rel, data in ATTACHMENTS.items() if rel.startswith("en/")})
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "English pages", when="2023-03-01T10:00:00+00:00")
    write_files(root, {rel: text for rel, text in NOTES.items() if rel.startswith("de/")})
    write_files(root, {"de/Attachments/diagram.png": ATTACHMENTS["de/Attachments/diagram.png"]})
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "German pages", when="2024-06-15T10:00:00+00:00")
    _git(root, "mv", "en/Old name.md", "en/New name.md")
    _git(root, "commit", "-qm", "Rename Old name", when="2025-01-20T10:00:00+00:00")
    return root
