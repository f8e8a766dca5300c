"""Issue 15, the agent's toolkit: set, diff/show (and history --diff), similar and profile, through the
CLI in process and the Python API; the MCP tools are in test_mcp.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mdmem.errors import BadValue
from mdmem.vault import Vault

from .conftest import git, mdmem_in_process

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
    path.write_text(path.read_text().replace("type: preference", "type: preference  # mine\nowner: ana"))
    git(tvault, "commit", "-qam", "my edit")
    before = path.read_text()
    _, out, _ = run(tvault, "set", "Prefer small pull requests", "salience=0.9", "tags=git, review",
                    "valid_until=2027-01-31", "--json")
    change = json.loads(out)
    assert change["changed"] and change["fields"] == {"salience": 0.9, "tags": ["git", "review"],
                                                       "valid_until": "2027-01-31"}
    after = path.read_text()
    assert "type: preference  # mine\nowner: ana\n" in after  # the user's comment and unknown key stay
    assert "salience: 0.9\n" in after and "tags: [git, review]\n" in after and "valid_until: 2027-01-31\n" in after
    assert after.split("---\n", 2)[2] == before.split("---\n", 2)[2]  # body untouched
    assert git(tvault, "log", "-1", "--format=%s").strip() == \
        'mdmem: set salience, tags, valid_until of "Prefer small pull requests"'
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
        change = v.set("Prefer small pull requests", {"salience": 0.2, "pinned": True, "tags": ["#a", "b"],
                                                      "scope": "project:acme"})
        assert change.fields == {"salience": 0.2, "pinned": True, "tags": ["a", "b"], "scope": "project:acme"}
        assert v.get(SMALL_PRS).scope == "project:acme"
        with pytest.raises(BadValue, match="tags: a tag looks like a secret"):
            v.set(SMALL_PRS, {"tags": ["ghp_" + "1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ"]})
