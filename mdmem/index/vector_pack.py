"""The vector pack: chunk vectors keyed by (model fingerprint, chunk hash), carried by git in a ref of its
own (``refs/mdmem/vectors``), so another clone takes them instead of running the model.

Layout: the pack commit's tree holds one folder per model fingerprint, and in it up to 256 shards named by
the first two hex digits of the chunk hash; an update rewrites only the shards whose chunks changed (an
unchanged shard is the same blob). A shard is ``MAGIC``, one JSON line (model, dim, dtype, count), the
chunk hashes (12 bytes each, sorted) and their vectors as mdmem keeps them everywhere (``vector_code``: a
scale and 4 bits a dimension, 194 bytes for MiniLM), so a vector from the pack is the very vector the first
machine used, and the pack is a fraction of the notes' size.

A fetched pack is untrusted: only the folder of the local model's fingerprint is read, only blobs named as
shards and under ``MAX_SHARD_BYTES``, each checked whole; before any of its vectors is used, a random
sample is embedded here and must agree (cosine ``MIN_COSINE``); the rest are marked unchecked and the
background job checks them at low priority. One disagreement distrusts the whole pack: its vectors are
dropped and the chunks embedded here. ``doctor`` names a distrusted pack and the author of its commit.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..adapters import vector_code
from ..adapters.vector_code import FORMAT

if TYPE_CHECKING:
    import numpy as np

    from ..adapters.embed import Embedder
    from .catalog_embeddings import EmbeddingCache

MAGIC = b"mdmem-vectors 2\n"  # 1: float16 vectors (before vectors were stored as q4)
HASH_BYTES = 12  # core.chunk: blake2b, 12 bytes, hex
SHARD_NAME = re.compile(r"^[0-9a-f]{2}$")
MAX_SHARD_BYTES = 16 << 20  # a shard of the biggest vaults holds a few MB; anything larger is refused
SAMPLE = 16  # pack vectors embedded here and compared before any of the pack is used
MIN_COSINE = 0.999  # the same model gives the same codes, bar a rare step; another model or a doctored vector not
CHECK_ROUND = 256  # the background check embeds this many pack vectors a round
STATE_FILE = "pack.json"


class Semantic(Protocol):
    """What the pack uses of the vector side (``semantic.Semantic``): its store (state folder, catalogue),
    its embedding cache and its embedder."""

    @property
    def store(self) -> Any: ...
    @property
    def cache(self) -> EmbeddingCache: ...
    @property
    def embedder(self) -> Embedder: ...


class PackRefused(Exception):
    """A shard that is not what a pack shard must be (its reason)."""


@dataclass(frozen=True, slots=True)
class Taken:
    """What one look into the fetched packs gave: ``vectors`` taken, ``sampled`` checked before use, and a
    ``refused`` pack's reason (then nothing was taken from it)."""

    vectors: int = 0
    sampled: int = 0
    refused: str | None = None


# -- the shard format ------------------------------------------------------------------------------


def encode(model: str, dim: int, items: dict[str, bytes]) -> bytes:
    """A shard of ``hash → encoded vector`` (``vector_code.encode``), in hash order (the same vectors: the
    same bytes)."""
    order = sorted(items)
    head = json.dumps({"model": model, "dim": dim, "dtype": FORMAT, "count": len(order)}, sort_keys=True)
    return MAGIC + head.encode() + b"\n" + b"".join(bytes.fromhex(h) for h in order) + b"".join(items[h] for h in order)


def decode(data: bytes, model: str, dim: int) -> dict[str, bytes]:
    """``hash → encoded vector`` of a shard made for ``model`` (``dim`` wide); ``PackRefused`` else."""
    if len(data) > MAX_SHARD_BYTES:
        raise PackRefused(f"a shard of {len(data)} bytes (at most {MAX_SHARD_BYTES})")
    if not data.startswith(MAGIC):
        raise PackRefused("a shard that is not an mdmem vector shard")
    end = data.find(b"\n", len(MAGIC), len(MAGIC) + 4096)
    try:
        head = json.loads(data[len(MAGIC) : end]) if end > 0 else None
        if not isinstance(head, dict):
            raise TypeError
        count = int(head["count"])
    except (ValueError, TypeError, KeyError):
        raise PackRefused("a shard whose header is unreadable") from None
    if head.get("model") != model or head.get("dim") != dim or head.get("dtype") != FORMAT:
        raise PackRefused(f"a shard of another model or precision ({head.get('model')}, {head.get('dtype')})")
    body = data[end + 1 :]
    width = vector_code.width(dim)
    if count < 0 or len(body) != count * (HASH_BYTES + width):
        raise PackRefused("a shard whose length does not match its header")
    vecs = body[count * HASH_BYTES :]
    return {body[i * HASH_BYTES : (i + 1) * HASH_BYTES].hex(): vecs[i * width : (i + 1) * width] for i in range(count)}


