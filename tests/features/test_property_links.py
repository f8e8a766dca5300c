"""Links in frontmatter properties (Obsidian's rule), links to notes not written yet, and the repository
files a vault leaves out."""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path

import pytest

from mdmem import Vault

from ..conftest import mdmem_in_process, write_files

ZETTEL = Path(__file__).parents[1] / "fixtures" / "zettel"


def jrun(root: Path, *args: str, code: int = 0) -> dict:  # type: ignore[type-arg]
    r = mdmem_in_process("--vault", str(root), *args, "--json", check=False)
    assert r.returncode == code, r.stdout + r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def zettel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The flat Zettelkasten fixture, adopted by ``mdmem init`` (no git: nothing here needs it)."""
    root = tmp_path_factory.mktemp("zettel") / "vault"
    shutil.copytree(ZETTEL, root)
    out = mdmem_in_process("init", "--no-git", str(root)).stdout
    (root / "init.out").write_text(out)
    return root


def rows(answer: dict, key: str) -> set[tuple[str, str, str | None]]:  # type: ignore[type-arg]
    """(other note's id, type, label/heading) of each ``links``/``backlinks`` row."""
    out = set()
    for r in answer[key]:
        other = r["from"] if key == "backlinks" else r["to"]
        out.add((other["id"] if other else "?" + r["written"], r["type"], r.get("heading")))
    return out


def test_property_links_are_links_and_backlinks(zettel: Path) -> None:
    assert rows(jrun(zettel, "links", "exercise"), "links") == {
        ("habit", "parent", None),
        ("sleep", "related", None),
        ("walking", "related", None),
        ("sleep", "mentions", None),  # the body's link stays a mention
    }
    assert rows(jrun(zettel, "links", "walking"), "links") == {("habit", "parent", "Kinds"), ("exercise", "up", None)}
    assert rows(jrun(zettel, "backlinks", "habit"), "backlinks") == {
        (n, "parent", h) for n, h in (("sleep", None), ("exercise", None), ("walking", "Kinds"), ("reading", None))
    }
    reading = jrun(zettel, "links", "reading")["links"]
    assert {(r["written"], r["dangling"]) for r in reading} == {
        ("habit", False),
        ("Meditation", True),
        ("cover.png", True),
    }
    near = jrun(zettel, "neighbors", "sleep", "--depth", "2")
    assert {"habit", "exercise", "walking", "reading"} <= {n["id"] for n in near["neighbors"]}


def test_unwritten_notes_are_no_problem_and_a_missing_attachment_is(zettel: Path) -> None:
    doc = jrun(zettel, "doctor", code=1)  # the missing cover.png is a problem
    assert [(p["path"], p["field"]) for p in doc["problems"] if "missing attachment" in p["message"]] == [
        ("reading.md", "source")
    ]
    assert not [p for p in doc["problems"] if "dangling" in p["message"]]
    assert doc["unwritten"] == [{"path": "reading.md", "field": "parent", "target": "Meditation", "links": 1}]
    assert doc["unwritten_links"] == 1
    text = mdmem_in_process("--vault", str(zettel), "doctor", check=False).stdout
    assert "1 link to notes not written yet" in text and "reading.md: parent: [[Meditation]]" in text
    init = (zettel / "init.out").read_text()
    assert "(1 problem(s)" in init and "1 link to notes not written yet" in init, init


def test_only_unwritten_notes_leave_doctor_happy(tmp_path: Path) -> None:
    write_files(tmp_path, {"a.md": "---\nup: [[Plan]]\n---\nSee [[Later]] and [[Later]].\n", "b.md": "B [[a]]\n"})
    out = mdmem_in_process("init", "--no-git", str(tmp_path)).stdout
    assert "problem" not in out and "3 links to notes not written yet" in out, out
    r = mdmem_in_process("--vault", str(tmp_path), "doctor")  # exit 0
    assert "No problems found." in r.stdout and "[[Later]] (2 links)" in r.stdout, r.stdout
    assert "planned   3 links to notes not written yet" in mdmem_in_process("--vault", str(tmp_path), "status").stdout


# -- an independent resolver of Obsidian's rule ------------------------------------------------------

SKIPPED = {"tags", "aliases", "links", "supersedes"}  # not text or list properties, or mdmem's own link fields
KEYS = ["parent", "up", "related", "see also", "Source", "next", "Topic-Area"]


def edge_name(key: str) -> str:
    return re.sub(r"[\s\-]+", "_", key.strip()).lower()


def obsidian_edges(root: Path) -> set[tuple[str, str, str]]:
    """(source, type, target file or "?name") of every link in a text or list property, read off the
    files' text: the frontmatter's top-level keys, each with the lines that continue it; every
    ``[[target#heading|label]]`` in them; targets resolved as Obsidian does in a vault of unique file
    names (a path from the root, else the file name; any case; ``.md`` optional)."""
    files = {p.relative_to(root).as_posix(): p for p in root.rglob("*.md") if ".mdmem" not in p.parts}
    by_path = {rel[:-3].lower(): rel for rel in files}
    by_name = {rel.rsplit("/", 1)[-1][:-3].lower(): rel for rel in files}
    assert len(by_name) == len(files), "the generated names are unique"
    edges = set()
    for rel, p in files.items():
        text = p.read_text(encoding="utf-8")
        if not text.startswith("---\n"):
            continue
        front = text[4 : text.index("\n---\n", 4)]
        props: dict[str, str] = {}
        key = None
        for line in front.split("\n"):
            m = re.match(r"([^\s#:-][^:]*):(.*)", line)
            if m:
                key = m.group(1)
                props[key] = m.group(2)
            elif key is not None:
                props[key] += "\n" + line
        for key, value in props.items():
            if key.lower() in SKIPPED:
                continue
            for inner in re.findall(r"\[\[([^\[\]\n]+)\]\]", value):
                target = inner.split("|")[0].split("#")[0].strip()
                t = target.lower().removesuffix(".md")
                dst = by_path.get(t) if "/" in t else by_name.get(t)
                edges.add((rel, edge_name(key), dst or "?" + t))
    return edges


def generated_vault(root: Path, n: int = 150, seed: int = 7) -> None:
    """Notes in three folders, each with a few properties of the shapes people write (quoted, unquoted,
    lists flow and block, several links in one text, labels, headings, paths, other cases, ``.md``,
    notes not written yet) beside properties that hold no link, and body links."""
    rnd = random.Random(seed)
    names = [f"{('ideas', 'people', 'projects')[i % 3]}/note {i:03d}" for i in range(n)]

    def ref() -> str:
        if rnd.random() < 0.08:
            return f"Not written {rnd.randrange(1000)}"
        name = rnd.choice(names)
        stem = name.split("/")[1]
        return rnd.choice([stem, stem, name, stem.upper(), stem + ".md"])

    def link() -> str:
        t, r = ref(), rnd.random()
        return f"[[{t}|shown]]" if r < 0.2 else f"[[{t}#Part two]]" if r < 0.35 else f"[[{t}]]"

    shapes = [
        lambda: f'"{link()}"',
        lambda: f"'{link()}'",
        lambda: f"[[{ref()}]]",  # unquoted: YAML reads a list in a list
        lambda: "[" + ", ".join(f'"{link()}"' for _ in range(rnd.randint(1, 3))) + "]",
        lambda: "\n" + "\n".join(f'  - "{link()}"' for _ in range(rnd.randint(1, 3))),
        lambda: "\n" + "\n".join(f"  - [[{ref()}]]" for _ in range(rnd.randint(1, 2))),
        lambda: f'"{link()}, {link()}"',
        lambda: f'"see {link()} and also {link()}"',
        lambda: "[" + ", ".join(f"[[{ref()}]]" for _ in range(2)) + "]",
    ]
    files = {}
    for i, name in enumerate(names):
        lines = [f"created: 2024-01-{1 + i % 28:02d}", f"rating: {i % 5}", "done: true", "tags: [zettel]"]
        if i % 9 == 0:
            lines.append('aliases: ["[[Not a link]]"]')
        for key in rnd.sample(KEYS, rnd.randint(0, 3)):
            lines.append(f"{key}: {rnd.choice(shapes)()}")
        body = f"Note {i} body. See [[{ref()}]].\n\n## Part two\n\nMore words.\n"
        files[name + ".md"] = "---\n" + "\n".join(lines) + "\n---\n" + body
    write_files(root, files)


def mdmem_edges(vault: Vault, paths: list[str]) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str]]]:
    """The property edges ``links`` shows (out of every note) and ``backlinks`` shows (into every note)."""
    out, into = set(), set()
    for p in paths:
        for r in vault.links(p).to_dict()["links"]:
            if r["type"] != "mentions":
                to = r["to"]["path"] if r["to"] else "?" + r["written"].lower().removesuffix(".md")
                out.add((p, r["type"], to))
        for r in vault.backlinks(p).to_dict()["backlinks"]:
            if r["type"] != "mentions":
                into.add((r["from"]["path"], r["type"], p))
    return out, into


