"""Issue 16, team memory through git: ``mdmem sync`` and ``mdmem resolve`` on a bare repository and
clones of it in tmp_path (real git, real indexes). Every text is kept, every note is indexed on every
clone, and a conflict is listed until it is resolved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mdmem.adapters import gitsync
from mdmem.core.merge import merge_frontmatter, merge_note

from ..conftest import clone, git, mdmem_in_process
from .conftest import project_repo


def run(vault: Path, *args: str, check: bool = True) -> dict | str:
    """``mdmem --vault VAULT ARGS --json`` in process: its JSON (or, failing, its stderr)."""
    proc = mdmem_in_process("--vault", str(vault), *args, "--json", check=check)
    if proc.returncode != 0:
        return proc.stderr
    return json.loads(proc.stdout)


def add(vault: Path, title: str, body: str) -> str:
    return run(vault, "add", "--title", title, "--body", body)["path"]


def found(vault: Path, words: str) -> list[str]:
    return [
        h["path"]
        for h in run(
            vault, "search", words, *[w for k in ("forgotten", "snoozed", "expired") for w in ("--include", k)]
        )["results"]
    ]


def edit_body(vault: Path, rel: str, old: str, new: str) -> None:
    p = vault / rel
    text = p.read_text()
    assert old in text
    p.write_text(text.replace(old, new))


def append(vault: Path, rel: str, line: str) -> None:
    p = vault / rel
    p.write_text(p.read_text() + f"\n{line}\n")


def notes(vault: Path) -> dict[str, bytes]:
    return {
        p.relative_to(vault).as_posix(): p.read_bytes()
        for p in sorted(vault.rglob("*.md"))
        if not {".git", ".mdmem"} & set(p.relative_to(vault).parts)
    }


@pytest.mark.parametrize("first", ["a", "b"])
def test_two_clones_with_conflicting_edits_keep_every_text(clones: tuple[Path, Path, Path], first: str) -> None:
    _, a, b = clones
    shared = add(a, "Shared fact", "The shared fact starts plainly.")
    both = add(a, "Pinned here, edited there", "Original wording of the pinned note.")
    run(a, "sync")
    assert run(b, "sync")["fetched"] == 2  # two adds
    assert (b / shared).is_file() and found(b, "shared fact plainly") == [shared]

    # Concurrent adds (one title on both sides too), lifecycle writes, and conflicting body edits.
    add(a, "Alpha only", "Zebrafish migrate at dawn.")
    add(b, "Beta only", "Quokkas sunbathe at noon.")
    add(a, "Same title", "Narwhal tusks from A.")
    add(b, "Same title", "Axolotl gills from B.")
    run(a, "pin", "Prefer small pull requests")
    run(b, "set", "Prefer small pull requests", "salience=0.9")
    run(a, "snooze", "Use React for frontends", "--until", "2030-01-01")
    run(b, "forget", "Q3 budget approved")
    edit_body(a, shared, "starts plainly", "pangolin version written on A")
    edit_body(b, shared, "starts plainly", "wombat version written on B")
    run(a, "pin", both)
    edit_body(b, both, "Original wording", "Reworded on B")

    second = b if first == "a" else a
    one = a if first == "a" else b
    r1 = run(one, "sync")
    assert r1["committed"] == [shared] or r1["committed"] == [both, shared] or r1["committed"] == [both]
    r2 = run(second, "sync")
    assert r2["fetched"] >= 1 and r2["pushed"] >= 1
    kinds = {c["note"]: c for c in r2["conflicts"]}
    assert set(kinds) == {shared, "notes/same-title.md"}, r2
    assert kinds["notes/same-title.md"]["kind"] == "add/add" and kinds[shared]["kind"] == "edit/edit"
    # pin vs set: no conflict (set leaves "updated" alone, so git merges the two keys itself; the
    # note's content is checked below)
    assert "notes/prefer-small-pull-requests.md" not in kinds
    r3 = run(one, "sync")
    assert r3["pushed"] == 0 and r3["conflicts"] == []

    # The same files on both machines, and no conflict markers in any note.
    assert notes(a) == notes(b)
    assert not any(b"<<<<<<<" in t or b">>>>>>>" in t for t in notes(a).values())
    for vault in (a, b):
        for words in ("pangolin", "wombat", "zebrafish", "quokkas", "narwhal", "axolotl", "reworded pinned"):
            assert found(vault, words), f"{words!r} not found in {vault.name}"
        st = run(vault, "status")
        assert st["fresh"] is True, st
        assert sorted(st["conflicts"].values()) == sorted([shared, "notes/same-title.md"])
        assert st["git"]["head"] == st["git"]["last_indexed_commit"]
    merged = (a / both).read_text()
    assert "pinned: true" in merged and "Reworded on B" in merged
    small = (a / "notes/prefer-small-pull-requests.md").read_text()
    assert "pinned: true" in small and "salience: 0.9" in small
    assert "snoozed_until: 2030-01-01" in (a / "notes/use-react-for-frontends.md").read_text()
    assert "status: forgotten" in (a / "notes/q3-budget-approved.md").read_text()

    # The copy is a note of its own: flagged title, its own id, pointing at the original.
    copy = kinds[shared]["copy"]
    text = (a / copy).read_text()
    assert f"conflict_of: {shared}" in text and "title: Shared fact (conflict copy)" in text
    assert set(found(a, "shared fact version written")) == {shared, copy}
    doctor = mdmem_in_process("--vault", str(a), "doctor", check=False)
    assert doctor.returncode == 1 and f"mdmem resolve {shared}" in doctor.stdout

    # Resolve on one machine, sync both: settled everywhere, nothing lost.
    res = run(second, "resolve", shared, "--both")
    assert res["resolved"] and res["copies"] == [copy] and res["commit"]
    kept = (second / shared).read_text()
    assert "pangolin" in kept and "wombat" in kept and "conflict_of" not in kept
    assert "\n## Other version (synced from commit " in kept and kept.count("\n---\n") == 1
    res = run(second, "resolve", "notes/same-title.md", "--theirs")
    assert res["resolved"]
    run(second, "sync")
    run(one, "sync")
    assert notes(a) == notes(b)
    for vault in (a, b):
        st = run(vault, "status")
        assert st["fresh"] and st["conflicts"] == {}
        assert set(found(vault, "pangolin wombat")) == {shared}
        assert found(vault, "narwhal") or found(vault, "axolotl")
    assert run(a, "resolve", shared, "--ours")["resolved"] is False
    line = mdmem_in_process("--vault", str(a), "resolve", shared, "--ours").stdout
    assert line.strip() == f"{shared} has no sync conflict; nothing to resolve."


@pytest.mark.parametrize("first", ["a", "b"])
def test_edit_against_delete_keeps_the_edit(clones: tuple[Path, Path, Path], first: str) -> None:
    _, a, b = clones
    rel = "notes/team-skills-survey.md"
    append(a, rel, "Capybara edit made on A.")
    git(b, "rm", "-q", rel)
    git(b, "commit", "-q", "-m", "drop the survey")
    one, other = (a, b) if first == "a" else (b, a)
    run(one, "sync")
    report = run(other, "sync")
    assert [c["kind"] for c in report["conflicts"]] == ["edit/delete" if other == a else "delete/edit"]
    assert report["conflicts"][0]["copy"] is None
    run(one, "sync")
    for vault in (a, b):
        assert "Capybara edit made on A." in (vault / rel).read_text()
        assert found(vault, "capybara") == [rel]
        assert run(vault, "status")["fresh"]


def test_renames(clones: tuple[Path, Path, Path]) -> None:
    _, a, b = clones
    # Renamed on A, edited on B: the edit lands at the new name.
    git(a, "mv", "notes/team-skills-survey.md", "notes/skills-survey.md")
    append(b, "notes/team-skills-survey.md", "Ocelot line added on B.")
    # Renamed on both sides to different names, same text: one note, ours' name.
    git(a, "mv", "notes/use-react-for-frontends.md", "notes/react-a.md")
    git(b, "mv", "notes/use-react-for-frontends.md", "notes/react-b.md")
    # Renamed on both sides and edited on one: one note, with the edit.
    git(a, "mv", "notes/q3-budget-approved.md", "notes/budget-a.md")
    git(b, "mv", "notes/q3-budget-approved.md", "notes/budget-b.md")
    append(b, "notes/budget-b.md", "Marmoset figures from B.")
    # Renamed on both sides and edited on both: both texts kept (a conflict copy).
    git(a, "mv", "notes/payment-timeouts-err-pay-504.md", "notes/pay-a.md")
    git(b, "mv", "notes/payment-timeouts-err-pay-504.md", "notes/pay-b.md")
    append(a, "notes/pay-a.md", "Flamingo retry policy from A.")
    append(b, "notes/pay-b.md", "Gazelle retry policy from B.")
    git(a, "commit", "-q", "-am", "renames on A")
    git(b, "commit", "-q", "-am", "renames on B")
    run(a, "sync")
    report = run(b, "sync")
    run(a, "sync")
    assert notes(a) == notes(b)
    assert not any(b"<<<<<<<" in t for t in notes(a).values())
    files = set(notes(b))
    assert "notes/skills-survey.md" in files and "notes/team-skills-survey.md" not in files
    assert "Ocelot line added on B." in (b / "notes/skills-survey.md").read_text()
    renamed = {c["note"]: c for c in report["conflicts"] if c["kind"] == "rename/rename"}
    assert set(renamed) == {"notes/react-b.md", "notes/budget-b.md", "notes/pay-b.md"}, report
    assert [f for f in files if "react" in f] == ["notes/react-b.md"]
    assert [f for f in files if "budget" in f] == ["notes/budget-b.md"] and not renamed["notes/budget-b.md"]["copy"]
    assert "Marmoset figures from B." in (b / "notes/budget-b.md").read_text()
    copy = renamed["notes/pay-b.md"]["copy"]
    assert sorted(f for f in files if "pay" in f) == sorted(["notes/pay-b.md", copy])
    assert "Gazelle" in (b / "notes/pay-b.md").read_text() and "Flamingo" in (b / copy).read_text()
    for vault in (a, b):
        assert found(vault, "ocelot") == ["notes/skills-survey.md"]
        assert found(vault, "marmoset") == ["notes/budget-b.md"]
        assert found(vault, "flamingo") == [copy] and found(vault, "gazelle") == ["notes/pay-b.md"]
        st = run(vault, "status")
        assert st["fresh"] and st["conflicts"] == {copy: "notes/pay-b.md"}


def test_push_race_fetches_and_merges_again(clones: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from mdmem.api.vault import Vault

    bare, a, b = clones
    c = clone(bare, a.parent / "c")
    add(a, "From A", "Ibex notes written on A.")
    real_push = gitsync.push
    calls = []

    def racing_push(top: Path, up: gitsync.Upstream, progress: bool) -> gitsync.Pushed:
        calls.append(top)
        if len(calls) == 1:  # a third clone pushes between this sync's fetch and its push
            with Vault.open(c) as third:
                third.add("From C", "Jackal notes written on C.")
                assert third.sync().pushed == 1
        return real_push(top, up, progress)

    monkeypatch.setattr(gitsync, "push", racing_push)
    report = run(a, "sync")
    assert report["retries"] == 1 and report["pushed"] >= 1 and len(calls) == 3  # C's, A's twice
    monkeypatch.setattr(gitsync, "push", real_push)  # not undo(): that drops conftest's environment too
    run(b, "sync")
    assert found(b, "ibex") and found(b, "jackal") and found(a, "jackal")
    assert run(a, "status")["fresh"] and run(b, "status")["fresh"]


def test_sync_refuses_what_it_cannot_do(tmp_path: Path, clones: tuple[Path, Path, Path]) -> None:
    bare, a, b = clones
    lone = tmp_path / "lone"
    mdmem_in_process("init", str(lone))
    err = run(lone, "sync", check=False)
    assert "has no git remote" in err and "git remote add origin" in err and "Traceback" not in err
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "n.md").write_text("hello\n")
    err = run(plain, "sync", check=False)
    assert "not a git repository" in err
    git(lone, "remote", "add", "origin", str(bare))
    err = run(lone, "sync", check=False)
    assert "no upstream branch" in err and "git push -u origin" in err
    head = git(a, "rev-parse", "HEAD").strip()
    git(a, "checkout", "-q", "--detach")
    err = run(a, "sync", check=False)
    assert "HEAD is detached" in err
    git(a, "checkout", "-q", "main")
    assert git(a, "rev-parse", "HEAD").strip() == head

    # A merge git left unfinished: sync says so and touches nothing.
    append(a, "notes/team-skills-survey.md", "A's line")
    git(a, "commit", "-q", "-am", "a")
    git(a, "push", "-q")
    append(b, "notes/team-skills-survey.md", "B's line")
    git(b, "commit", "-q", "-am", "b")
    git(b, "fetch", "-q")
    proc = git_status(b, "merge", "origin/main")
    assert proc != 0
    before = git(b, "rev-parse", "HEAD")
    err = run(b, "sync", check=False)
    assert "git merge is unfinished" in err and "git merge --abort" in err
    assert git(b, "rev-parse", "HEAD") == before and (b / ".git" / "MERGE_HEAD").exists()
    doctor = mdmem_in_process("--vault", str(b), "doctor", check=False).stdout
    assert "a merge is unfinished" in doctor
    git(b, "merge", "--abort")
    assert run(b, "sync")["conflicts"][0]["kind"] == "edit/edit"


def git_status(cwd: Path, *args: str) -> int:
    import subprocess

    return subprocess.run(["git", *args], cwd=cwd, capture_output=True).returncode


def test_an_interrupted_sync_leaves_no_merge_behind(
    clones: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, a, b = clones
    rel = "notes/team-skills-survey.md"
    append(a, rel, "Gecko text from A")
    append(b, rel, "Heron text from B")
    run(a, "sync")

    def killed(*args: object, **kw: object) -> None:
        raise KeyboardInterrupt

    # Interrupted after the conflict copy is written, before it is staged: no copy, no merge left behind.
    real_stage = gitsync.stage
    monkeypatch.setattr(gitsync, "stage", killed)
    head = None
    with pytest.raises(KeyboardInterrupt):
        from mdmem.api.vault import Vault

        with Vault.open(b) as v:
            head = git(b, "rev-parse", "HEAD")
            v.sync()
    assert not (b / ".git" / "MERGE_HEAD").exists()
    assert not list((b / "notes").glob("*.conflict-*")) and git(b, "status", "--porcelain") == ""
    assert git(b, "rev-parse", "HEAD") != head  # the hand edit was committed before the merge began
    assert "Heron text from B" in (b / rel).read_text() and "<<<<" not in (b / rel).read_text()
    monkeypatch.setattr(gitsync, "stage", real_stage)
    report = run(b, "sync")
    assert report["conflicts"][0]["note"] == rel
    assert found(b, "gecko") and found(b, "heron")


def test_sync_takes_a_vault_name(clones: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, a, b = clones
    mdmem_in_process("vaults", "add", "team", str(b))
    add(a, "Named", "Tapir notes.")
    run(a, "sync")
    proc = mdmem_in_process("sync", "team", cwd=tmp_path)
    assert "fetched 1 commit(s) from origin/main" in proc.stdout
    assert found(b, "tapir")


# -- the merge itself (pure) -------------------------------------------------------------------------

BASE = "---\nid: n1\ntitle: T\ntags: [a]\nupdated: 2026-01-01T00:00:00Z\n---\nline one\nline two\n"


def no_lines(base: str, ours: str, theirs: str) -> None:
    return None


@pytest.mark.parametrize(
    "ours, theirs, expect",
    [
        # a pin here, a body edit there
        (
            BASE.replace("tags: [a]\n", "tags: [a]\npinned: true\n"),
            BASE.replace("line two", "line 2"),
            "---\nid: n1\ntitle: T\ntags: [a]\npinned: true\nupdated: 2026-01-01T00:00:00Z\n---\nline one\nline 2\n",
        ),
        # different keys on each side, both touching updated: the later wins
        (
            BASE.replace("tags: [a]", "tags: [a, b]").replace("01T00", "02T00"),
            BASE.replace("title: T\n", "title: T\nsalience: 0.9\n").replace("01T00", "03T00"),
            "---\nid: n1\ntitle: T\nsalience: 0.9\ntags: [a, b]\nupdated: 2026-01-03T00:00:00Z\n---\nline one\nline two\n",
        ),
        # the same change on both sides
        (BASE.replace("T\n", "U\n"), BASE.replace("T\n", "U\n"), BASE.replace("T\n", "U\n")),
    ],
)
def test_merge_note_merges_what_does_not_overlap(ours: str, theirs: str, expect: str) -> None:
    assert merge_note(BASE, ours, theirs, no_lines).text == expect


def test_merge_note_reports_what_overlaps() -> None:
    m = merge_note(BASE, BASE.replace("title: T", "title: A"), BASE.replace("title: T", "title: B"), no_lines)
    assert m.text is None and m.conflicts == ["title"]
    m = merge_note(BASE, BASE.replace("line two", "two A"), BASE.replace("line two", "two B"), no_lines)
    assert m.text is None and m.conflicts == ["body"]
    base = BASE + "line three\nline four\n"
    m = merge_note(base, base.replace("line four", "four A"), base.replace("line one", "one B"), gitsync.merge_lines)
    assert m.text is not None and m.text.endswith("---\none B\nline two\nline three\nfour A\n")  # lines apart
    # a key removed on one side, changed on the other
    assert merge_frontmatter("a: 1\nb: 2\n", "b: 2\n", "a: 3\nb: 2\n") == (None, ["a"])
    assert merge_frontmatter("a: 1\n", "a: 1\n", "a: 1\nb:\n  - x\n  - y\n") == ("a: 1\nb:\n  - x\n  - y\n", [])


def test_sync_results_round_trip() -> None:
    from mdmem import render
    from mdmem.results import Resolution, SyncConflict, SyncReport

    report = SyncReport(
        "/v",
        "main",
        "origin/main",
        committed=["a.md"],
        fetched=2,
        merged="abc",
        pushed=1,
        notes_changed=["a.md", "b.md"],
        merged_notes=["b.md"],
        conflicts=[SyncConflict("a.md", "edit/edit", "both changed", "a.conflict-1234567.md", "1234567")],
    )
    assert SyncReport.from_dict(report.to_dict()) == report
    text = render.cli(report).out
    assert "CONFLICT  a.md (edit/edit)" in text and "mdmem resolve a.md --ours|--theirs|--both" in text
    assert "fetched 2 commit(s) from origin/main, pushed 1" in text
    done = Resolution("a.md", "both", True, ["a.conflict-1234567.md"], "abcdef1234")
    assert Resolution.from_dict(done.to_dict()) == done
    assert render.cli(done).out == "resolved a.md: kept both texts; removed a.conflict-1234567.md  commit abcdef12\n"


def test_a_vault_inside_a_project_repository(tmp_path: Path) -> None:
    """A project's memory/ folder in its code repository: sync merges the branch, settles the notes'
    conflicts inside the vault, and refuses (touching nothing) when code outside it conflicts."""
    bare, a = project_repo(tmp_path)
    b = clone(bare, tmp_path / "b", "memory")
    rel = "notes/team-skills-survey.md"
    append(a / "memory", rel, "Kestrel view from A.")
    append(b / "memory", rel, "Lynx view from B.")
    (a / "app.py").write_text("print('v2 from A')\n")  # not a note: sync leaves it uncommitted
    run(a / "memory", "sync")
    assert git(a, "status", "--porcelain").strip() == "M app.py"
    report = run(b / "memory", "sync")
    copy = report["conflicts"][0]["copy"]
    assert report["conflicts"][0]["note"] == rel and copy.startswith("notes/")
    assert "Kestrel" in (b / "memory" / copy).read_text() and "Lynx" in (b / "memory" / rel).read_text()
    assert found(b / "memory", "kestrel") == [copy]

    run(a / "memory", "sync")  # merges B's sync with app.py's edit still uncommitted: git leaves it alone
    git(a, "commit", "-q", "-am", "code on A")
    git(a, "push", "-q")
    (b / "app.py").write_text("print('v2 from B')\n")
    git(b, "commit", "-q", "-am", "code on B")
    head = git(b, "rev-parse", "HEAD")
    err = run(b / "memory", "sync", check=False)
    assert "app.py, which is outside the vault" in err and "nothing was merged" in err
    assert git(b, "rev-parse", "HEAD") == head and not (b / ".git" / "MERGE_HEAD").exists()
    assert git(b, "status", "--porcelain").strip() == ""


def test_sync_waits_for_the_writer_lock(clones: tuple[Path, Path, Path]) -> None:
    """Another mdmem writer at work: sync waits for it (here: gives up after the lock timeout with
    one line) and commits nothing meanwhile."""
    from mdmem.api.vault import Vault

    _, a, _ = clones
    append(a, "notes/team-skills-survey.md", "Edited by hand.")
    head = git(a, "rev-parse", "HEAD")
    with Vault.open(a) as other, other.writer_lock():
        proc = mdmem_in_process("--vault", str(a), "sync", check=False, env={"MDMEM_LOCK_TIMEOUT": "0.2"})
    assert proc.returncode == 1 and "Another mdmem process" in proc.stderr and "Traceback" not in proc.stderr
    assert git(a, "rev-parse", "HEAD") == head
    assert run(a, "sync")["committed"] == ["notes/team-skills-survey.md"]


def test_sync_as_a_process_and_its_steps(clones: tuple[Path, Path, Path]) -> None:
    """The real ``mdmem sync`` process (git hooks installed, they stay out of the way), and the step
    lines a terminal gets."""
    from mdmem.api.vault import Vault

    from ..conftest import mdmem

    _, a, b = clones
    add(a, "Process", "Okapi notes.")
    proc = mdmem("--vault", str(a), "sync", "--json")
    assert json.loads(proc.stdout)["pushed"] == 1 and proc.stderr == ""  # not a terminal: no step lines
    append(b, "notes/team-skills-survey.md", "Puffin line.")
    lines: list[str] = []
    with Vault.open(b) as v:
        report = v.sync(say=lines.append)
    assert lines == [
        "committing 1 edited note(s)",
        "fetching origin",
        "merging origin/main",
        "pushing 2 commit(s) to origin/main",
    ], lines
    assert report.pushed == 2 and found(b, "okapi") and found(b, "puffin")
    assert not (b / ".mdmem" / "catchup").exists()  # indexed by sync itself, no background job


def test_sync_waits_out_another_gits_index_lock(clones: tuple[Path, Path, Path]) -> None:
    import threading

    _, a, b = clones
    add(a, "Locked", "Quetzal notes.")
    run(a, "sync")
    lock = b / ".git" / "index.lock"
    lock.write_text("")  # another git process at work for a moment
    timer = threading.Timer(0.5, lock.unlink)
    timer.start()
    try:
        report = run(b, "sync")
    finally:
        timer.join()
    assert report["fetched"] == 1 and found(b, "quetzal")


def test_a_rename_git_cannot_see_against_an_edit(clones: tuple[Path, Path, Path]) -> None:
    """Renamed and rewritten on A (git sees a delete and an add), edited on B: one note per id, the edit
    kept as the renamed note's conflict copy."""
    _, a, b = clones
    rel = add(a, "Drifting note", "\n".join(f"Line {i} of the first version." for i in range(40)))
    run(a, "sync")
    run(b, "sync")
    git(a, "mv", rel, "notes/drifted.md")
    text = (a / "notes/drifted.md").read_text()
    (a / "notes/drifted.md").write_text(
        text.split("---\n")[0] + "---\n" + text.split("---\n")[1] + "---\n" + "Rewritten entirely: walrus.\n"
    )
    git(a, "commit", "-q", "-am", "rename and rewrite")
    append(b, rel, "Vicuna line from B.")
    run(a, "sync")
    report = run(b, "sync")
    assert [(c["kind"], c["note"]) for c in report["conflicts"]] == [("rename/edit", "notes/drifted.md")]
    copy = report["conflicts"][0]["copy"]
    run(a, "sync")
    for vault in (a, b):
        assert not (vault / rel).exists() and "Vicuna line from B." in (vault / copy).read_text()
        assert found(vault, "vicuna") == [copy] and found(vault, "walrus") == ["notes/drifted.md"]
        assert run(vault, "get", "Drifting note")["path"] == "notes/drifted.md"  # the id names one note
        assert run(vault, "status")["conflicts"] == {copy: "notes/drifted.md"}