def floats(raw: bytes, dim: int) -> np.ndarray:
    """An encoded vector's values; ``PackRefused`` when it is not one."""
    values = vector_code.decode(raw, dim)
    if values is None:
        raise PackRefused("a vector whose codes or scale are out of range")
    return values


# -- reading and writing a pack in git ----------------------------------------------------------------


def read(top: Path, commit: str, model: str, dim: int, want: Iterable[str]) -> dict[str, bytes]:
    """The vectors of ``want`` (chunk hashes) in the pack at ``commit``: only shards of ``model``'s
    folder that hold one of them are read; ``PackRefused`` on any shard that is not a shard."""
    from ..adapters import gitpack

    wanted = set(want)
    folder = gitpack.tree(top, commit).get(model)
    if folder is None or folder.kind != "tree" or folder.mode != "040000":
        return {}
    shards = gitpack.tree(top, folder.sha)
    prefixes = {h[:2] for h in wanted}
    todo: dict[str, str] = {}
    for name, entry in shards.items():
        if name not in prefixes or not SHARD_NAME.match(name):
            continue
        if entry.kind != "blob" or entry.mode != "100644":
            raise PackRefused(f"{model}/{name} is a {entry.kind} ({entry.mode}), not a shard")  # no links followed
        if not 0 <= entry.size <= MAX_SHARD_BYTES:
            raise PackRefused(f"{model}/{name} holds {entry.size} bytes (at most {MAX_SHARD_BYTES})")
        todo[entry.sha] = name
    out: dict[str, bytes] = {}
    for sha, data in gitpack.blobs(top, list(todo)).items():
        for h, raw in decode(data, model, dim).items():
            if h in wanted and h[:2] == todo[sha]:
                out[h] = raw
    return out


def write(top: Path, model: str, dim: int, vectors: dict[str, bytes]) -> tuple[str | None, int]:
    """Make ``vectors`` the local pack (``LOCAL_REF``): a new commit without a parent whose shards that did
    not change are the old blobs. Returns (the new commit, or None when nothing changed; shards written)."""
    from ..adapters import gitpack

    by_shard: dict[str, dict[str, bytes]] = {}
    for h, raw in vectors.items():
        by_shard.setdefault(h[:2], {})[h] = raw
    old = gitpack.rev(top, gitpack.LOCAL_REF)
    old_folder = gitpack.tree(top, old).get(model) if old else None
    old_shards = gitpack.tree(top, old_folder.sha) if old_folder and old_folder.kind == "tree" else {}
    entries: dict[str, tuple[str, str]] = {}
    new: list[tuple[str, bytes]] = []
    for name, items in sorted(by_shard.items()):
        data = encode(model, dim, items)
        sha = gitpack.blob_sha(data)
        entries[name] = ("blob", sha)
        if name not in old_shards or old_shards[name].sha != sha:
            new.append((name, data))
    if old and not new and set(entries) == set(old_shards) and len(gitpack.tree(top, old)) == 1:
        return None, 0
    gitpack.write_blobs(top, [d for _, d in new])
    folder = gitpack.make_tree(top, entries)
    root = gitpack.make_tree(top, {model: ("tree", folder)})
    message = f"mdmem vectors: {len(vectors)} chunks of {model}\n\nmade by mdmem (notes' text never in here)"
    commit = gitpack.commit(top, root, message)
    if not gitpack.update_ref(top, gitpack.LOCAL_REF, commit, old):
        return None, 0  # another process wrote one meanwhile: its pack stands
    return commit, len(new)


# -- what a vault does with them ---------------------------------------------------------------------


def load_state(sem: Semantic) -> dict[str, Any]:
    from ..adapters.plain import read_plain

    try:
        data = json.loads(read_plain(sem.store.state.dir / STATE_FILE, 1 << 20) or "{}")
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def save_state(sem: Semantic, data: dict[str, Any]) -> None:
    from ..adapters.files import atomic_write

    atomic_write(sem.store.state.dir / STATE_FILE, json.dumps(data, indent=2, sort_keys=True) + "\n")


def repository(sem: Semantic) -> Path | None:
    from ..adapters.git import find_git_dir

    return find_git_dir(sem.store.state.root)


