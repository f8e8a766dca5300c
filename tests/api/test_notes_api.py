"""Issue 15, the agent's toolkit: set, diff/show (and history --diff), similar and profile, through the
CLI in process and the Python API; the MCP tools are in test_mcp.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mdmem.api.vault import Vault
from mdmem.core.errors import BadValue

from ..conftest import git, mdmem_in_process

SMALL_PRS = "notes/prefer-small-pull-requests.md"


@pytest.fixture(autouse=True)
def _hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")


@pytest.fixture
def tvault(tmp_path: Path) -> Path:
    """The template vault (linked notes, a handoff, preferences) in a fresh git repository."""
    vault = tmp_path / "v"
    mdmem_in_process("init", str(vault))
    return vault


def run(vault: Path, *args: str, check: bool = True) -> tuple[int, str, str]:
    proc = mdmem_in_process("--vault", str(vault), *args, check=check)
    return proc.returncode, proc.stdout, proc.stderr


# -- set ---------------------------------------------------------------------------------------------


def test_set_edits_only_the_named_keys_in_one_commit(tvault: Path) -> None:
    path = tvault / SMALL_PRS
    text = path.read_text().replace("type: preference", "type: preference  # mine\nowner: ana")
    if "updated:" not in text:
        text = text.replace("type: preference", "updated: 2024-01-02T03:04:05Z\ntype: preference", 1)
    path.write_text(text)
    git(tvault, "commit", "-qam", "my edit")
    updated = next(line for line in path.read_text().splitlines() if line.startswith("updated:"))
    before = path.read_text()
    _, out, _ = run(
        tvault,
        "set",
        "Prefer small pull requests",
        "salience=0.9",
        "tags=git, review",
        "valid_until=2027-01-31",
        "--json",
    )
    change = json.loads(out)
    assert change["changed"] and change["fields"] == {
        "salience": 0.9,
        "tags": ["git", "review"],
        "valid_until": "2027-01-31",
    }
    after = path.read_text()
    assert "type: preference  # mine\nowner: ana\n" in after  # the user's comment and unknown key stay
    assert "salience: 0.9\n" in after and "tags: [git, review]\n" in after and "valid_until: 2027-01-31\n" in after
    assert after.split("---\n", 2)[2] == before.split("---\n", 2)[2]  # body untouched
    assert updated + "\n" in after  # a metadata edit is no new content: git records when it was made
    assert (
        git(tvault, "log", "-1", "--format=%s").strip()
        == 'mdmem: set salience, tags, valid_until of "Prefer small pull requests"'
    )
    assert git(tvault, "status", "--porcelain").strip() == ""
    with Vault.open(tvault) as v:  # reindexed: the index reads the new values
        assert v.search("small pull requests", tag="review")[0].path == SMALL_PRS
        n = v.get(SMALL_PRS)
        assert (n.salience, n.valid_until) == (0.9, "2027-01-31")

    run(tvault, "set", SMALL_PRS, "valid_until=", "pinned=true")
    text = path.read_text()
    assert "valid_until" not in text and "pinned: true" in text
    assert git(tvault, "log", "-1", "--format=%s").strip().startswith("mdmem: set valid_until, pinned of")
    _, out, _ = run(tvault, "set", SMALL_PRS, "pinned=true")
    assert "nothing to do" in out


BAD_SETS = [
    (["salience=high"], "salience takes a number from 0 to 1"),
    (["confidence=1.5"], "confidence takes a number from 0 to 1"),
    (["type=opinion"], "type takes one of antipattern, context, conversation"),
    (["scope=acme"], "scope takes global, project:NAME or topic:NAME"),
    (["valid_from=next week"], "valid_from takes a date, YYYY-MM-DD"),
    (["pinned=maybe"], "pinned takes true or false"),
    (["tags=two words"], "tags takes tags separated by commas"),
    (["salience=0.9", "title=New"], "'title' is not a key mdmem set edits"),
    (["type="], "type cannot be removed"),
    (["salience"], "'salience' is not KEY=VALUE"),
    (["valid_from=2027-02-01", "valid_until=2027-01-01"], "valid_from (2027-02-01) is after valid_until"),
]


def test_set_refuses_bad_values_in_one_line_and_writes_nothing(tvault: Path) -> None:
    head = git(tvault, "rev-parse", "HEAD")
    before = (tvault / SMALL_PRS).read_text()
    for args, message in BAD_SETS:
        code, _, err = run(tvault, "set", SMALL_PRS, *args, check=False)
        assert code == 1 and message in err and len(err.strip().splitlines()) == 1, (args, err)
    assert (tvault / SMALL_PRS).read_text() == before and git(tvault, "rev-parse", "HEAD") == head


def test_set_through_the_python_api_takes_typed_values(tvault: Path) -> None:
    with Vault.open(tvault) as v:
        change = v.set(
            "Prefer small pull requests",
            {"salience": 0.2, "pinned": True, "tags": ["#a", "b"], "scope": "project:acme"},
        )
        assert change.fields == {"salience": 0.2, "pinned": True, "tags": ["a", "b"], "scope": "project:acme"}
        assert v.get(SMALL_PRS).scope == "project:acme"
        with pytest.raises(BadValue, match="tags: a tag looks like a secret"):
            v.set(SMALL_PRS, {"tags": ["ghp_" + "1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ"]})


# -- history --diff, diff, show ----------------------------------------------------------------------


def test_diff_and_show_follow_a_note_through_edits_and_a_rename(tvault: Path) -> None:
    first = git(tvault, "rev-parse", "HEAD").strip()
    run(tvault, "set", SMALL_PRS, "salience=0.9")
    git(tvault, "mv", SMALL_PRS, "notes/small-prs.md")
    git(tvault, "commit", "-qm", "rename")
    new_path = tvault / "notes/small-prs.md"

    # Default: since the previous version — the rename alone is no version, so the set is what changed.
    _, out, _ = run(tvault, "diff", "notes/small-prs.md", "--json")
    d = json.loads(out)
    assert d["old"]["commit"] == first and d["old"]["path"] == SMALL_PRS
    assert d["new"]["subject"] == "rename" and (d["added"], d["removed"]) == (1, 1)  # set leaves updated: alone
    assert "-salience: 0.6\n" in d["diff"] and "+salience: 0.9\n" in d["diff"]
    assert d["diff"].startswith(f"--- a/{SMALL_PRS}\n+++ b/notes/small-prs.md\n")

    # An edit not committed yet is the change since the last commit.
    new_path.write_text(new_path.read_text() + "Stacked PRs are fine.\n")
    _, out, err = run(tvault, "diff", "Prefer small pull requests")
    assert out.splitlines()[-1] == "+Stacked PRs are fine." and "as it is now" in err
    _, out, _ = run(tvault, "diff", "notes/small-prs.md", first, "--json")  # since a given revision
    assert json.loads(out)["added"] == 2  # salience and the new line (set leaves updated: alone)

    _, out, err = run(tvault, "show", f"Prefer small pull requests@{first}")
    assert "salience: 0.6\n" in out and "Stacked" not in out and f"{SMALL_PRS} at {first[:8]}" in err
    _, out, _ = run(tvault, "show", "notes/small-prs.md@HEAD~1", "--json")
    at = json.loads(out)
    assert at["revision"]["path"] == SMALL_PRS and "salience: 0.9\n" in at["text"] and at["rev"] == "HEAD~1"

    _, out, _ = run(tvault, "history", "notes/small-prs.md", "--diff", "--json")
    log = json.loads(out)["versions"][0]["git_log"]
    assert [c["subject"] for c in log][0] == "rename" and len(log) == 3
    assert log[1]["diff"].count("\n+salience: 0.9") == 1 and log[2]["diff"].startswith("--- /dev/null\n")
    _, out, _ = run(tvault, "history", "notes/small-prs.md", "--json")
    assert "diff" not in json.loads(out)["versions"][0]["git_log"][0]  # without --diff the JSON is as before
    _, out, _ = run(tvault, "history", "notes/small-prs.md", "--diff", "-n", "1")
    assert "+salience" not in out and "the newest 1 of 3 commits" in out


def test_diff_and_show_errors_name_the_next_step(tvault: Path, vault_dir: Path) -> None:
    run(tvault, "add", "--title", "Later note", "--body", "written after the first commit", "--no-dedupe")
    cases = [
        (tvault, ["show", f"{SMALL_PRS}@nope"], "git knows no revision 'nope'"),
        (tvault, ["diff", SMALL_PRS, "nope"], "git knows no revision 'nope'"),
        (tvault, ["show", SMALL_PRS], "Name a revision: mdmem show"),
        (tvault, ["show", "Later note@HEAD~1"], "was not in the vault at HEAD~1"),
        (vault_dir, ["diff", "notes/with-id.md"], "is not in a git repository"),
    ]
    (tvault / "notes/draft.md").write_text("# Draft\n")
    cases.append((tvault, ["diff", "notes/draft.md"], "has not been committed yet"))
    for vault, args, message in cases:
        code, _, err = run(vault, *args, check=False)
        assert code == 1 and message in err and len(err.strip().splitlines()) == 1, (args, err)


# -- similar -----------------------------------------------------------------------------------------


def test_similar_fuses_words_and_vectors_leaves_the_note_out_and_marks_links(tvault: Path) -> None:
    copy = (
        "Prefer Hotwire for new frontends: the team knows Rails, Turbo frames keep pages fast, "
        "and the budget has no room for a separate frontend team."
    )
    run(tvault, "add", "--title", "Hotwire over React for frontends", "--type", "idea", "--no-dedupe", "--body", copy)
    with Vault.open(tvault) as v:
        words = v.similar("Use Hotwire for new frontends", vectors=False)
        assert not words.vectors and words.path == "notes/use-hotwire-for-new-frontends.md"
        by_title = {n.title: n for n in words.results}
        assert "Use Hotwire for new frontends" not in by_title
        assert by_title["Team skills survey"].linked == "out"  # the note's caused_by link
        assert by_title["Hotwire over React for frontends"].linked is None
        assert all(n.cosine is None for n in words.results)
        v.embed()
        both = v.similar("Use Hotwire for new frontends", limit=3)
        assert both.vectors and both.results[0].title == "Hotwire over React for frontends"
        assert both.results[0].cosine is not None and both.results[0].cosine > 0.5
        assert [n.title for n in v.similar("Use Hotwire for new frontends", type="research").results] == [
            "Team skills survey"
        ]
    _, out, _ = run(tvault, "similar", "m-example-hotwire", "-n", "2")
    assert out.startswith("like Use Hotwire for new frontends") and " 1. Hotwire over React for frontends" in out


# -- profile -----------------------------------------------------------------------------------------


def test_profile_gives_standing_facts_then_recent_context_within_the_budget(tvault: Path) -> None:
    run(
        tvault,
        "add",
        "--title",
        "I am Ana, backend lead",
        "--type",
        "fact",
        "--tag",
        "identity",
        "--no-dedupe",
        "--body",
        "Ana runs the payments backend and reviews all schema changes.",
    )
    run(
        tvault,
        "add",
        "--title",
        "Flaky CI on macOS runners",
        "--type",
        "problem",
        "--no-dedupe",
        "--body",
        "The macOS runners time out on the integration suite twice a week.",
    )
    with Vault.open(tvault) as v:
        p = v.profile()
        sections = {i.title: i.why for i in p.items}
        assert sections["Use Hotwire for new frontends"] == "standing"  # pinned
        assert sections["I am Ana, backend lead"] == "standing"  # tagged identity
        assert sections["Flaky CI on macOS runners"] == "recent" and sections["Handoff 2026-05-14"] == "recent"
        assert "Prefer small pull requests" not in sections  # salience 0.6: not a standing fact
        assert p.text.index("## Standing facts") < p.text.index("## Recent context")
        assert 0 < p.tokens <= p.budget == 600 and p.omitted == 0
        assert v.profile().to_dict() == p.to_dict()  # the same answer every time
        small = v.profile(budget=80)
        assert small.tokens <= 80 and small.omitted > 0 and len(small.items) < len(p.items)
    _, out, _ = run(tvault, "profile", "--budget", "600")
    assert out == p.text


def test_profile_leaves_out_a_decision_another_note_supersedes(tvault: Path) -> None:
    """A hand-written successor (``supersedes:``, the old note left active): only the successor is
    an active decision; once the successor is forgotten the old one counts again."""
    (tvault / "notes" / "use-mysql.md").write_text(
        "---\nid: m-mysql\ntitle: Use MySQL for orders\ntype: decision\n---\nOrders live in MySQL.\n"
    )
    (tvault / "notes" / "use-postgres.md").write_text(
        "---\nid: m-postgres\ntitle: Use Postgres for orders\ntype: decision\nsupersedes: m-mysql\n---\n"
        "Orders moved to Postgres.\n"
    )
    git(tvault, "add", "-A")
    git(tvault, "commit", "-qm", "two decisions")
    with Vault.open(tvault) as v:
        titles = [i.title for i in v.profile(budget=2000).items]
        assert "Use Postgres for orders" in titles and "Use MySQL for orders" not in titles
        v.forget("m-postgres")
        titles = [i.title for i in v.profile(budget=2000).items]
        assert "Use MySQL for orders" in titles and "Use Postgres for orders" not in titles