def test_property_edges_match_an_independent_resolver(tmp_path: Path) -> None:
    generated_vault(tmp_path)
    mdmem_in_process("init", "--no-git", str(tmp_path))
    expected = obsidian_edges(tmp_path)
    assert len(expected) > 300 and any(d.startswith("?") for _, _, d in expected)
    paths = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.md") if ".mdmem" not in p.parts)
    with Vault.open(tmp_path) as vault:
        out, into = mdmem_edges(vault, paths)
        graph = json.loads(vault.export_graph("json", entities=False, external=False))
    resolved = {e for e in expected if not e[2].startswith("?")}
    others = {e for e in resolved if e[0] != e[2]}  # backlinks and the export leave a note's links to itself out
    for got, want in ((out, expected), (into, others)):
        precision = len(got & want) / len(got)
        recall = len(got & want) / len(want)
        assert precision >= 0.99 and recall >= 0.99, (precision, recall, sorted(got ^ want)[:10])
    exported = {
        (e["source"], e["type"], e["target"])
        for e in graph["edges"]
        if e["type"] != "mentions" and not e["target"].startswith("missing:")
    }
    assert exported == others, sorted(exported ^ others)[:10]


# -- repository files ------------------------------------------------------------------------------

BOILERPLATE = {
    "CODE_OF_CONDUCT.md": "# Code of conduct\nBe kind in relationships with other contributors.\n",
    "CONTRIBUTING.md": "# Contributing\nOpen a pull request.\n",
    "LICENSE.md": "MIT License\n",
    "CHANGELOG.md": "# Changelog\n- 1.0\n",
}