def take(sem: Semantic, missing: list[str]) -> Taken:
    """Fill the embedding cache with what the fetched packs hold of ``missing`` (chunk hashes without a
    vector), a pack's first use checked on a random sample. Never raises: a pack that cannot be read is
    as good as none."""
    top = repository(sem)
    if top is None or len(missing) <= SAMPLE:
        return Taken()  # checking a sample costs what embedding these few does
    from ..adapters import gitpack

    try:
        state = load_state(sem)
        seen = state.setdefault("remotes", {})
        total = sampled = 0
        refused = None
        for remote in gitpack.remotes(top):
            commit = gitpack.rev(top, gitpack.remote_ref(remote))
            if commit is None:
                continue
            mark = seen.get(remote) or {}
            if mark.get("commit") == commit and mark.get("trusted") is False:
                continue  # distrusted: not read again until another pack is fetched
            need = sem.cache.missing(sem.embedder.fingerprint, missing)
            if len(need) <= SAMPLE:
                break
            got, checked, why = _take_one(sem, top, commit, need, trusted=mark.get("commit") == commit)
            seen[remote] = {
                "commit": commit,
                "author": gitpack.author(top, commit),
                "trusted": why is None,
                "reason": why,
                "taken": int(mark.get("taken", 0) if mark.get("commit") == commit else 0) + got,
                "checked_at": time.time(),
            }
            total, sampled, refused = total + got, sampled + checked, refused or why
        state["from_pack"] = int(state.get("from_pack", 0)) + total
        save_state(sem, state)
        return Taken(total, sampled, refused)
    except Exception as exc:  # a damaged repository, a git that fails: the chunks are embedded here instead
        print(f"mdmem: the vector pack was not used ({type(exc).__name__}: {exc}).", file=sys.stderr)
        return Taken()


def _take_one(
    sem: Semantic,
    top: Path,
    commit: str,
    need: list[str],
    *,
    trusted: bool,
) -> tuple[int, int, str | None]:
    """(vectors taken, sampled, why refused) from the pack at ``commit``."""
    emb = sem.embedder
    try:
        found = read(top, commit, emb.fingerprint, emb.dim, need)
    except PackRefused as exc:
        return 0, 0, str(exc)
    if not found:
        return 0, 0, None
    try:
        values = {h: floats(raw, emb.dim) for h, raw in found.items()}
    except PackRefused as exc:
        return 0, 0, str(exc)
    sample: list[str] = []
    if not trusted:  # a pack seen before passed its sample; the background check covers the rest
        sample = random.SystemRandom().sample(sorted(values), min(SAMPLE, len(values)))
        why = agree(sem, {h: values[h] for h in sample}, texts(sem, sample))
        if why is not None:
            return 0, len(sample), why
    rest = [(h, v) for h, v in values.items() if h not in set(sample)]
    sem.cache.put_many(emb.fingerprint, [(h, values[h]) for h in sample])
    if check_all(sem):
        sem.cache.put_unchecked(emb.fingerprint, rest, commit)
    else:
        sem.cache.put_many(emb.fingerprint, rest)
    return len(found), len(sample), None


def check_all(sem: Semantic) -> bool:
    """[embed] check_pack: "all" (the default: the background job checks every vector a pack gave) or
    "sample" (a remote only trusted people push to: the sample before use is the whole check)."""
    from ..core.errors import ConfigError

    raw = sem.store.config.extra.get("embed", {})
    value = raw.get("check_pack", "all") if isinstance(raw, dict) else "all"
    if value not in ("all", "sample"):
        raise ConfigError(f'[embed] check_pack must be "all" or "sample", got {value!r}.')
    return value == "all"


def agree(sem: Semantic, vectors: dict[str, np.ndarray], texts: dict[str, str]) -> str | None:
    """None when the local model gives every one of these chunks (by ``texts``) its pack vector; else why."""
    import numpy as np

    order = [h for h in vectors if h in texts]
    if len(order) < len(vectors):
        return "the pack holds vectors for chunks that are not in this vault"
    if not order:
        return None
    local = sem.embedder.embed([texts[h] for h in order])
    packed = np.stack([vectors[h] for h in order])
    cos = np.sum(local * packed, axis=1) / np.maximum(
        np.linalg.norm(local, axis=1) * np.linalg.norm(packed, axis=1), 1e-12
    )
    worst = int(np.argmin(cos))
    if float(cos[worst]) < MIN_COSINE:
        return f"chunk {order[worst]}'s vector disagrees with the local model (cosine {float(cos[worst]):.3f})"
    return None