def test_files_that_are_not_notes_keep_both_versions_and_resolve(clones: tuple[Path, Path, Path]) -> None:
    """An attachment and an .obsidian settings file both sides changed: the other version is kept beside
    each, status lists the attachment's copy, and resolve settles files as it settles notes (--ours,
    --theirs; --both is refused: two images cannot be one)."""
    from mdmem.core.merge import copy_original

    _, a, b = clones
    for vault in (a, b):
        git(vault, "pull", "-q")
    (a / "attachments").mkdir()
    (a / ".obsidian").mkdir()
    (a / "attachments" / "chart.png").write_bytes(b"\x89PNG base")
    (a / ".obsidian" / "workspace.json").write_text('{"active": "base"}')
    git(a, "add", "-A")
    git(a, "commit", "-q", "-m", "files")
    run(a, "sync")
    run(b, "sync")
    (a / "attachments" / "chart.png").write_bytes(b"\x89PNG from A")
    (b / "attachments" / "chart.png").write_bytes(b"\x89PNG from B")
    (a / ".obsidian" / "workspace.json").write_text('{"active": "a"}')
    (b / ".obsidian" / "workspace.json").write_text('{"active": "b"}')
    for vault in (a, b):
        git(vault, "commit", "-q", "-am", "change the files")
    run(a, "sync")
    report = run(b, "sync")
    copies = {c["note"]: c["copy"] for c in report["conflicts"]}
    assert set(copies) == {"attachments/chart.png", ".obsidian/workspace.json"}
    png, ws = copies["attachments/chart.png"], copies[".obsidian/workspace.json"]
    assert (b / png).read_bytes() == b"\x89PNG from A" and (
        b / "attachments/chart.png"
    ).read_bytes() == b"\x89PNG from B"
    assert copy_original(png) == "attachments/chart.png" and copy_original(ws) == ".obsidian/workspace.json"
    assert run(b, "status")["conflicts"] == {png: "attachments/chart.png"}

    assert "cannot be kept in one file" in run(b, "resolve", "attachments/chart.png", "--both", check=False)
    done = run(b, "resolve", png, "--theirs")  # named by its copy
    assert done["resolved"] and done["copies"] == [png] and done["commit"]
    assert (b / "attachments/chart.png").read_bytes() == b"\x89PNG from A" and not (b / png).exists()
    done = run(b, "resolve", ".obsidian/workspace.json", "--ours")
    assert done["resolved"] and (b / ".obsidian/workspace.json").read_text() == '{"active": "b"}'
    assert not (b / ws).exists() and run(b, "status")["conflicts"] == {}
    assert not run(b, "resolve", "attachments/chart.png", "--ours")["resolved"]  # nothing left to settle
    assert git_status(b, "diff", "--quiet", "HEAD") == 0  # committed


def test_resolve_refuses_a_side_that_would_lose_text_or_guess() -> None:
    from mdmem.core.errors import MdmemError
    from mdmem.features.sync import check_side

    check_side("notes/a.md", True, ["notes/a.conflict-1a2b3c4.md"], "ours")  # fine: the note is there
    with pytest.raises(MdmemError, match=r"no longer exists.*mdmem resolve notes/a.conflict-1a2b3c4.md --theirs"):
        check_side("notes/a.md", False, ["notes/a.conflict-1a2b3c4.md"], "ours")
    with pytest.raises(MdmemError, match="has 2 conflict copies"):
        check_side("a.png", True, ["a.conflict-1a2b3c4.png", "a.conflict-5d6e7f8.png"], "theirs")