def ids(root: Path) -> set[str]:
    with Vault.open(root) as vault:
        nodes = json.loads(vault.export_graph("json"))["nodes"]
    return {n["key"] for n in nodes if n["kind"] == "note"}


def test_repository_files_are_left_out_where_the_notes_are_in_folders(tmp_path: Path) -> None:
    write_files(tmp_path, {**BOILERPLATE, "notes/love.md": "Relationships need time.\n", "Changelog idea.md": "x\n"})
    out = mdmem_in_process("init", "--no-git", str(tmp_path)).stdout
    assert (
        "Excluded 4 repository file(s) (a repository with its notes in folders): CHANGELOG.md, CODE_OF_CONDUCT.md"
        in out
    )
    assert "undo in mdmem.toml" in out
    assert ids(tmp_path) == {"notes/love.md", "Changelog idea.md"}
    hits = jrun(tmp_path, "search", "relationships contributors")["results"]
    assert [h["path"] for h in hits] == ["notes/love.md"]
    toml = tmp_path / "mdmem.toml"
    toml.write_text('[vault]\nexclude = ["README.md"]\ninclude = ["CHANGELOG.md"]\n')
    mdmem_in_process("--vault", str(tmp_path), "reindex")
    assert ids(tmp_path) == {"notes/love.md", "Changelog idea.md", "CHANGELOG.md"}
    toml.write_text('[vault]\nexclude = ["README.md"]\nskip_repository_files = false\n')
    mdmem_in_process("--vault", str(tmp_path), "reindex")
    assert ids(tmp_path) == {"notes/love.md", "Changelog idea.md", *BOILERPLATE}


def test_a_flat_vault_keeps_its_root_files(tmp_path: Path) -> None:
    write_files(tmp_path, {**BOILERPLATE, "love.md": "Relationships need time.\n"})
    out = mdmem_in_process("init", "--no-git", str(tmp_path)).stdout
    assert "Excluded" not in out
    assert ids(tmp_path) == {"love.md", *BOILERPLATE}


def test_a_site_generators_repository_keeps_only_its_content(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "quartz.config.ts": "export default {}\n",
            "CODE_OF_CONDUCT.md": BOILERPLATE["CODE_OF_CONDUCT.md"],
            "docs/features/graph view.md": "# Graph view\nQuartz draws a graph.\n",
            "quartz/components/readme.md": "Components.\n",
            "content/love.md": "Relationships need time.\n",
            "content/sub/habit.md": "Habits.\n",
            "notes/added.md": "Written by mdmem add.\n",  # notes_dir: never the generator's
        },
    )
    out = mdmem_in_process("init", "--no-git", str(tmp_path)).stdout
    assert "Excluded 3 repository file(s) (a Quartz site's repository: its notes are in content/)" in out, out
    assert ids(tmp_path) == {"content/love.md", "content/sub/habit.md", "notes/added.md"}


def test_a_sequence_property_lends_relevance_along_it(tmp_path: Path) -> None:
    write_files(tmp_path, {"day 1.md": '---\nnext: "[[day 2]]"\n---\nMorning.\n', "day 2.md": "Evening.\n"})
    mdmem_in_process("init", "--no-git", str(tmp_path))
    with Vault.open(tmp_path) as vault, vault.store.reading() as idx:
        got = idx.sequence_neighbours({"day 1.md", "day 2.md"}, ("next",), 2000)
    assert {k: set(v) for k, v in got.items()} == {
        "day 1.md": {("day 2.md", "next")},
        "day 2.md": {("day 1.md", "next⁻¹")},
    }
