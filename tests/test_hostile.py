"""Hostile and odd input: YAML bombs, huge and empty files, paths that leave the vault,
unusual file names, and property-based tests of the parser. Each test tries to break mdmem and
asserts what it does instead: a clear problem or message, nothing lost, nothing outside the vault."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mdmem.api.vault import Vault
from mdmem.core.links import analyze_body, normalize_ref, split_wikilink
from mdmem.core.note import MAX_FRONTMATTER, parse_note, render_note, set_fields

from .conftest import mdmem_in_process, snapshot, write_files

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    monkeypatch.setenv("MDMEM_GIT_COMMIT", "0")


def cli(vault: Path, *args: str, input: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess, with a timeout (a hang is a failure, not a stuck suite). For the
    bombs and the huge note: a regression there could take all memory, or hang inside C (a regex)
    where no signal reaches it; neither may take pytest with it."""
    return subprocess.run(
        [sys.executable, "-m", "mdmem", "--vault", str(vault), *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
    )


def run(vault: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The CLI in this process, with a timeout, for small odd inputs (names, paths, empty files)."""
    return mdmem_in_process("--vault", str(vault), *args, timeout=timeout, check=False)


def make_vault(tmp_path: Path, notes: dict[str, str | bytes]) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "mdmem.toml").write_text('[vault]\nnotes_dir = "notes"\n')
    write_files(root, notes)
    return root


# -- YAML bombs --------------------------------------------------------------------------------------

BODY = "# Bomb\n\nzebrafish quartz body words survive the bomb\n"


def nested_bomb(key: str, depth: int = 9, width: int = 9) -> str:
    """'Billion laughs': each level lists the previous one ``width`` times (9^9 leaves, ~500 bytes)."""
    lines = ['l0: &a0 ["lol", "lol"]']
    for i in range(1, depth):
        lines.append(f"l{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    lines.append(f"{key}: *a{depth - 1}")
    return "---\n" + "\n".join(lines) + "\n---\n" + BODY


def flat_bomb(key: str) -> str:
    """One 20 KB string repeated 10,000 times by alias: 200 MB once joined (under 64 KB of YAML)."""
    text = "---\n" + f"s: &s {'x' * 20_000}\n" + f"{key}: [" + ", ".join(["*s"] * 10_000) + "]\n---\n" + BODY
    assert len(text) < MAX_FRONTMATTER
    return text


def recursive_bomb(key: str) -> str:
    """An anchor that contains itself: a list that is its own element."""
    return "---\n" + f"{key}: &r [*r, *r]\n---\n" + BODY


BOMB_KEYS = [
    "tags",
    "aliases",
    "entities",
    "links",
    "status",
    "type",
    "scope",
    "created",
    "id",
    "title",
    "salience",
    "pinned",
    "supersedes",
    "my_custom_key",
]

PROBE = """
import json, resource, sys
sys.path.insert(0, sys.argv[1])
from mdmem.core.note import parse_note
text = open(sys.argv[2], encoding="utf-8").read()
note = parse_note(text, "bomb.md")
json.dumps([note.title, note.tags, note.aliases, note.entities, note.status, note.type, note.scope])
peak = [int(line.split()[1]) // 1024 for line in open("/proc/self/status") if line.startswith("VmHWM:")]
print(json.dumps({"rss_mb": peak[0] if peak else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
                  "problems": [[p.field, p.message] for p in note.problems], "text": note.text,
                  "tags": len(note.tags), "aliases": len(note.aliases), "links": len(note.links)}))
"""


def probe_parse(tmp_path: Path, text: str) -> dict[str, Any]:
    """parse_note in a fresh process under a 1 GB address-space cap and a 20 s timeout."""
    src = tmp_path / "bomb.md"
    src.write_text(text, encoding="utf-8")
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
    proc = subprocess.run(
        [sys.executable, "-c", limit + PROBE, str(REPO), str(src)], capture_output=True, text=True, timeout=20
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


@pytest.mark.parametrize("key", BOMB_KEYS)
@pytest.mark.parametrize("bomb", [nested_bomb, flat_bomb, recursive_bomb])
def test_yaml_bomb_is_refused_with_a_problem_and_bounded_memory(tmp_path: Path, key: str, bomb: Any) -> None:
    got = probe_parse(tmp_path, bomb(key))
    assert got["rss_mb"] < 250, got["rss_mb"]
    assert "zebrafish quartz" in got["text"]
    problems = [m for f, m in got["problems"] if f == "frontmatter"]
    assert problems and "alias" in problems[0], got["problems"]
    assert got["tags"] <= 10 and got["aliases"] == 0 and got["links"] == 0


def test_ordinary_anchors_still_work() -> None:
    note = parse_note("---\nbase: &b [ops, infra]\ntags: *b\naliases: *b\n---\nbody\n", "a.md")
    assert note.tags == ["ops", "infra"] and note.aliases == ["ops", "infra"] and not note.problems


def test_yaml_bomb_vault_reindexes_searches_and_builds_the_graph(tmp_path: Path) -> None:
    notes: dict[str, str | bytes] = {
        f"notes/{b.__name__}-{k}.md": b(k).replace("Bomb", f"Bomb {k}")
        for b in (nested_bomb, flat_bomb, recursive_bomb)
        for k in ("tags", "links", "status", "my_custom_key")
    }
    notes["notes/plain.md"] = "# Plain\n\nlinks to [[nested_bomb-links]] and zebrafish\n"
    root = make_vault(tmp_path, notes)
    before = snapshot(root)
    r = cli(root, "reindex")
    assert r.returncode == 0, r.stderr
    assert "13 added" in r.stdout and "problem(s)" in r.stderr
    r = cli(root, "search", "quartz", "-n", "20", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["count"] == 12
    for cmd in (
        ["links", "notes/nested_bomb-links.md"],
        ["neighbors", "notes/plain.md", "--depth", "2"],
        ["backlinks", "notes/nested_bomb-links.md"],
        ["graph", "export", "--format", "json"],
        ["query", "zebrafish", "--no-vectors"],
        ["recall", "zebrafish", "--no-vectors"],
    ):
        r = cli(root, *cmd)
        assert r.returncode == 0, (cmd, r.stderr)
    r = cli(root, "doctor")
    assert r.returncode == 1 and "alias" in r.stdout
    r = cli(root, "get", "notes/nested_bomb-status.md")
    assert r.returncode == 0 and "zebrafish" in r.stdout
    assert snapshot(root) == before


# -- huge, empty and odd files -----------------------------------------------------------------------


def test_huge_frontmatter_is_skipped_with_a_problem_and_the_body_is_searchable(tmp_path: Path) -> None:
    fm = "".join(f"key{i}: {'v' * 90}\n" for i in range(1100))  # ~100 KB
    root = make_vault(tmp_path, {"notes/huge-fm.md": f"---\n{fm}---\n# Huge\n\nnarwhal lantern body\n"})
    before = snapshot(root)
    with Vault.open(root) as v:
        report = v.reindex()
        assert [p for p in report.problems if p.field == "frontmatter" and "not read" in p.message]
        assert [h.path for h in v.search("narwhal lantern")] == ["notes/huge-fm.md"]
        assert v.get("notes/huge-fm.md").title == "Huge"
    assert snapshot(root) == before


def test_ten_megabyte_note_is_indexed_up_to_the_cap_and_left_untouched(tmp_path: Path) -> None:
    para = "The quick brown fox jumps over the lazy dog near the riverbank at dawn.\n\n"
    big = "# Big\n\nokapi saxophone at the start\n\n" + para * (10 * 1024 * 1024 // len(para)) + "platypus tail\n"
    root = make_vault(tmp_path, {"notes/big.md": big, "notes/small.md": "# Small\n\nhello\n"})
    raw = (root / "notes/big.md").read_bytes()
    assert len(raw) > 10 * 1024 * 1024
    r = cli(root, "reindex", "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    problems = json.loads(r.stdout)["problems"]
    assert [
        p for p in problems if p["path"] == "notes/big.md" and p["field"] == "file" and "only the first" in p["message"]
    ]
    r = cli(root, "search", "okapi", "saxophone", "--json")
    assert [h["path"] for h in json.loads(r.stdout)["results"]] == ["notes/big.md"]
    r = cli(root, "search", "platypus", "--json")  # past the cap: not indexed, and said so above
    assert json.loads(r.stdout)["count"] == 0
    assert (root / "notes/big.md").read_bytes() == raw


@pytest.mark.parametrize("content", [b"", b"   \n\t\n  ", b"\n", b"---\n---\n", b"\xef\xbb\xbf"])
def test_empty_and_blank_files_are_indexed_with_their_stem_as_title(tmp_path: Path, content: bytes) -> None:
    root = make_vault(tmp_path, {"notes/empty one.md": content, "notes/other.md": "# Other\n\ntext\n"})
    with Vault.open(root) as v:
        v.reindex()
        note = v.get("notes/empty one.md")
        assert note.title == "empty one" and note.id == "notes/empty one"
        assert v.resolve("notes/empty one") == "notes/empty one.md"
        assert v.store.catalog.count() == 2
    r = run(root, "get", "notes/empty one.md", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["title"] == "empty one"
    assert run(root, "links", "notes/empty one.md").returncode == 0


def test_binary_note_through_get_shows_no_raw_bytes(tmp_path: Path) -> None:
    root = make_vault(tmp_path, {"notes/bin.md": b"\x00\x01\x02binary\xff\xfe" * 100})
    r = run(root, "get", "notes/bin.md", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["title"] == "bin" and d["problems"][0]["field"] == "file"


# -- references and paths that leave the vault ---------------------------------------------------------

OUTSIDE_TEXT = "OUTSIDE-SECRET-7f3a the vault must never show this"


@pytest.fixture
def walled(tmp_path: Path) -> tuple[Path, Path]:
    """A vault, an outside .md beside it, and a symlink inside the vault pointing to it."""
    outside = tmp_path / "outside.md"
    outside.write_text(f"# Outside\n\n{OUTSIDE_TEXT}\n")
    (tmp_path / "outdir").mkdir()
    (tmp_path / "outdir" / "deep.md").write_text(f"# Deep\n\n{OUTSIDE_TEXT}\n")
    root = make_vault(
        tmp_path,
        {
            "notes/inside.md": "---\nid: inside\n---\n# Inside\n\nan inside note\n",
            "notes/other.md": "---\nid: other\n---\n# Other\n\nanother note\n",
        },
    )
    (root / "notes" / "link.md").symlink_to(outside)
    (root / "notes" / "linkdir").symlink_to(tmp_path / "outdir", target_is_directory=True)
    with Vault.open(root) as v:
        v.reindex()
    return root, tmp_path


def escaping_refs(tmp_path: Path) -> list[str]:
    return [
        "../../etc/passwd",
        "/etc/passwd",
        str(tmp_path / "outside.md"),
        str(tmp_path / "outside"),
        "notes/../../outside.md",
        "notes/../../outside",
        "../outside",
        "notes/link.md",
        "notes/link",
        "notes/linkdir/deep.md",
        "notes/linkdir/deep",
    ]


def files_outside(tmp_path: Path, root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(tmp_path).as_posix(): p.read_bytes()
        for p in sorted(tmp_path.rglob("*"))
        if p.is_file()
        and not p.is_symlink()
        and root not in p.parents
        and "home" not in p.parts
        and p.name != "err.log"
    }


def test_cli_refuses_every_reference_that_leaves_the_vault(walled: tuple[Path, Path]) -> None:
    root, tmp = walled
    before_in, before_out = snapshot(root), files_outside(tmp, root)
    commands: list[list[str]] = []
    for ref in escaping_refs(tmp):
        commands += [
            ["get", ref],
            ["get", ref, "--json"],
            ["pin", ref],
            ["unpin", ref],
            ["forget", ref],
            ["restore", ref],
            ["snooze", ref, "--for", "3d"],
            ["correct", ref, "--body", "x y z"],
            ["history", ref],
            ["links", ref],
            ["backlinks", ref],
            ["neighbors", ref],
            ["link", "inside", ref],
            ["link", ref, "inside"],
            ["unlink", "inside", ref],
            ["path", "inside", ref],
            ["timeline", ref, "--no-vectors"],
        ]
    from click.testing import CliRunner

    from mdmem.cli import cli as mdmem_cli

    # In process (the same click entry point the console script runs): an unexpected exception
    # would be result.exception, not a SystemExit from the one-line error.
    for cmd in commands:
        r = CliRunner().invoke(mdmem_cli, ["--vault", str(root), *cmd])
        out = r.stdout + r.stderr
        assert OUTSIDE_TEXT not in out, cmd
        assert r.exception is None or isinstance(r.exception, SystemExit), (cmd, r.exception)
        assert r.exit_code == 1, (cmd, r.exit_code, out)
        assert "outside the vault" in out or "No note matches" in out, (cmd, out)
    for ref in escaping_refs(tmp):  # and the real process, for the command that reads a file
        p = cli(root, "get", ref)
        assert p.returncode == 1 and "Traceback" not in p.stderr and OUTSIDE_TEXT not in p.stdout + p.stderr
    assert snapshot(root) == before_in
    assert files_outside(tmp, root) == before_out


@pytest.mark.parametrize(
    "path",
    [
        "../x",
        "../../tmp/x",
        "/tmp/x-mdmem-outside",
        "notes/../../x",
        "notes/linkdir/new",
        "notes/link",
        "notes/" + "y" * 300,
    ],
)
def test_cli_add_refuses_a_path_outside_the_vault(walled: tuple[Path, Path], path: str) -> None:
    root, tmp = walled
    before_out = files_outside(tmp, root)
    r = run(root, "add", "--title", "Escape", "--body", "nope", "--path", path)
    assert r.returncode == 1, r.stderr
    assert "outside the vault" in r.stderr or "already exists" in r.stderr or "too long" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert files_outside(tmp, root) == before_out
    assert not Path("/tmp/x-mdmem-outside.md").exists()


def test_mcp_tools_refuse_every_reference_that_leaves_the_vault(walled: tuple[Path, Path]) -> None:
    import anyio

    from .edges.test_mcp import stdio_session, text

    root, tmp = walled
    before_in, before_out = snapshot(root), files_outside(tmp, root)

    async def main() -> None:
        async with stdio_session(root, tmp / "err.log") as s:
            await s.initialize()
            for ref in escaping_refs(tmp):
                calls: list[tuple[str, dict[str, Any]]] = [
                    ("get", {"note": ref}),
                    ("pin", {"note": ref}),
                    ("forget", {"note": ref}),
                    ("restore", {"note": ref}),
                    ("snooze", {"note": ref, "days": 3}),
                    ("correct", {"note": ref, "body": "replaced"}),
                    ("neighbors", {"note": ref}),
                    ("link", {"source": "inside", "target": ref}),
                    ("link", {"source": ref, "target": "inside"}),
                ]
                for tool, args in calls:
                    r = await s.call_tool(tool, args)
                    assert r.is_error, (tool, ref, text(r))
                    assert OUTSIDE_TEXT not in text(r) and OUTSIDE_TEXT not in json.dumps(r.structured_content)
                    assert "outside the vault" in text(r) or "No note matches" in text(r), (tool, ref, text(r))
                r = await s.call_tool("timeline", {"note": ref})
                assert OUTSIDE_TEXT not in text(r) + json.dumps(r.structured_content)
            r = await s.call_tool("multi_get", {"notes": [*escaping_refs(tmp), "inside"]})
            assert not r.is_error
            assert [d["id"] for d in r.structured_content["notes"]] == ["inside"]
            assert len(r.structured_content["missing"]) == len(escaping_refs(tmp))
            assert OUTSIDE_TEXT not in text(r) + json.dumps(r.structured_content)
            for q in ("OUTSIDE-SECRET-7f3a", "vault must never show"):
                for tool in ("search", "recall", "query"):
                    r = await s.call_tool(tool, {"query": q})
                    assert OUTSIDE_TEXT not in text(r) + json.dumps(r.structured_content)

    anyio.run(main)
    assert snapshot(root) == before_in
    assert files_outside(tmp, root) == before_out


# -- unusual file names --------------------------------------------------------------------------------

NFD = unicodedata.normalize("NFD", "café crème")
ODD_NAMES = {
    "notes/my note.md": "spaces",
    "notes/C# tips.md": "hash",
    "notes/C.md": "plainc",  # normalize_ref cuts 'C# tips' at '#': both were 'notes/c'
    f"notes/{NFD}.md": "nfd",
    "notes/-dash.md": "dash",
    "notes/" + "long" * 60 + ".md": "long",
    "notes/Upper.MD": "upperext",
    "notes/A.md": "clashupper",
    "notes/a.md": "clashlower",
    "notes/[brackets] & (parens).md": "brackets",
}


def test_unusual_file_names_are_indexed_and_resolvable(tmp_path: Path) -> None:
    notes: dict[str, str | bytes] = {rel: f"# {word}\n\nword{word} body\n" for rel, word in ODD_NAMES.items()}
    notes[".obsidian/workspace.md"] = "# Hidden\n\nwordhidden\n"
    notes["notes/.hidden/x.md"] = "# Hidden2\n\nwordhidden\n"
    root = make_vault(tmp_path, notes)
    with Vault.open(root) as v:
        v.reindex()
        indexed = set(v.store.catalog.rows(ODD_NAMES))
        assert indexed == set(ODD_NAMES)
        assert v.search("wordhidden") == []
        for rel, word in ODD_NAMES.items():
            assert [h.path for h in v.search(f"word{word}")] == [rel]
            note_id = rel[:-3]
            assert v.resolve(note_id) == rel, rel
            assert v.resolve(rel) == rel, rel
            assert v.get(note_id).path == rel
        assert v.resolve(unicodedata.normalize("NFC", f"notes/{NFD}")) == f"notes/{NFD}.md"
        assert v.resolve(unicodedata.normalize("NFC", "café crème")) == f"notes/{NFD}.md"
        with pytest.raises(Exception) as err:
            v.resolve("NOTES/a")
        assert type(err.value).__name__ == "AmbiguousNote"
        assert "notes/A.md" in str(err.value) and "notes/a.md" in str(err.value)
    r = run(root, "get", "--", "notes/-dash")
    assert r.returncode == 0 and "worddash" in r.stdout
    r = run(root, "get", "notes/C# tips.md")
    assert r.returncode == 0 and "wordhash" in r.stdout
    r = run(root, "get", "notes/my note")
    assert r.returncode == 0 and "wordspaces" in r.stdout
    r = run(root, "pin", "notes/a")
    assert r.returncode == 0, r.stderr
    assert "pinned: true" in (root / "notes/a.md").read_text() and "pinned" not in (root / "notes/A.md").read_text()
    r = run(root, "get", "A")
    assert r.returncode == 1 and "notes/A.md" in r.stderr and "notes/a.md" in r.stderr


@pytest.mark.parametrize(
    "title",
    [
        "!!!",
        "...",
        "-",
        "#",
        "   .  ",
        "con",
        "../../etc/passwd",
        ".hidden",
        "a/b\\c",
        "𠀀" * 100,
        "x" * 400,
        "é" * 200,
        "\u202etxt.exe",
        "nul\x00byte",
    ],
)
def test_add_gives_any_title_a_sane_file_name(tmp_path: Path, title: str) -> None:
    root = make_vault(tmp_path, {})
    with Vault.open(root) as v:
        r = v.add(title, "body of the odd title")
        p = root / r.path
        assert p.is_file() and root / "notes" in p.parents and p.parent == root / "notes"
        name = p.name
        assert not name.startswith((".", "-")) and len(name.encode()) <= 255 and "\x00" not in name
        assert "/" not in name[:-3] and "\\" not in name
        assert v.resolve(r.id) == r.path
        assert v.search("odd title")[0].path == r.path


# -- property-based tests of the parser ------------------------------------------------------------------

FRAGMENTS = [
    "---",
    "---\n",
    "...\n",
    "\n",
    "\r\n",
    "\t",
    "\x00",
    ": ",
    "- ",
    "[[",
    "]]",
    "#",
    "<<<<<<< HEAD\n",
    "=======\n",
    ">>>>>>> branch\n",
    "&a ",
    "*a",
    "!!python/object:os.system",
    "{",
    "}",
    "[",
    "]",
    "'",
    '"',
    "\ufeff",
    "title: x\n",
    "tags: [a, b]\n",
    "links:\n  - to: [[x]]\n",
    "```\n",
    "|",
    "\\",
]
note_text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=20)), max_size=40).map("".join)
PROP = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROP
@given(note_text)
def test_parse_note_never_raises(text: str) -> None:
    note = parse_note(text, "notes/x.md")
    assert isinstance(note.title, str) and note.title
    assert all(isinstance(t, str) for t in note.tags + note.aliases + note.entities)
    assert note.status in ("active", "archived", "forgotten")


@PROP
@given(note_text)
def test_body_analysis_and_refs_never_raise(text: str) -> None:
    info = analyze_body(text)
    assert isinstance(info.text, str)
    for link in info.links:
        normalize_ref(link.target)
    split_wikilink(text)
    normalize_ref(text)


word = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=20
).filter(lambda s: s.strip() == s and s.strip() and not s.startswith("#"))
plain = word.filter(lambda s: all(c not in s for c in ",\u0085") and not any(c.isspace() for c in s))
metas = st.fixed_dictionaries(
    {},
    optional={
        "id": word,
        "title": word,
        "type": st.sampled_from(["decision", "fact", "preference", "note", "handoff"]),
        "salience": st.floats(0, 1, allow_nan=False),
        "confidence": st.floats(0, 1, allow_nan=False),
        "pinned": st.booleans(),
        "status": st.sampled_from(["active", "archived", "forgotten"]),
        "scope": st.sampled_from(["global", "project:acme", "topic:db-tuning"]),
        "tags": st.lists(plain, max_size=4, unique_by=str.casefold),
        "aliases": st.lists(word, max_size=3),
        "entities": st.lists(word, max_size=3),
        "created": st.dates().map(lambda d: d.isoformat()),
        "custom": st.one_of(word, st.integers(), st.lists(word, max_size=3)),
    },
)
bodies = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200).filter(
    lambda b: "---" not in b and not b.startswith("\ufeff")
)


@PROP
@given(metas, bodies)
def test_render_then_parse_returns_the_same_fields(meta: dict[str, Any], body: str) -> None:
    note = parse_note(render_note(meta, body), "notes/x.md")
    assert [p for p in note.problems if p.field != "body"] == []
    for key in ("id", "title"):
        if key in meta:
            assert getattr(note, key) == meta[key]
    for key in ("type", "status", "scope", "pinned", "aliases", "entities", "created"):
        if key in meta and meta[key] != []:
            assert getattr(note, key) == meta[key], key
    for key in ("salience", "confidence"):
        if key in meta:
            assert getattr(note, key) == pytest.approx(meta[key])
    if meta.get("tags"):
        assert note.tags[: len(meta["tags"])] == meta["tags"]
    if "custom" in meta and meta["custom"] != []:  # render_note leaves out empty lists
        assert note.meta["custom"] == meta["custom"]
    assert note.body.strip("\n") == body.strip("\n")


@PROP
@given(
    st.dictionaries(
        st.sampled_from(["title", "tags", "pinned", "status", "salience", "extra_key"]),
        st.one_of(st.none(), word, st.booleans(), st.lists(plain, max_size=3)),
        max_size=4,
    ),
    bodies,
)
def test_set_fields_keeps_unknown_keys_comments_and_body(updates: dict[str, Any], body: str) -> None:
    head = textwrap.dedent("""\
        ---
        # a comment at the top
        id: keep-me
        unknown_thing: {nested: [1, 2], deeper: {x: y}}  # trailing comment
        title: Old title
        weird key with spaces: 42
        # a comment in the middle
        list_key:
          - one
          - two
        ---
        """)
    text = head + body
    out = set_fields(text, updates)
    for line in (
        "# a comment at the top",
        "unknown_thing: {nested: [1, 2], deeper: {x: y}}  # trailing comment",
        "weird key with spaces: 42",
        "# a comment in the middle",
        "  - one",
        "  - two",
        "id: keep-me",
    ):
        assert line in out
    note = parse_note(out, "notes/x.md")
    assert note.meta["unknown_thing"] == {"nested": [1, 2], "deeper": {"x": "y"}}
    assert note.meta["list_key"] == ["one", "two"] and note.id == "keep-me"
    assert note.body == body
    for key, value in updates.items():
        if value is None:
            assert key not in note.meta
        else:
            assert note.meta[key] == value
