"""Git plumbing for the vector pack: a ref whose commit holds a tree of blobs, written and read without
a work tree (hash-object, mktree, commit-tree, update-ref, cat-file), fetched and pushed on its own.

The pack never touches the notes' branch, index or working tree. Each pack commit is written without a
parent, so a re-embedding leaves the old shards unreachable and ``git gc`` drops them."""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import MdmemError
from .gitsync import out, reason, run

LOCAL_REF = "refs/mdmem/vectors"
REMOTES = "refs/mdmem/remotes"  # fetched packs: refs/mdmem/remotes/<remote>/vectors (untrusted)


def remote_ref(remote: str) -> str:
    return f"{REMOTES}/{remote}/vectors"


def fetch_refspec(remote: str) -> str:
    """A glob, so a fetch from a remote without a pack is no error."""
    return f"+refs/mdmem/*:{REMOTES}/{remote}/*"


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of a tree: its ``mode``, ``kind`` (blob, tree, commit), object ``sha`` and ``size``."""

    mode: str
    kind: str
    sha: str
    size: int


def blob_sha(data: bytes) -> str:
    """The id git gives ``data`` as a blob (so unchanged shards are never written again)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def rev(top: Path, ref: str) -> str | None:
    proc = run(top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    return out(proc) or None if proc.returncode == 0 else None


def tree_of(top: Path, commit: str) -> str | None:
    proc = run(top, "rev-parse", "--verify", "--quiet", f"{commit}^{{tree}}", check=False)
    return out(proc) or None if proc.returncode == 0 else None


def tree(top: Path, treeish: str) -> dict[str, Entry]:
    """The entries of ``treeish`` (not recursive) by name; empty when it does not exist."""
    proc = run(top, "ls-tree", "-l", "-z", treeish, check=False)
    if proc.returncode != 0:
        return {}
    entries: dict[str, Entry] = {}
    for line in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if not line:
            continue
        meta, _, name = line.partition("\t")
        parts = meta.split()
        if len(parts) != 4:
            continue
        mode, kind, sha, size = parts
        entries[name] = Entry(mode, kind, sha, int(size) if size.isdigit() else -1)
    return entries


def blobs(top: Path, shas: list[str]) -> dict[str, bytes]:
    """The contents of these blobs, read by one ``git cat-file --batch``; a missing one is left out."""
    if not shas:
        return {}
    proc = run(top, "cat-file", "--batch", input="".join(f"{s}\n" for s in shas).encode())
    data, got, pos = proc.stdout, {}, 0
    for sha in shas:
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        pos = end + 1
        if len(header) != 3 or header[1] != b"blob":
            continue  # "<sha> missing", or not a blob
        size = int(header[2])
        got[sha] = data[pos : pos + size]
        pos += size + 1
    return got


def write_blobs(top: Path, datas: list[bytes]) -> list[str]:
    """Write these blobs into the object store by one ``git hash-object -w``; their ids in order."""
    if not datas:
        return []
    with tempfile.TemporaryDirectory(prefix="mdmem-pack-") as tmp:
        paths = []
        for i, data in enumerate(datas):
            p = Path(tmp) / str(i)
            p.write_bytes(data)
            paths.append(str(p))
        proc = run(top, "hash-object", "-w", "--no-filters", "--stdin-paths", input="\n".join(paths).encode() + b"\n")
    shas = out(proc).split()
    if len(shas) != len(datas):
        raise MdmemError(f"git hash-object wrote {len(shas)} of {len(datas)} shards in {top}")
    return shas


def make_tree(top: Path, entries: dict[str, tuple[str, str]]) -> str:
    """A tree of ``name → (kind, sha)`` (blobs and trees), written by ``git mktree``."""
    mode = {"tree": "040000", "blob": "100644"}
    lines = "".join(f"{mode[kind]} {kind} {sha}\t{name}\0" for name, (kind, sha) in sorted(entries.items()))
    return out(run(top, "mktree", "-z", input=lines.encode()))


def commit(top: Path, tree_sha: str, message: str) -> str:
    """A commit of ``tree_sha`` with no parent, by the repository's user (else "mdmem")."""
    import os

    from .git import git_env

    env = {**git_env(), "MDMEM_SKIP_HOOK": "1"}
    for key, conf, fallback in (
        ("GIT_AUTHOR_NAME", "user.name", "mdmem"),
        ("GIT_AUTHOR_EMAIL", "user.email", "mdmem@localhost"),
    ):
        if not out(run(top, "config", conf, check=False)) and not os.environ.get(key):
            env[key] = env[key.replace("AUTHOR", "COMMITTER")] = fallback
    proc = subprocess.run(
        ["git", "commit-tree", tree_sha, "-m", message], cwd=top, env=env, capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise MdmemError(f"git commit-tree failed in {top}: {reason(proc)}")
    return out(proc)


def update_ref(top: Path, ref: str, new: str, old: str | None) -> bool:
    """Point ``ref`` at ``new`` if it still points at ``old`` (None: does not exist); False if it moved."""
    proc = run(top, "update-ref", ref, new, old or "0" * 40, check=False)
    return proc.returncode == 0


def author(top: Path, ref: str) -> str | None:
    """Who made the commit ``ref`` points at ("name <email>"), as it says."""
    proc = run(top, "log", "-1", "--format=%an <%ae>", ref, "--", check=False)
    return out(proc) or None if proc.returncode == 0 else None


def fetch(top: Path, remote: str) -> str | None:
    """Fetch the remote's pack into ``remote_ref(remote)``; git's reason when that failed."""
    proc = run(top, "fetch", "--quiet", "--no-tags", remote, fetch_refspec(remote), check=False)
    return None if proc.returncode == 0 else reason(proc)


def push(top: Path, remote: str, expect: str | None) -> str | None:
    """Push the local pack to the remote's ``LOCAL_REF``, replacing it only if it is still ``expect`` (what
    was fetched: another machine's newer pack is never overwritten unseen); git's reason when refused."""
    lease = f"--force-with-lease={LOCAL_REF}:{expect or ''}"
    proc = run(top, "push", "--quiet", lease, remote, f"+{LOCAL_REF}:{LOCAL_REF}", check=False)
    return None if proc.returncode == 0 else reason(proc)


def remote_has_pack(top: Path, remote: str) -> bool:
    proc = run(top, "ls-remote", "--quiet", remote, LOCAL_REF, check=False)
    return proc.returncode == 0 and bool(out(proc))


def add_fetch_refspec(top: Path, remote: str) -> bool:
    """Have a plain ``git fetch`` of ``remote`` bring its pack too (once); whether it was added."""
    spec = fetch_refspec(remote)
    have = out(run(top, "config", "--get-all", f"remote.{remote}.fetch", check=False)).splitlines()
    if spec in have:
        return False
    run(top, "config", "--add", f"remote.{remote}.fetch", spec)
    return True


def remotes(top: Path) -> list[str]:
    return out(run(top, "remote", check=False)).split()
