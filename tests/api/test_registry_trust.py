"""The user's list of vaults (``vaults.toml``) under concurrency and in odd places: concurrent writers
keep every name (each change is locked and atomic), and a FIFO, a device or a huge file in its place is
refused in one line instead of hanging or reading gigabytes. A link to a plain file (dotfiles) works."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ..conftest import mdmem_in_process


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "cfg" / "vaults.toml"
    monkeypatch.setenv("MDMEM_CONFIG", str(path))
    return path


def test_concurrent_adds_keep_every_name(config: Path, tmp_path: Path) -> None:
    """8 processes at once (6–8 used to print "Added" and exit 0 while 1–3 names stayed in the file)."""
    names = [f"v{i}" for i in range(8)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "mdmem", "vaults", "add", n, str(tmp_path / n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ},
        )
        for n in names
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert sorted(tomllib.loads(config.read_text())["vaults"]) == names
    assert not [p for p in config.parent.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "huge", "folder"])
def test_a_list_that_is_not_a_plain_small_file_is_refused_in_one_line(config: Path, kind: str) -> None:
    config.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(config)
    elif kind == "huge":
        config.write_text("# " + "x" * (2 << 20) + "\n")
    elif kind == "folder":
        config.mkdir()
    else:
        config.symlink_to(kind)
    for args in (["vaults"], ["vaults", "add", "w", "/tmp/w"]):
        proc = mdmem_in_process(*args, check=False, timeout=60)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert str(config) in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert config.is_symlink() or config.is_dir() or kind != "/dev/zero"  # left as it was


def test_a_link_to_a_plain_file_still_works(config: Path, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "vaults.toml"
    real.parent.mkdir()
    real.write_text('[vaults]\nhome = "/tmp/home-vault"\n')
    config.parent.mkdir(parents=True)
    config.symlink_to(real)
    assert "home" in mdmem_in_process("vaults").stdout
