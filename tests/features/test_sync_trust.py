"""What a teammate's push may and may not make ``mdmem sync`` and ``mdmem resolve`` do on another clone:
a pushed conflict copy acts only on the note its own name belongs to (never ``.git/``, ``.mdmem/``, a
folder, or through a link); sync commits only the vault's own paths; git's lock races are waited out;
an upstream that was force-pushed is reported before old history is merged back; and every refusal is
one line with the next step. Real git: a bare repository and clones of it in tmp_path."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

from ..conftest import clone, git, mdmem_in_process
from .conftest import project_repo
from .test_sync import add, append, found, run

PAYLOAD = '[core]\n\tfsmonitor = "touch {marker}; false"\n'


def push_files(vault: Path, files: dict[str, str], message: str = "teammate's push") -> None:
    """Commit ``files`` as a teammate would (plain git, any content) and push them."""
    for rel, text in files.items():
        p = vault / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    git(vault, "add", "-f", "--", *files)
    git(vault, "commit", "-q", "-m", message, env={"MDMEM_SKIP_HOOK": "1"})
    git(vault, "push", "-q")


def one_line(err: str) -> str:
    assert "Traceback" not in err and err.strip(), err
    return err.strip()


@pytest.mark.parametrize("target", [".git/config", ".mdmem/lock", ".", "notes", "../outside.md", "notes/other.md"])
def test_a_pushed_copy_acts_only_on_the_note_its_name_belongs_to(
    clones: tuple[Path, Path, Path], tmp_path: Path, target: str
) -> None:
    _, a, b = clones
    marker = tmp_path / "PWNED"
    copy = "notes/meeting.conflict-1234567.md"
    push_files(
        a,
        {
            "notes/meeting.md": "# Meeting\n\nour own text\n",
            "notes/other.md": "# Other\n\nan unrelated note\n",
            copy: f"---\nconflict_of: {target}\nconflict_from: 1234567\n---\n" + PAYLOAD.format(marker=marker),
        },
    )
    run(b, "sync")
    config = (b / ".git" / "config").read_text()
    outside = {p.name for p in tmp_path.iterdir()}
    before = {p: (b / p).read_bytes() for p in ("notes/meeting.md", "notes/other.md")}
    st = run(b, "status")
    # Listed only as the copy of the note its name says, and only when its frontmatter agrees.
    assert st["conflicts"] == ({copy: "notes/meeting.md"} if target == "notes/meeting.md" else {}), st
    for side in ("--both", "--theirs", "--ours"):
        err = run(b, "resolve", copy, side, check=False)
        assert isinstance(err, str), err
        assert "not a conflict copy" in one_line(err) and "notes/meeting.md" in err, err
    git(b, "status")  # a git command that would run core.fsmonitor
    assert (b / ".git" / "config").read_text() == config
    assert not marker.exists()
    assert {p.name for p in tmp_path.iterdir()} == outside  # no temporary file outside the vault
    assert {p: (b / p).read_bytes() for p in before} == before and (b / copy).exists()


def test_a_copy_or_note_that_is_a_link_is_never_read_or_written_through(clones: tuple[Path, Path, Path]) -> None:
    """A pushed symbolic link as a conflict copy (or as the note) would read .git/config into a note that
    sync then pushes, or write a teammate's text into it: refused."""
    _, a, b = clones
    (a / "notes").mkdir(exist_ok=True)
    (a / "notes" / "chart.png").write_bytes(b"\x89PNG ours")
    (a / "notes" / "chart.conflict-1234567.png").symlink_to("../.git/config")
    (a / "notes" / "plan.md").symlink_to("../.git/description")
    (a / "notes" / "plan.conflict-1234567.md").write_text(
        "---\nconflict_of: notes/plan.md\nconflict_from: 1234567\n---\nteammate text\n"
    )
    git(a, "add", "notes")
    git(a, "commit", "-q", "-m", "links", env={"MDMEM_SKIP_HOOK": "1"})
    git(a, "push", "-q")
    run(b, "sync")
    config, description = (b / ".git" / "config").read_bytes(), (b / ".git" / "description").read_bytes()
    for ref, side in (
        ("notes/chart.conflict-1234567.png", "--theirs"),
        ("notes/plan.conflict-1234567.md", "--theirs"),
        ("notes/plan.conflict-1234567.md", "--both"),
    ):
        err = run(b, "resolve", ref, side, check=False)
        assert isinstance(err, str) and "symbolic link" in one_line(err), err
    assert (b / "notes" / "chart.png").read_bytes() == b"\x89PNG ours"
    assert (b / ".git" / "config").read_bytes() == config
    assert (b / ".git" / "description").read_bytes() == description


