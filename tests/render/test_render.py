"""render against today's code: each result, rebuilt from what today's CLI (or library) answered, renders
exactly what today's CLI prints (stdout, stderr, exit code) and what today's MCP tools return.

Golden tests keep the refactor honest ("One clear house"): when cli.py and mcp_server.py switch to
``render``, these must still pass. Two vaults per module: one only read (so a ``--json`` run and a
text run see the same state) and one written (write commands are compared through a spy that
catches what the library returned to the command).
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import anyio
import click
import pytest
from click.testing import CliRunner

from mdmem import render
from mdmem.api.vault import Vault
from mdmem.cli import cli as mdmem_cli
from mdmem.edges.mcp_server import create_server
from mdmem.edges.mcp_tools import Served
from mdmem.results import (
    AddReport,
    AddResult,
    BacklinksAnswer,
    Change,
    Correction,
    DoctorReport,
    EmbedReport,
    EntityAnswer,
    ExportReport,
    FileChange,
    GraphEdge,
    GraphNode,
    History,
    Hit,
    Hits,
    ImportReport,
    InitReport,
    LinkHint,
    LinksAnswer,
    MemoryContext,
    MissingNote,
    NeighborsAnswer,
    NoteBatch,
    NoteDoc,
    NoteText,
    PathAnswer,
    ReindexReport,
    SetupReport,
    SweepReport,
    SweepRule,
    TimelineAnswer,
    TimelineItem,
    VaultStatus,
    WhyAnswer,
)

from ..conftest import FIXTURE, FIXTURE_IGNORE, GIT_ENV, git

NOTES = {
    "notes/hotwire.md": """---
id: m-hot
title: Use Hotwire for new frontends
type: decision
created: 2026-01-05
entities: [Hotwire, Mei]
links:
  - {to: "[[Q3 budget approved]]", type: depends_on, reason: "needs the Q3 budget"}
  - {to: m-survey, type: Caused-By, reason: "the survey showed little React experience"}
