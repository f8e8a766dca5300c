"""Named vaults: the user's list of vaults in $MDMEM_CONFIG, `mdmem vaults`, --vault NAME."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mdmem.api import registry
from mdmem.edges.agent_hooks import find_vault, run_hook

from ..conftest import mdmem_in_process, snapshot


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config" / "vaults.toml"
    monkeypatch.setenv("MDMEM_CONFIG", str(path))
    return path


def listed(*args: str) -> dict[str, dict[str, object]]:
    out = json.loads(mdmem_in_process("vaults", "--json", *args).stdout)
    return {v["name"]: v for v in out["vaults"]}


def test_config_file_location(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert registry.config_path() == tmp_path / "home" / ".config" / "mdmem" / "vaults.toml"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert registry.config_path() == tmp_path / "xdg" / "mdmem" / "vaults.toml"
    monkeypatch.setenv("MDMEM_CONFIG", str(tmp_path / "mine.toml"))
    assert registry.config_path() == tmp_path / "mine.toml"


def test_add_list_default_remove(config: Path, vault_dir: Path, tmp_path: Path) -> None:
    r = mdmem_in_process("vaults")
    assert "No named vaults yet" in r.stdout and not config.exists()

    r = mdmem_in_process("vaults", "add", "work", str(vault_dir), "--default")
    assert f"Added 'work' → {vault_dir}" in r.stdout
    (tmp_path / "later").mkdir()
    mdmem_in_process("vaults", "add", "later_1", str(tmp_path / "later"), cwd=tmp_path)
    mdmem_in_process("vaults", "add", "gone", "missing", cwd=tmp_path)  # stored absolute, need not exist

    v = listed()
    assert list(v) == ["work", "later_1", "gone"]
    assert v["work"] == {"name": "work", "path": str(vault_dir), "default": True, "status": "not a vault yet"}
    assert v["gone"]["path"] == str(tmp_path / "missing") and v["gone"]["status"] == "missing folder"
    assert v["later_1"]["default"] is False

    mdmem_in_process("init", str(tmp_path / "later"))
    assert listed()["later_1"]["status"] == "ok"
    text = mdmem_in_process("vaults").stdout
    assert text.splitlines()[0].split() == ["*", "work", str(vault_dir), "not", "a", "vault", "yet"]

    r = mdmem_in_process("vaults", "default", "later_1")
    assert "Default vault: 'later_1'" in r.stdout
    assert [n for n, e in listed().items() if e["default"]] == ["later_1"]

    r = mdmem_in_process("vaults", "remove", "later_1", "--json")
    assert json.loads(r.stdout)["action"] == "removed"
    assert set(listed()) == {"work", "gone"} and not any(e["default"] for e in listed().values())
    assert (tmp_path / "later" / "mdmem.toml").is_file()  # the vault itself is left alone


def test_names_are_checked_and_taken_once(config: Path, vault_dir: Path) -> None:
    for bad in ("my vault", "a/b", "ü", ""):
        r = mdmem_in_process("vaults", "add", bad, str(vault_dir), check=False)
        assert r.returncode == 1 and "letters, digits" in r.stderr, (bad, r.stderr)
    mdmem_in_process("vaults", "add", "work", str(vault_dir))
    before = config.read_bytes()
    r = mdmem_in_process("vaults", "add", "work", "/elsewhere", check=False)
    assert r.returncode == 1 and "already registered" in r.stderr and config.read_bytes() == before
    for args in (("remove", "nope"), ("default", "nope")):
        r = mdmem_in_process("vaults", *args, check=False)
        assert r.returncode == 1 and "No vault named 'nope' (registered: work)" in r.stderr


def test_paths_that_need_escaping_round_trip(config: Path, tmp_path: Path) -> None:
    odd = tmp_path / 'quote " back \\ tab\t'
    odd.mkdir()
    mdmem_in_process("vaults", "add", "odd", str(odd))
    assert registry.load().vaults == {"odd": str(odd)}
    assert registry.resolve("odd") == odd


def test_vault_option_takes_a_name(config: Path, vault_dir: Path, tmp_path: Path) -> None:
    mdmem_in_process("vaults", "add", "work", str(vault_dir))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = mdmem_in_process("--vault", "work", "search", "hotwire", "--json", cwd=elsewhere)
    assert any(h["id"] == "m-fixture01" for h in json.loads(r.stdout)["results"])
    r = mdmem_in_process("search", "hotwire", "--json", cwd=elsewhere, env={"MDMEM_VAULT": "work"})
    assert json.loads(r.stdout)["results"]


def test_an_existing_folder_wins_over_a_name(config: Path, vault_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    mdmem_in_process("init", str(other))
    mdmem_in_process("vaults", "add", "work", str(other))
    (tmp_path / "work").symlink_to(vault_dir)  # a folder called "work" where the command runs
    r = mdmem_in_process("--vault", "work", "status", "--json", cwd=tmp_path)
    assert json.loads(r.stdout)["vault"] == str(vault_dir)
    r = mdmem_in_process("--vault", "work", "status", "--json", cwd=other)
    assert json.loads(r.stdout)["vault"] == str(other)


def test_unknown_names_and_missing_folders(config: Path, vault_dir: Path, tmp_path: Path) -> None:
    r = mdmem_in_process("--vault", "nope", "search", "x", check=False, cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "no registered vault named 'nope'" in r.stderr and "mdmem vaults" in r.stderr
    r = mdmem_in_process("--vault", str(tmp_path / "no" / "such"), "search", "x", check=False)
    assert r.returncode == 1 and "No folder at" in r.stderr
    mdmem_in_process("vaults", "add", "moved", str(tmp_path / "moved"))
    r = mdmem_in_process("--vault", "moved", "search", "x", check=False, cwd=tmp_path)
    assert r.returncode == 1 and "registered at" in r.stderr and "mdmem vaults remove moved" in r.stderr


def test_default_vault_outside_any_vault(config: Path, vault_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    r = mdmem_in_process("search", "hotwire", check=False, cwd=outside)
    assert r.returncode == 1 and "No mdmem vault at or above" in r.stderr and "mdmem vaults add" in r.stderr
    other = tmp_path / "other"
    mdmem_in_process("init", str(other))
    mdmem_in_process("vaults", "add", "work", str(vault_dir), "--default")
    r = mdmem_in_process("status", "--json", cwd=outside)
    assert json.loads(r.stdout)["vault"] == str(vault_dir)
    r = mdmem_in_process("status", "--json", cwd=other)  # the vault you are in comes first
    assert json.loads(r.stdout)["vault"] == str(other)


def test_malformed_config_is_one_line_and_left_alone(config: Path, vault_dir: Path, tmp_path: Path) -> None:
    config.parent.mkdir(parents=True)
    for text in (
        "default = [\n",
        "[vaults]\nwork = 3\n",
        'default = "x"\n[vaults]\n',
        "colour = 1\n",
        '[vaults]\nwork = "relative/path"\n',
    ):
        config.write_text(text)
        for args in (
            ["vaults"],
            ["vaults", "add", "new", str(vault_dir)],
            ["vaults", "remove", "work"],
            ["vaults", "default", "work"],
            ["--vault", "work", "search", "x"],
        ):
            r = mdmem_in_process(*args, check=False, cwd=tmp_path)
            assert r.returncode == 1 and "Traceback" not in r.stderr, (text, args, r.stderr)
            assert r.stderr.count("\n") == 1 and str(config) in r.stderr and "fix the file" in r.stderr
            assert config.read_text() == text
    # A path is still a path: the broken file is not read for it.
    assert mdmem_in_process("--vault", str(vault_dir), "search", "hotwire").stdout


def test_removing_never_touches_the_notes(config: Path, git_vault: Path) -> None:
    before = snapshot(git_vault)
    mdmem_in_process("vaults", "add", "work", str(git_vault), "--default")
    mdmem_in_process("vaults", "remove", "work")
    assert snapshot(git_vault) == before and (git_vault / ".mdmem").is_dir()
    assert registry.load().vaults == {}


def test_the_hooks_find_a_vault_by_name(
    config: Path, git_vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    payload = {"session_id": "s-1", "cwd": str(outside), "prompt": "why did we pick Hotwire for the frontend?"}
    assert find_vault(None, payload) is None
    mdmem_in_process("vaults", "add", "work", str(git_vault))
    assert find_vault("work", payload) == git_vault
    assert find_vault(str(git_vault), payload) == git_vault
    assert find_vault("nope", payload) is None and "no registered vault named 'nope'" in capsys.readouterr().err
    assert find_vault(None, payload) is None  # no default yet
    mdmem_in_process("vaults", "default", "work")
    assert find_vault(None, payload) == git_vault

    printed: list[str] = []
    assert run_hook("prompt", "work", json.dumps(payload), out=printed.append) == 0
    context = json.loads(printed[0])["hookSpecificOutput"]["additionalContext"]
    assert "Hotwire decision" in context