def test_resolve_twice_or_on_a_missing_copy_says_so_in_one_line(clones: tuple[Path, Path, Path]) -> None:
    _, a, b = clones
    rel = "notes/team-skills-survey.md"
    append(a, rel, "Gecko text from A")
    append(b, rel, "Heron text from B")
    run(a, "sync")
    copy = run(b, "sync")["conflicts"][0]["copy"]
    assert run(b, "resolve", copy, "--theirs")["resolved"]
    for ref in (copy, "notes/team-skills-survey.conflict-7654321.md"):
        err = run(b, "resolve", ref, "--theirs", check=False)
        assert isinstance(err, str) and "no conflict copy" in one_line(err) and rel in err, err
    assert "Gecko text from A" in (b / rel).read_text()


def test_a_copy_with_broken_yaml_is_listed_and_resolvable(clones: tuple[Path, Path, Path]) -> None:
    _, a, b = clones
    rel = "notes/team-skills-survey.md"
    text = (a / rel).read_text()
    broken = text.replace("---\n", "---\ntags: [unclosed\n", 1)
    (a / rel).write_text(broken + "\nGecko text from A\n")
    git(a, "commit", "-q", "-am", "broken yaml on A", env={"MDMEM_SKIP_HOOK": "1"})
    append(b, rel, "Heron text from B")
    run(a, "sync")
    copy = run(b, "sync")["conflicts"][0]["copy"]
    assert run(b, "status")["conflicts"] == {copy: rel}
    done = run(b, "resolve", rel, "--both")
    assert done["resolved"] and done["copies"] == [copy] and not (b / copy).exists()
    kept = (b / rel).read_text()
    assert "Gecko text from A" in kept and "Heron text from B" in kept
    assert run(b, "status")["conflicts"] == {}


def test_a_copy_titled_by_its_heading_says_it_is_a_copy(clones: tuple[Path, Path, Path]) -> None:
    _, a, b = clones
    rel = "notes/heading-only.md"
    push_files(a, {rel: "# Heading only\n\nfirst version\n"})
    run(b, "sync")
    (a / rel).write_text("# Heading only\n\nbadger version from A\n")
    (b / rel).write_text("# Heading only\n\nstoat version from B\n")
    for v in (a, b):
        git(v, "commit", "-q", "-am", "edit", env={"MDMEM_SKIP_HOOK": "1"})
    run(a, "sync")
    copy = run(b, "sync")["conflicts"][0]["copy"]
    titles = {h["path"]: h["title"] for h in run(b, "search", "heading only version")["results"]}
    assert titles == {rel: "Heading only", copy: "Heading only (conflict copy)"}
    run(b, "resolve", copy, "--theirs")
    assert (b / rel).read_text() == "# Heading only\n\nbadger version from A\n"  # as it was on A


def test_sync_commits_only_the_vaults_paths_and_says_what_else_is_staged(tmp_path: Path) -> None:
    bare, a = project_repo(tmp_path)
    (a / "app.py").write_text("print('work in progress')\n")
    git(a, "add", "app.py")  # staged, not meant for sharing yet
    append(a / "memory", "notes/team-skills-survey.md", "Hand edit.")
    lines: list[str] = []
    from mdmem.api.vault import Vault

    with Vault.open(a / "memory") as v:
        report = v.sync(say=lines.append)
    assert report.committed == ["notes/team-skills-survey.md"] and report.pushed == 1
    pushed = git(a, "show", "--name-only", "--format=", "origin/main").split()
    assert pushed == ["memory/notes/team-skills-survey.md"]
    assert git(a, "diff", "--cached", "--name-only").split() == ["app.py"]  # still staged, not committed
    assert any("app.py" in ln and "staged" in ln for ln in lines), lines

    # A merge that git refuses because of those staged changes: one line naming them and what to do.
    c = clone(bare, tmp_path / "c", "memory")
    add(c / "memory", "From C", "Weasel notes.")
    run(c / "memory", "sync")
    add(a / "memory", "From A", "Mink notes.")
    err = run(a / "memory", "sync", check=False)
    assert isinstance(err, str) and "app.py" in one_line(err) and "git restore --staged" in err, err
    assert "nothing was merged" in err and not (a / ".git" / "MERGE_HEAD").exists()
    assert git(a, "diff", "--cached", "--name-only").split() == ["app.py"]