def check_rest(sem: Semantic, *, rounds: int | None = None) -> str:
    """The background check: embed the unchecked pack vectors here, ``CHECK_ROUND`` at a time, at low
    priority (the job is detached: nobody waits for it). On a disagreement, every vector still unchecked
    is dropped and its pack distrusted (the job then embeds those chunks). Returns what it did."""
    import os

    fp = sem.embedder.fingerprint
    done = 0
    if sem.cache.unchecked(fp, 1):
        try:
            os.nice(10)
        except (OSError, AttributeError):
            pass
    while rounds is None or rounds > 0:
        rows = sem.cache.unchecked(fp, CHECK_ROUND)
        if not rows:
            break
        hashes = [h for h, _ in rows]
        text = texts(sem, hashes)
        gone = [h for h in hashes if h not in text]  # chunks no longer in the vault: nothing to check
        vecs = sem.cache.get_many(fp, [h for h in hashes if h in text], sem.embedder.dim)
        why = agree(sem, vecs, text)
        if why is not None:
            dropped = sem.cache.drop_unchecked(fp)
            _distrust({s for _, s in rows}, sem, why, dropped)
            return f"a fetched vector pack disagreed with the local model ({why}): {dropped} vectors dropped"
        sem.cache.checked(fp, hashes)
        done += len(hashes) - len(gone)
        if rounds is not None:
            rounds -= 1
    return f"{done} pack vectors checked"


def texts(sem: Semantic, hashes: Iterable[str]) -> dict[str, str]:
    """The embedded text of these chunks (by hash) that the vault has."""
    cat = sem.store.catalog
    wanted = set(hashes)
    key_of = {h: k for k, h in cat.pending_hashes(every=True) if h in wanted}
    rows = cat.chunks_by_key(list(key_of.values()))
    return {h: rows[k]["embed_text"] for h, k in key_of.items() if k in rows}


def _distrust(commits: set[str], sem: Semantic, why: str, dropped: int) -> None:
    state = load_state(sem)
    state["from_pack"] = max(0, int(state.get("from_pack", 0)) - dropped)
    for mark in state.get("remotes", {}).values():
        if mark.get("commit") in commits:
            mark["trusted"] = False
            mark["reason"] = why
    save_state(sem, state)


def publish(sem: Semantic) -> str | None:
    """Write the local pack from the embedding cache: the vectors of the vault's chunks, this machine's and
    those a fetched pack gave that passed its sample (a pack distrusted later loses them from the cache,
    and so from the next pack). None outside git or without vectors; else a line."""
    import numpy as np

    top = repository(sem)
    if top is None:
        return None
    emb = sem.embedder
    fp = emb.fingerprint
    hashes = [h for _, h in sem.store.catalog.pending_hashes(every=True)]
    vecs = sem.cache.get_many(fp, hashes, emb.dim)
    if not vecs:
        return None
    raw = dict(zip(vecs, vector_code.encode(np.stack(list(vecs.values())))))
    commit, shards = write(top, fp, emb.dim, raw)
    if commit is None:
        return "vector pack up to date"
    state = load_state(sem)
    state["local"] = {"commit": commit, "chunks": len(raw), "written_at": time.time()}
    save_state(sem, state)
    return f"vector pack: {len(raw)} chunks ({shards} shard(s) rewritten)"


def share(sem: Semantic, remote: str) -> str:
    """``sync``'s step for the vectors: fetch ``remote``'s pack, take what it holds for chunks without a
    vector (sample-checked), write the local pack and push it unless the remote's is the same; a line."""
    from ..adapters import gitpack

    top = repository(sem)
    if top is None:
        return ""
    why = gitpack.fetch(top, remote)
    if why is not None:
        return f"vector pack not fetched: {why}"
    theirs = gitpack.rev(top, gitpack.remote_ref(remote))
    if (sem.store.state.dir / "embeddings.sqlite").is_file():
        fp = sem.embedder.fingerprint
        missing = sem.cache.missing(fp, [h for _, h in sem.store.catalog.pending_hashes(every=True)])
        taken = take(sem, missing)
        publish(sem)
        if taken.refused:
            return f"vector pack of {remote} refused: {taken.refused}"
    mine = gitpack.rev(top, gitpack.LOCAL_REF)
    if mine is None:
        return f"vector pack of {remote} fetched" if theirs else ""
    if theirs is not None and gitpack.tree_of(top, mine) == gitpack.tree_of(top, theirs):
        return "vector pack up to date"
    refused = gitpack.push(top, remote, theirs)
    if refused is not None:
        return f"vector pack not pushed ({refused}); the next sync tries again"
    gitpack.fetch(top, remote)  # the tracking ref now names what the remote holds
    return f"vector pack pushed to {remote}"


def report(sem: Semantic) -> dict[str, Any]:
    """For ``status`` and ``doctor``: chunks taken from packs, the local pack, each fetched one's verdict
    (commit, author, trusted, reason). Reads no model."""
    state = load_state(sem)
    unchecked = 0
    if state.get("remotes") and (sem.store.state.dir / "embeddings.sqlite").is_file():
        unchecked = len(sem.cache.unchecked(sem.embedder.fingerprint))
    return {
        "from_pack": int(state.get("from_pack", 0)),
        "unchecked": unchecked,
        "local": state.get("local"),
        "remotes": state.get("remotes", {}),
    }