supersedes: m-react
---
We chose Hotwire over React because of the [[Team skills survey]] and the [survey notes](survey.md).
Still to write: [[Missing note]].
""",
    "notes/budget.md": "---\nid: g-budget\ntitle: Q3 budget approved\ntype: fact\ncreated: 2026-01-10\n---\n"
    "Finance approved the frontend budget for Q3.\n",
    "notes/survey.md": "---\nid: m-survey\ntitle: Team skills survey\ntype: research\ncreated: 2025-12-01\n---\n"
    "Most of the team knows Rails and server-rendered forms; little React experience.\n",
    "notes/react.md": "---\nid: m-react\ntitle: Use React for frontends\ntype: decision\nstatus: archived\n"
    "created: 2025-06-01\n---\nOur first frontend choice was React with a JSON API.\n",
    "notes/people/mei-lin.md": "---\ntitle: Mei Lin\ntype: fact\naliases: [林美, Mei]\ncreated: 2025-01-01\n---\n"
    "Frontend lead. Writes in Chinese.\n",
    "notes/css.md": "---\ntitle: CSS naming rules\ntype: preference\nentities: [Mei]\ncreated: 2026-02-01\n---\n"
    "Block-element-modifier names for every component. Ask Mei about Hotwire.\n",
    "notes/island.md": "---\ntitle: Unconnected island\ncreated: 2026-03-01\n---\nA note about sailing boats.\n",
    "notes/deploy.md": "---\nid: m-deploy\ntitle: Deploy window\ntype: fact\n---\n"
    "Deploys happen on Tuesday mornings after the release train.\n",
    "notes/style.md": "---\ntitle: Coding style\npinned: true\nsalience: 0.9\n---\nPrefer small pull requests.\n",
    "notes/stale.md": "---\ntitle: Stale handoff\ntype: handoff\nsalience: 0.1\ncreated: 2025-01-01\n---\nold stuff\n",
    "notes/db-v1.md": "---\nid: db-v1\ntitle: Database host v1\ntype: fact\ncreated: 2025-02-01\n---\n"
    "The database host is db1.internal.\n",
    "notes/ambiguous.md": "---\ntitle: Ambiguous links\n---\nSee [[Duplicate title]] and [[Team skills survey#Results]].\n",
    "notes/db-v2.md": "---\nid: db-v2\ntitle: Database host v2\ntype: fact\nsupersedes: db-v1\ncreated: 2025-08-01\n"
    "---\nThe database host is db2.internal.\n",
}
SECRET = "ghp_" + "1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ"


def build_vault(root: Path) -> Path:
    """The fixture corpus plus the notes above, in git (no hooks: they would start a process per commit)."""
    from mdmem.edges.scaffold import init_vault

    shutil.copytree(FIXTURE, root, ignore=FIXTURE_IGNORE)
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    init_vault(root, use_git=False)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "notes")
    with Vault.open(root) as v:
        v.reindex()  # the index knows the commit
    return root


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """This module's environment: the hash embedder, a fixed now, one machine key for both vaults."""
    path = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        for key in ("MDMEM_VAULT", "GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "MDMEM_SKIP_HOOK"):
            mp.delenv(key, raising=False)
        for key, value in {
            **GIT_ENV,
            "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": str(path),
            "MDMEM_HOME": str(path / "mdmem"),
            "MDMEM_EMBED_MODEL": "hash",
            "MDMEM_NOW": "2026-11-29",
        }.items():
            mp.setenv(key, value)
        yield path


@pytest.fixture(scope="module", autouse=True)
def _quick_gc() -> Iterator[None]:
    """``gc.collect()`` before a status run (see test_cli_golden) looks only at objects made since here."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture(scope="module")
def rv(home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The vault only read (a --json run and a text run must see the same state)."""
    return build_vault(tmp_path_factory.mktemp("read") / "vault")


@pytest.fixture(scope="module")
def wv(home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The vault the write commands change."""
    return build_vault(tmp_path_factory.mktemp("write") / "vault")


@pytest.fixture(scope="module")
def sources(home: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Files outside the vaults for import and setup."""
    d = tmp_path_factory.mktemp("sources")
    (d / "MEMORY.md").write_text(
        f"## Decisions\n\n- 2026-03-14: Use Postgres for billing.\n- Token is {SECRET}\n\n"
        "## Preferences\n\n- Small pull requests.\n",
        encoding="utf-8",
    )
    (d / "bad.jsonl").write_text('{"content": "Retries back off."}\nnot json\n', encoding="utf-8")
    (d / "project").mkdir()
    return {"memory": str(d / "MEMORY.md"), "bad": str(d / "bad.jsonl"), "project": str(d / "project")}


def run(root: Path, *args: str) -> render.Output:
    """Today's CLI, in process: what it printed and its exit code."""
    r = CliRunner().invoke(mdmem_cli, ["--vault", str(root), *args], catch_exceptions=False)
    return render.Output(r.stdout, r.stderr, r.exit_code)


def spy(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[Any]:
    """Replace ``owner.name`` by a wrapper that records what each call returned."""
    seen: list[Any] = []
    real = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        seen.append(out)
        return out

    monkeypatch.setattr(owner, name, wrapper)
    return seen


# -- read commands: --json and text at the same state --------------------------------------------------

READS = [
    (Hits, ["search", "hotwire"], {}),
    (Hits, ["search", "deploy", "--type", "fact", "-n", "3"], {}),
    (Hits, ["search", "zebra", "unicorn", "pony"], {}),
    (Hits, ["vsearch", "frontend", "choice", "--explain"], {"explain": True}),
    (Hits, ["query", "hotwire"], {}),
    (Hits, ["query", "hotwire", "frontends", "--explain"], {"explain": True}),
    (Hits, ["query", "hotwire", "--no-vectors", "--explain"], {"explain": True}),
    (Hits, ["recall", "why", "did", "we", "choose", "hotwire", "--explain"], {"explain": True}),
    (Hits, ["recall", "when", "do", "we", "deploy"], {}),
    (Hits, ["recall", "qwertyuiop", "--explain"], {"explain": True}),
    (MemoryContext, ["context", "when do we deploy", "--budget", "200", "--no-vectors"], {}),
    (MemoryContext, ["context", "", "--budget", "50", "--no-vectors"], {}),
    (VaultStatus, ["status"], {}),
    (DoctorReport, ["doctor"], {}),
    (History, ["history", "db-v2"], {}),
    (History, ["history", "Deploy window"], {}),
    (SweepReport, ["sweep"], {}),
    (SweepReport, ["sweep", "--min-age", "100000"], {}),
    (LinksAnswer, ["links", "m-hot"], {}),
    (LinksAnswer, ["links", "notes/island"], {}),
    (LinksAnswer, ["links", "Wikilinks in code"], {}),
    (LinksAnswer, ["links", "Ambiguous links"], {}),  # an ambiguous target, a link to a heading
    (BacklinksAnswer, ["backlinks", "Mei"], {}),
    (BacklinksAnswer, ["backlinks", "notes/island"], {}),
    (NeighborsAnswer, ["neighbors", "m-hot", "-d", "2"], {}),
    (NeighborsAnswer, ["neighbors", "m-survey", "--direction", "in", "--type", "caused_by"], {}),
    (PathAnswer, ["path", "m-survey", "g-budget"], {}),
    (PathAnswer, ["path", "m-survey", "Unconnected island"], {}),
    (PathAnswer, ["path", "m-survey", "m-react", "--max-depth", "1"], {}),
    (WhyAnswer, ["why", "hotwire"], {}),
    (WhyAnswer, ["why", "qwertyuiop"], {}),
    (TimelineAnswer, ["timeline", "m-hot"], {"ref": "m-hot"}),
    (TimelineAnswer, ["timeline", "sailing", "boats"], {"ref": "sailing boats"}),
    (TimelineAnswer, ["timeline", "m-hot", "--all", "-w", "2"], {"ref": "m-hot"}),
    (EntityAnswer, ["entity", "Mei"], {}),
    (EntityAnswer, ["entity", "hotwire"], {}),
    (
        AddReport,
        ["add", "-t", "Deploy window", "-b", "Deploys happen on Tuesday mornings after the release train."],
        {},
    ),
    # (a near duplicate's add changes the note it repeats, so it is not run twice here: test_review.py)
    (Change, ["pin", "Coding style"], {}),
    (Change, ["link", "m-hot", "g-budget", "--type", "depends_on"], {}),
    (Change, ["unlink", "notes/island", "m-hot"], {}),
    (ImportReport, ["import", "{memory}", "--dry-run"], {}),
    (ImportReport, ["import", "{bad}", "--dry-run"], {}),
    (SetupReport, ["setup", "claude-code", "--project", "--dir", "{project}", "--dry-run"], {}),
    (SetupReport, ["setup", "claude-code", "--project", "--dir", "{project}", "--remove"], {"remove": True}),
]


@pytest.mark.parametrize(("kind", "args", "options"), READS, ids=[" ".join(a) for _, a, _ in READS])
def test_cli_golden(rv: Path, sources: dict[str, str], kind: Any, args: list[str], options: dict[str, Any]) -> None:
    args = [a.format(**sources) for a in args]
    if kind is VaultStatus:  # earlier commands' vaults, once collected, checkpoint their WAL: size_bytes moves
        gc.collect()
    doc = run(rv, *args, "--json")
    result = kind.from_dict(json.loads(doc.out))
    assert render.to_json(result) == doc.out  # keys, order, nesting, left-out fields
    if kind is VaultStatus:
        gc.collect()
    assert render.cli(result, **options) == run(rv, *args)


@pytest.mark.parametrize("ref", ["m-hot", "Release train schedule", "notes/broken-yaml", "notes/no-frontmatter"])
def test_get_golden(rv: Path, ref: str) -> None:
    doc = run(rv, "get", ref, "--json")
    note = NoteDoc.from_dict(json.loads(doc.out))
    assert render.to_json(note) == doc.out
    text = (rv / note.path).read_text(encoding="utf-8", errors="replace")
    assert render.cli(NoteText(note, text)) == run(rv, "get", ref)
    assert render.cli(NoteText(note, text), meta=True) == render.cli(note) == run(rv, "get", ref, "--meta")


def test_graph_export_golden(rv: Path, tmp_path: Path) -> None:
    doc = run(rv, "graph", "export", "-f", "dot", "-o", str(tmp_path / "a.dot"), "--json")
    result = ExportReport.from_dict(json.loads(doc.out))
    assert render.to_json(result) == doc.out
    again = ExportReport(str(tmp_path / "b.dot"), result.format, result.bytes)
    assert render.cli(again) == run(rv, "graph", "export", "-f", "dot", "-o", again.output)


@pytest.fixture
def plain(home: Path, tmp_path: Path) -> Path:
    """A small vault outside git, indexed."""
    root = tmp_path / "plain"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "title-only.md").write_text("---\ntitle: Title only\ntype: fact\n---\n")
    (root / "notes" / "lunch.md").write_text("---\ntitle: Lunch\n---\nSoup on Mondays.\n")
    run(root, "reindex")
    return root


def test_status_doctor_and_add_in_a_plain_vault_golden(plain: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    def golden(kind: Any, *args: str) -> Any:
        settle = gc.collect if kind is VaultStatus else lambda: 0  # see test_cli_golden
        settle()
        doc = run(plain, *args, "--json")
        result = kind.from_dict(json.loads(doc.out))
        assert render.to_json(result) == doc.out
        settle()
        assert render.cli(result) == run(plain, *args)
        return result

    status = golden(VaultStatus, "status")
    assert not status.git.repository and not status.problems
    assert render.mcp(status) == call_tool(plain, "status", {})
    assert not golden(DoctorReport, "doctor").problems
    hits = golden(Hits, "search", "title", "only", "-n", "8")
    assert hits[0].snippet == "" and render.mcp(hits, tool="search") == call_tool(
        plain, "search", {"query": "title only"}
    )
    (plain / "notes" / "new.md").write_text("# New\n")
    assert golden(VaultStatus, "status").pending.new == ["notes/new.md"]
    from mdmem.index.state import server_seal

    served: dict[str, object] = {"pid": os.getpid(), "port": 1, "token": "t", "vault": str(plain.resolve())}
    (plain / ".mdmem" / "serve.json").write_text(json.dumps({**served, "seal": server_seal(served)}))
    try:
        assert golden(VaultStatus, "status").serve is not None
    finally:
        (plain / ".mdmem" / "serve.json").unlink()

    reports = spy(monkeypatch, Vault, "save")
    out = run(plain, "add", "-t", "Kettle descaling", "-b", "The kettle needs vinegar.", "--no-dedupe")
    report = reports[-1]
    assert report.added is not None and report.added.commit is None and render.cli(report) == out
    got = call_tool(plain, "add", {"title": "Printer toner", "body": "Order toner in March."})
    assert render.mcp(replace(reports[-1], redacted=0)) == got
    _SERVERS.pop(plain)[0].close()


# -- write commands: what the library returned to the command, rendered ----------------------------------


def change_of(obj: Any) -> Change:
    """Today's lifecycle.Change as a result."""
    return Change.from_dict(obj.to_dict())


def added_of(obj: Any) -> AddResult:
    """Today's vault.AddResult as a result."""
    return AddResult(**asdict(obj))


@pytest.mark.parametrize(
    ("method", "args"),
    [
        ("pin", ["pin", "Deploy window"]),
        ("pin", ["unpin", "Deploy window"]),
        ("snooze", ["snooze", "Deploy window", "--until", "2027-01-01"]),
        ("forget", ["forget", "Deploy window"]),
        ("restore", ["restore", "Deploy window"]),
        ("pin", ["pin", "Deploy window", "--no-commit"]),
        ("link", ["link", "notes/island", "Deploy window", "--type", "Led-To", "--reason", "boats need windows"]),
        ("link", ["link", "notes/island", "Deploy window", "--type", "led_to", "--reason", "a new reason"]),
        ("unlink", ["unlink", "notes/island", "Deploy window"]),
        ("unlink", ["unlink", "m-hot", "m-survey"]),  # the body still mentions it
    ],
)
def test_change_golden(wv: Path, monkeypatch: pytest.MonkeyPatch, method: str, args: list[str]) -> None:
    seen = spy(monkeypatch, Vault, method)
    out = run(wv, *args)
    assert render.cli(change_of(seen[0])) == out
    doc = run(wv, *args, "--json")  # again: now "already so", and its JSON
    assert render.to_json(Change.from_dict(json.loads(doc.out))) == doc.out


def test_add_and_correct_golden(wv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reports = spy(monkeypatch, Vault, "save")
    out = run(
        wv,
        "add",
        "-t",
        "Hotwire needs Turbo training",
        "-b",
        f"New frontends use Hotwire, so the team needs "
        f"training before the migration. The survey showed little React experience. {SECRET}",
    )
    report = reports[0]
    added = report.added
    assert added is not None and report.suggested_links, "no suggestion: the test shows too little"
    expected = render.cli(report)
    assert out == render.Output(expected.out, render.redaction_notice(1) + expected.err)

    doc = run(wv, "add", "-t", "Lunch on Mondays", "-b", "The cafeteria serves soup on Mondays.", "--json")
    assert render.to_json(AddReport.from_dict(json.loads(doc.out))) == doc.out

    corrections = spy(monkeypatch, Vault, "correct")
    out = run(wv, "correct", added.id, "-b", "Hotwire frontends need Turbo frames training.")
    fix = corrections[0]
    new = fix.new
    assert render.cli(Correction(added_of(fix.new), change_of(fix.old))) == out
    doc = run(wv, "correct", new.id, "-b", "Hotwire frontends need Turbo training, twice.", "--json")
    assert render.to_json(Correction.from_dict(json.loads(doc.out))) == doc.out
    history = run(wv, "history", new.id, "--json")  # three versions, each with a git log
    assert render.cli(History.from_dict(json.loads(history.out))) == run(wv, "history", new.id)


def test_sweep_apply_golden(wv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mdmem.features import lifecycle

    seen = spy(monkeypatch, lifecycle, "sweep")
    out = run(wv, "sweep", "--apply", "--min-age", "30")
    result = SweepReport.from_dict(seen[0].to_dict())
    assert result.archived and render.cli(result) == out


@pytest.mark.parametrize("args", [["--full"], [], ["-q"], ["--full", "-q"]])
def test_reindex_golden(wv: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    seen = spy(monkeypatch, Vault, "reindex")
    out = run(wv, "reindex", *args)
    report = ReindexReport.from_dict(seen[0].to_dict())
    assert render.cli(report, quiet="-q" in args) == out
    if args == ["--full"]:
        assert report.problems and out.err  # the fixture corpus has broken notes
        doc = run(wv, "reindex", "--json")
        assert render.to_json(ReindexReport.from_dict(json.loads(doc.out))) == doc.out


def test_embed_golden(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "e"
    root.mkdir()
    (root / "a.md").write_text("---\ntitle: A\n---\nSome words to embed.\n")
    seen = spy(monkeypatch, Vault, "embed")
    out = run(root, "embed")
    assert render.cli(EmbedReport.from_dict(seen[0].to_dict())) == out
    doc = run(root, "embed", "--json")
    assert render.to_json(EmbedReport.from_dict(json.loads(doc.out))) == doc.out


def test_import_golden(wv: Path, sources: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from mdmem.edges import importer

    seen = spy(monkeypatch, importer, "import_path")
    out = run(wv, "import", sources["memory"])
    assert render.cli(ImportReport.from_dict(seen[0].to_dict())) == out
    doc = run(wv, "import", sources["memory"], "--json")  # again: all skipped
    assert render.to_json(ImportReport.from_dict(json.loads(doc.out))) == doc.out


def test_import_obsidian_golden(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mdmem.edges import importer

    for name in ("dry", "real"):
        (tmp_path / name / ".obsidian").mkdir(parents=True)
        (tmp_path / name / "idea.md").write_text("# An idea\n\nWrite it down.\n")
    seen = spy(monkeypatch, importer, "import_path")
    for args in (["import", str(tmp_path / "dry"), "--dry-run"], ["import", str(tmp_path / "real"), "--no-git"]):
        out = run(tmp_path, *args)
        result = ImportReport.from_dict(seen[-1].to_dict())
        assert render.cli(result) == out
    assert result.adopted is not None
    doc = run(tmp_path, "import", str(tmp_path / "dry"), "--dry-run", "--json")
    assert render.to_json(ImportReport.from_dict(json.loads(doc.out))) == doc.out


def test_init_golden(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mdmem.edges import scaffold

    monkeypatch.chdir(tmp_path)
    seen = spy(monkeypatch, scaffold, "init_vault")
    for path in ("new", str(tmp_path.parent / f"{tmp_path.name}-elsewhere")):
        out = run(tmp_path, "init", path, "--no-git")
        assert render.cli(InitReport.from_dict(seen[-1].to_dict())) == out
    doc = run(tmp_path, "init", "other", "--no-git", "--json")
    assert render.to_json(InitReport.from_dict(json.loads(doc.out))) == doc.out


def test_setup_golden(rv: Path, sources: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mdmem.edges import claude_setup

    seen = spy(monkeypatch, claude_setup, "setup_claude_code")
    for args, remove in (
        (["--project", "--dir", str(tmp_path)], False),
        (["--project", "--dir", str(tmp_path)], False),
        ([], False),
        (["--remove"], True),
    ):
        out = run(rv, "setup", "claude-code", *args)
        result = SetupReport(str(rv), False, [FileChange.from_dict(c.to_dict()) for c in seen[-1].files])
        assert render.cli(result, remove=remove) == out


def test_vectors_unavailable_and_a_problem_without_a_fix() -> None:
    from mdmem.core.note import Problem
    from mdmem.results import GitInfo, IndexInfo, Pending, VectorStatus

    status = VaultStatus(
        "/v",
        1,
        {"fact": 1},
        {"active": 1},
        0,
        0,
        IndexInfo("w", 4, "g", "t", 2_500_000),
        VectorStatus(error="The model is not installed."),
        None,
        Pending(),
        True,
        GitInfo(False, None, None),
    )
    assert render.cli(status).out.splitlines()[2:4] == [
        "index     w, schema 4, 2.5 MB, updated t",
        "vectors   unavailable: The model is not installed.",
    ]
    assert render.mcp(status)[0].splitlines()[2] == "vectors: The model is not installed."
    doctor = render.cli(DoctorReport([Problem("a.md", "tags", "not a list"), Problem("b.md", "f", "m", "do x")]))
    assert doctor == render.Output(  # grouped by kind (most first, then by name), a problem's fix under it
        "f: 1 in 1 file(s)\n  b.md: f: m\n      fix: do x\n\ntags: 1 in 1 file(s)\n  a.md: tags: not a list\n\n"
        "2 problem(s) of 2 kind(s). Notes with problems are still indexed with defaults.\n",
        "",
        1,
    )


def test_warnings_after_a_commit_git_refused(wv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hook = wv / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'no commits today' >&2\nexit 1\n")
    hook.chmod(0o755)
    seen: list[Any] = []
    real = Vault.pin

    def pin(self: Vault, *args: Any, **kwargs: Any) -> Any:
        seen.append(real(self, *args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(Vault, "pin", pin)
    try:
        out = run(wv, "pin", "Unconnected island")
        # (not unpin: it restores the committed text, which leaves git nothing to refuse)
        as_json = json.loads(run(wv, "forget", "Unconnected island", "--json").out)
    finally:
        hook.unlink()
    warnings = seen[0].warnings  # the answer carries what went wrong after the work was done
    assert warnings and "not committed" in warnings[0]
    assert out == render.cli(change_of(seen[0]))
    assert out.err.endswith(render.warning_lines(warnings)) and "mdmem: warning: " in out.err
    assert "not committed" in as_json["warnings"][0]  # --json has them too


# -- MCP: the tools in process ------------------------------------------------------------------------------


_SERVERS: dict[Path, tuple[Vault, Any]] = {}


@pytest.fixture(scope="module", autouse=True)
def _close_servers() -> Iterator[None]:
    yield
    for vault, _ in _SERVERS.values():
        vault.close()
    _SERVERS.clear()


def call_tool(root: Path, name: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """An MCP tool's text and structured content, from today's server (one per vault, as in production)."""
    if root not in _SERVERS:
        vault = Vault.open(root)
        _SERVERS[root] = (vault, create_server(Served(vault)))
    result: Any = anyio.run(_SERVERS[root][1].call_tool, name, args)
    assert not result.is_error, result.content[0].text
    return result.content[0].text, result.structured_content


@pytest.mark.parametrize(
    ("tool", "query"),
    [
        ("search", "hotwire"),
        ("search", "qwertyuiop"),
        ("query", "hotwire"),
        ("vsearch", "frontend choice"),
        ("recall", "why did we choose hotwire"),
        ("recall", "the release train"),
    ],
)
def test_mcp_hits_golden(rv: Path, tool: str, query: str) -> None:
    doc = run(rv, tool, query, "-n", "8", "--json")
    hits = Hits.from_dict(json.loads(doc.out))
    assert render.mcp(hits, tool=tool) == call_tool(rv, tool, {"query": query})


def test_mcp_hits_are_compact_hits_of_the_vaults(rv: Path) -> None:
    with Vault.open(rv) as v:
        hits = v.query("hotwire frontends", 5)
    assert hits and any(h.links for h in hits)
    _, data = call_tool(rv, "query", {"query": "hotwire frontends", "limit": 5})
    assert data["results"] == [render.compact_hit(h) for h in hits]


@pytest.mark.parametrize(
    ("tool", "args", "kind", "cli_args", "options"),
    [
        ("why", {"query": "hotwire"}, WhyAnswer, ["why", "hotwire", "-n", "8"], {}),
        ("why", {"query": "qwertyuiop"}, WhyAnswer, ["why", "qwertyuiop", "-n", "8"], {}),
        ("timeline", {"note": "m-hot"}, TimelineAnswer, ["timeline", "m-hot"], {"ref": "m-hot"}),
        (
            "timeline",
            {"note": "sailing boats"},
            TimelineAnswer,
            ["timeline", "sailing boats"],
            {"ref": "sailing boats"},
        ),
        (
            "neighbors",
            {"note": "m-hot", "depth": 2},
            NeighborsAnswer,
            ["neighbors", "m-hot", "-d", "2", "-n", "20"],
            {},
        ),
        ("status", {}, VaultStatus, ["status"], {}),
    ],
)
def test_mcp_graph_and_status_golden(
    rv: Path, tool: str, args: dict[str, Any], kind: Any, cli_args: list[str], options: dict[str, Any]
) -> None:
    result = kind.from_dict(json.loads(run(rv, *cli_args, "--json").out))
    assert render.mcp(result, **options) == call_tool(rv, tool, args)


def test_mcp_get_and_multi_get_golden(rv: Path) -> None:
    def note_text(ref: str, max_chars: int) -> NoteText:
        note = NoteDoc.from_dict(json.loads(run(rv, "get", ref, "--json").out))
        return NoteText.cut(note, (rv / note.path).read_text(encoding="utf-8", errors="replace"), max_chars)

    assert render.mcp(note_text("m-hot", 12_000)) == call_tool(rv, "get", {"note": "m-hot"})
    assert render.mcp(note_text("m-hot", 200)) == call_tool(rv, "get", {"note": "m-hot", "max_chars": 200})
    with Vault.open(rv) as v, pytest.raises(Exception) as missing:
        v.get("no such note")
    batch = NoteBatch(
        [note_text("g-budget", 300), MissingNote("no such note", str(missing.value)), note_text("m-hot", 300)]
    )
    assert render.mcp(batch) == call_tool(
        rv, "multi_get", {"notes": ["g-budget", "no such note", "m-hot"], "max_chars": 300}
    )


def test_mcp_writes_golden(wv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reports = spy(monkeypatch, Vault, "save")
    title, body = "Boats and deploy windows", f"Sailing boats wait for the deploy window on Tuesday. {SECRET}"
    got = call_tool(wv, "add", {"title": title, "body": body, "type": "idea"})
    added = reports[-1].added
    assert added is not None
    assert render.mcp(replace(reports[-1], redacted=1)) == got
    got = call_tool(wv, "add", {"title": title, "body": body})  # the same text again: NOOP
    assert render.mcp(AddReport(reports[-1].check, redacted=1)) == got
    got = call_tool(wv, "add", {"title": title, "body": "Sailing boats wait for the deploy window on Tuesday."})  # near
    assert reports[-1].check.decision == "UPDATE" and reports[-1].updated is not None
    assert render.mcp(replace(reports[-1], redacted=0)) == got

    corrections = spy(monkeypatch, Vault, "correct")
    got = call_tool(wv, "correct", {"note": added.id, "body": "Boats never wait.", "title": f"Boats {SECRET}"})
    fix = corrections[-1]
    new = fix.new
    assert render.mcp(Correction(added_of(fix.new), change_of(fix.old), redacted=1)) == got

    for method, tool, args, options in [
        ("pin", "pin", {"note": new.id}, {}),
        ("pin", "pin", {"note": new.id}, {}),
        ("pin", "pin", {"note": new.id, "pinned": False}, {}),
        ("snooze", "snooze", {"note": new.id, "days": 3}, {}),
        ("forget", "forget", {"note": new.id}, {}),
        ("restore", "restore", {"note": new.id}, {}),
        (
            "link",
            "link",
            {"source": new.id, "target": "m-deploy", "type": "Caused-By", "reason": "why"},
            {"link_type": "Caused-By"},
        ),
        ("link", "link", {"source": new.id, "target": "m-deploy", "type": "caused_by"}, {}),
    ]:
        seen = spy(monkeypatch, Vault, method)
        got = call_tool(wv, tool, args)
        assert render.mcp(change_of(seen[-1]), **options) == got, (tool, args)


def test_mcp_warnings(wv: Path) -> None:
    """A commit git refused: the write is done, the text and the structured content say so."""
    hook = wv / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    try:
        text, data = call_tool(wv, "pin", {"note": "Database host v1"})
    finally:
        hook.unlink()
    change = Change.from_dict(data)
    assert change.warnings and (text, data) == render.mcp(change)
    hits = Hits([], "x", warnings=["w1", "w2"])
    assert render.mcp(hits)[0].endswith(
        ". Nothing matches: try other words, search for exact identifiers, or vsearch for meaning.\nWarning: w1 w2"
    )


# -- pure formats, tables ----------------------------------------------------------------------------------

NOTE = GraphNode("m-a", "notes/a.md", "Alpha", "decision")
ARCHIVED = GraphNode("m-b", "notes/b.md", "Beta", "fact", status="archived")
ENTITY = GraphNode("entity:Hotwire", None, "Hotwire", "entity", kind="entity")


@pytest.mark.parametrize(
    ("node", "line", "short"),
    [
        (NOTE, "Alpha  [decision]  m-a", "Alpha"),
        (ARCHIVED, "Beta  [fact]  m-b (archived)", "Beta"),
        (ENTITY, "entity Hotwire", "entity Hotwire"),
        (GraphNode("ref:ticket:PAY-1", None, "PAY-1", "ticket", kind="external"), "ticket PAY-1", "ticket PAY-1"),
        (GraphNode("n/x", "n/x.md", "n/x.md", status="unindexed"), "n/x.md  [note]  n/x (unindexed)", "n/x.md"),
        (None, "?", "?"),
    ],
)
def test_node_formats(node: GraphNode | None, line: str, short: str) -> None:
    assert (render.node_line(node), render.node_short(node)) == (line, short)


@pytest.mark.parametrize(
    ("edge", "text"),
    [
        (GraphEdge(NOTE, "caused_by", ARCHIVED, "m-b", "a reason"), "Alpha -caused_by-> Beta"),
        (GraphEdge(NOTE, "about", ENTITY, "Hotwire"), "Alpha -about-> entity Hotwire"),
        (GraphEdge(NOTE, "mentions", None, "Missing note", dangling=True), "Alpha -mentions-> 'Missing note'"),
    ],
)
def test_edge_line(edge: GraphEdge, text: str) -> None:
    assert render.edge_line(edge) == text
    assert render.reason_suffix(edge.reason) == ("  — a reason" if edge.reason else "")


@pytest.mark.parametrize(("reason", "text"), [("needs it", "  — needs it"), ("", ""), (None, "")])
def test_reason_suffix(reason: str | None, text: str) -> None:
    assert render.reason_suffix(reason) == text


@pytest.mark.parametrize(
    ("hints", "text"),
    [
        ([LinkHint("caused_by", "out", "m-s", "Survey", reason="r")], "caused_by → Survey (m-s)"),
        (
            [LinkHint("depends_on", "in", "m-a", "A"), LinkHint("about", "out", "entity:X", "X", "entity")],
            "depends_on ← A (m-a); about → X (entity:X)",
        ),
        ([], ""),
    ],
)
def test_hints_line(hints: list[LinkHint], text: str) -> None:
    assert render.hints_line(hints) == text


@pytest.mark.parametrize(
    ("snippet", "styled"),
    [
        ("a **b** c", "a " + click.style("b", fg="yellow", bold=True) + " c"),
        ("**x****y**", click.style("x", fg="yellow", bold=True) + click.style("y", fg="yellow", bold=True)),
        ("no marks", "no marks"),
    ],
)
def test_ansi_codes_are_click_s(snippet: str, styled: str) -> None:
    assert render.highlight(snippet) == styled
    assert render.highlight(snippet, False) == render.bold(snippet, False) == snippet
    assert render.bold(snippet) == click.style(snippet, bold=True)


def test_color_output(rv: Path) -> None:
    hits = Hits.from_dict(json.loads(run(rv, "search", "hotwire", "--json").out))
    out = render.cli(hits, color=True).out
    assert f"{render.BOLD}{hits[0].title}{render.RESET}" in out and f"{render.YELLOW}{render.BOLD}" in out
    assert click.unstyle(out) == render.cli(hits).out.replace("**", "")  # marks become colour
    tl = TimelineAnswer.from_dict(json.loads(run(rv, "timeline", "m-hot", "--json").out))
    assert click.unstyle(render.cli(tl, color=True).out) == render.cli(tl).out != render.cli(tl, color=True).out


@pytest.mark.parametrize(
    ("item", "line"),
    [
        (TimelineItem(NOTE, "2026-01-05T00:00:00Z"), "▶ 2026-01-05  Alpha  [decision]  m-a"),
        (TimelineItem(ENTITY, None), "▶ ?  entity Hotwire"),
    ],
)
def test_dated_line(item: TimelineItem, line: str) -> None:
    assert render.dated_line("▶", item) == line


@pytest.mark.parametrize(
    ("commit", "sep", "text"),
    [
        ("0123456789abcdef", "  ", "  commit 01234567"),
        ("0123456789abcdef", ", ", ", commit 01234567"),
        (None, "  ", ""),
        ("", ", ", ""),
    ],
)
def test_commit_suffix(commit: str | None, sep: str, text: str) -> None:
    assert render.commit_suffix(commit, sep) == text


@pytest.mark.parametrize(
    ("snippet", "title", "key"),
    [
        ("We chose **Hotwire**.", "X", "We chose Hotwire."),
        ("# Coffee machine The machine needs descaling", "Coffee machine", "The machine needs descaling"),
        ("Coffee machine The machine needs descaling", "Coffee machine", "The machine needs descaling"),
        ("Coffee machines descale", "Coffee machine", "Coffee machines descale"),
        ("word " * 60, "X", ("word " * 40)[:199].rstrip() + "…"),
        ("", "X", ""),
    ],
)
def test_compact_key(snippet: str, title: str, key: str) -> None:
    hit = Hit("i", "p.md", title, 1.0, snippet)
    assert render.compact_hit(hit)["key"] == key


@pytest.mark.parametrize(("path", "shown"), [("/v/notes", "/v/notes"), ("/v/my notes", "'/v/my notes'"), ("/v", "/v")])
def test_shell_path(path: str, shown: str) -> None:
    assert render.shell_path(path) == shown


@pytest.mark.parametrize(
    ("fields", "text"),
    [
        ({"pinned": True}, "pinned=True"),
        ({"status": "active", "snoozed_until": None}, "status=active, snoozed_until=None"),
        ({}, ""),
    ],
)
def test_fields_text(fields: dict[str, Any], text: str) -> None:
    assert render.fields_text(fields) == text


def test_a_result_without_a_text_says_so() -> None:
    with pytest.raises(TypeError, match="no text for a str"):
        render.cli("text")
    with pytest.raises(TypeError, match="no text for a SweepRule"):
        render.mcp(SweepRule())  # no tool answers with one
    with pytest.raises(TypeError):
        render.cli(Hits(), colour=True)  # a misspelt option is not ignored


def test_render_is_pure() -> None:
    """render and results import no click, no index, no MCP SDK (a fresh interpreter tells)."""
    code = (
        "import sys, mdmem.render; bad = [m for m in sys.modules if m.split('.')[0] in "
        "('click', 'whoosh', 'usearch', 'mcp', 'numpy', 'yaml', 'git', 'sqlite3') or m in "
        "('mdmem.api.vault', 'mdmem.cli', 'mdmem.features.connect', 'mdmem.core.graph')]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


OBSIDIAN_NOTE = """---
title: Graph view
---
# Graph view

**Open local graph** to see the links of a note, as in [[Local graph|the local graph]] and
[the docs](https://help.obsidian.md/graph). ![[graph-view.png]]

| Setting | What the graph shows |
| --- | --- |
| Orphans | notes without links \\| in the graph |

<span class="git-footer">Edited on the graph page</span>
"""


@pytest.mark.parametrize("tool", ["search", "query", "vsearch", "recall"])
def test_snippets_and_key_lines_show_text_not_syntax(plain: Path, tool: str) -> None:
    """Issue 13: snippets showed the author's HTML and markdown, and nested the match marks in the author's bold
    (``**Open local **graph****``); the CLI text, --json and MCP key lines all come from the hit's snippet."""
    (plain / "notes" / "graph.md").write_text(OBSIDIAN_NOTE, encoding="utf-8")
    run(plain, "reindex")
    hits = json.loads(run(plain, tool, "open local graph", "--json").out)["results"]
    snip = next(h["snippet"] for h in hits if h["path"] == "notes/graph.md")
    for syntax in ("<span", "[[", "]]", "](", "![", "| ", "# ", "graph-view.png", "https://"):
        assert syntax not in snip, (syntax, snip)
    parts = snip.split("**")  # between the marks, only matches: no match nested in the author's bold
    assert parts[1::2] and {p.lower() for p in parts[1::2]} <= {"open", "local", "graph"}, snip
    text = run(plain, tool, "open local graph").out
    assert "<span" not in text and "[[" not in text and "**" not in text.replace(snip, "")
    mcp_text, data = call_tool(plain, tool, {"query": "open local graph"})
    key = next(h["key"] for h in data["results"] if h["path"] == "notes/graph.md")
    assert key and "**" not in key and "<span" not in key and "[[" not in key and "|" not in key
    assert key in mcp_text


def test_context_key_line_shows_text_not_syntax() -> None:
    from mdmem.core.links import DISPLAY_MAX
    from mdmem.features.recall import key_line

    assert (
        key_line("# T\n\n<div>\n**Open local graph** via [[Local graph|the local graph]]")
        == "Open local graph via the local graph"
    )
    assert key_line("![[image.png]]\n- *Second* line") == "Second line"

    embeds = "![[image.png]]\n" * (DISPLAY_MAX // 15 - 1)
    assert key_line(embeds + "Said at last\n") == "Said at last"
    assert key_line(embeds * 2 + "Said too late\n") == ""  # past the text shown: not read line by line


def test_a_query_the_vault_cannot_answer_says_so_quietly() -> None:
    """Text shows one line instead of the weak matches (--explain shows them); MCP says it and keeps
    them in the structured result; --json has them with info.relevant false."""
    hit = Hit(id="a", path="a.md", title="A", score=1.0, snippet="", type="fact", tags=[], scope="global", date=None)
    hits = Hits([hit], "our Datadog account", {"relevant": False, "unknown": ["Datadog"]})
    line = "Nothing in the vault matches well: no note mentions Datadog.\n"
    assert render.cli(hits).out == line
    assert render.cli(hits, explain=True).out.startswith(line + "closest anyway:\n 1. A")
    text, data = render.mcp(hits)
    assert "Nothing in the vault matches well: no note mentions Datadog." in text and "1. [fact]" not in text
    assert data["relevant"] is False and data["results"][0]["id"] == "a"
    assert hits.to_dict()["info"]["relevant"] is False and hits.to_dict()["count"] == 1


def test_an_answer_to_a_question_naming_what_no_note_mentions_says_so_above_its_notes() -> None:
    hit = Hit(
        id="a",
        path="a.md",
        title="DynamoDB triggers",
        score=1.0,
        snippet="",
        type="note",
        tags=[],
        scope="global",
        date=None,
    )
    hits = Hits([hit], "Terraform state in DynamoDB", {"relevant": True, "unknown": ["Terraform"]})
    out = render.cli(hits).out
    assert out.startswith("No note mentions Terraform; the notes closest to the rest of the question:\n 1. ")
    text, data = render.mcp(hits)
    assert "No note mentions Terraform" in text and data["unknown"] == ["Terraform"] and "1. [note]" in text