def test_local_changes_that_block_the_merge_are_named_with_the_next_step(clones: tuple[Path, Path, Path]) -> None:
    _, a, b = clones
    for v in (a, b):
        (v / "attachments").mkdir(exist_ok=True)
    push_files(a, {"attachments/chart.png": "base"})
    run(b, "sync")
    push_files(a, {"attachments/chart.png": "from A"})
    (b / "attachments" / "chart.png").write_text("edited here, not committed")
    err = run(b, "sync", check=False)
    assert isinstance(err, str) and "attachments/chart.png" in one_line(err), err
    assert "git stash" in err and "rerun mdmem sync" in err
    assert (b / "attachments" / "chart.png").read_text() == "edited here, not committed"


def test_a_second_sync_waits_for_the_first_instead_of_blaming_its_merge(clones: tuple[Path, Path, Path]) -> None:
    """The first sync holds the writer lock while its merge is in progress: the second waits for the
    lock (here: gives up after the timeout) instead of telling the user to commit that merge."""
    from mdmem.api.vault import Vault

    _, a, b = clones
    rel = "notes/team-skills-survey.md"
    append(a, rel, "A's line")
    run(a, "sync")
    append(b, rel, "B's line")
    git(b, "commit", "-q", "-am", "b", env={"MDMEM_SKIP_HOOK": "1"})
    git(b, "fetch", "-q")
    with Vault.open(b) as first, first.writer_lock():
        assert subprocess.run(["git", "merge", "origin/main"], cwd=b, capture_output=True).returncode != 0
        proc = mdmem_in_process("--vault", str(b), "sync", check=False, env={"MDMEM_LOCK_TIMEOUT": "0.3"})
        git(b, "merge", "--abort")
    assert proc.returncode == 1 and "Another mdmem process" in one_line(proc.stderr), proc.stderr
    assert "unfinished" not in proc.stderr


def test_a_ref_lock_race_during_fetch_is_retried_not_blamed_on_the_remote(clones: tuple[Path, Path, Path]) -> None:
    _, a, b = clones
    add(a, "Racing", "Quoll notes.")
    run(a, "sync")
    lock = b / ".git" / "refs" / "remotes" / "origin" / "main.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")  # another git process updating the remote-tracking ref for a moment
    timer = threading.Timer(0.6, lock.unlink)
    timer.start()
    try:
        report = run(b, "sync")
    finally:
        timer.join()
    assert isinstance(report, dict) and report["fetched"] == 1 and found(b, "quoll")
    lock.write_text("")  # and one that stays: the message names the lock, not the remote or access
    add(a, "Racing again", "Numbat notes.")
    run(a, "sync")
    err = run(b, "sync", check=False)
    lock.unlink()
    assert isinstance(err, str) and "lock" in one_line(err) and "access" not in err, err


def test_a_force_pushed_upstream_is_reported_before_old_history_is_merged_back(clones: tuple[Path, Path, Path]) -> None:
    bare, a, b = clones
    leaked = add(a, "Leaked", "The database password is hunter2-not-really.")
    run(a, "sync")
    run(b, "sync")
    assert (b / leaked).exists()
    git(a, "reset", "-q", "--hard", "HEAD~1")  # the leak is taken out of the history
    git(a, "push", "-q", "--force", "origin", "main")
    add(b, "Own work", "Dugong notes written on B.")
    head = git(b, "rev-parse", "HEAD")
    err = run(b, "sync", check=False)
    assert isinstance(err, str) and "force-pushed" in one_line(err) and "git rebase --onto" in err, err
    assert leaked.removesuffix(".md") not in git(bare, "ls-tree", "-r", "--name-only", "main")
    assert git(b, "rev-parse", "HEAD") == head and not (b / ".git" / "MERGE_HEAD").exists()
    err = run(b, "sync", check=False)  # the next sync still knows
    assert isinstance(err, str) and "force-pushed" in err
    # Following the advice: own work rebased onto the rewritten upstream, then sync pushes it alone.
    old = err.split("git rebase --onto origin/main ")[1].split()[0].rstrip(";,.")
    git(b, "rebase", "-q", "--onto", "origin/main", old, env={"MDMEM_SKIP_HOOK": "1"})
    report = run(b, "sync")
    assert isinstance(report, dict) and report["pushed"] == 1
    files = git(bare, "ls-tree", "-r", "--name-only", "main")
    assert "notes/own-work.md" in files and "notes/leaked.md" not in files
