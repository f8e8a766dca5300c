"""Several vaults answering one question on one scale: ``search``, ``query``, ``recall`` and
``context`` with ``--vaults a,b`` or ``--all-vaults``, ``mdmem mcp --vaults``, the prompt hook's
personal vault.

Each vault runs its own pipeline (its BM25, its vectors, its graph, its priors), and the lists are
merged by *evidence*, a number that means the same in every vault (``rank.evidence``): how much of
the query a hit's words cover (IDF-weighted, a share) and, when the vaults share an embedding model,
its cosine to the query placed between the model's noise floor and "strong". Nothing else crosses
the gap: BM25 scores carry each vault's own IDF and length norms, RRF scores are ranks, and the
final scores are normalised to each vault's top hit, so a vault with nothing relevant would put its
best weak match at 1.0, level with another vault's answer. Each vault's own order is kept (its
pipeline knows best within one index); a hit is worth the best evidence at or below it in its list
(``rank.envelope``), and the lists interleave by that (``rank.merge_ranked``). A vault whose
pipeline says it has no answer (``info.relevant`` false) has its hits at half their evidence.

Hits and context items carry their vault's name (``vault``) and a qualified id, ``NAME:id``, which
``get`` (CLI and MCP) accepts (``split_ref``). Vaults share one embedder per model and embed each
query once (``OneQuery``): two vaults load one model. A vault named in the set whose folder is gone or
is not a vault yet is left out, and the answer says so (``info.skipped``); a name nobody registered is
an error (a typo should not answer from fewer vaults than asked for).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..adapters.embed import Wrapper
from ..core.errors import AmbiguousNote, ConfigError, MdmemError, NoteNotFound, VaultNotFound
from ..core.rank import evidence, merge_ranked
from ..core.schema import FilterArgs
from ..results.search import ContextItem, Hit, Hits, MemoryContext
from . import registry
from .reader import MODES, Ask, Mode

if TYPE_CHECKING:
    from ..results.reports import VaultStatuses
    from .vault import Vault

NO_ANSWER = 0.5  # a vault that says it has no answer (info.relevant false): its hits at this share of their evidence
QUALIFIED = re.compile(r"([A-Za-z0-9_-]+):(\S.*)\Z", re.S)  # NAME:REF (a vault name has no ":" or space)
HEADER = "Relevant memory from the mdmem vaults (type, title, key line, vault:id):\n"


@dataclass(slots=True)
class Member:
    """One vault of the set: its name (registered, else its folder's) and the open ``Vault``."""

    name: str
    vault: Vault


class OneQuery(Wrapper):
    """An embedder shared by the vaults of one model that embeds each query once (the last few kept):
    every vault's hybrid pipeline embeds the same text. Anything else goes to the embedder itself."""

    KEEP = 8

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.memo: dict[str, Any] = {}

    def embed(self, texts: Sequence[str], *, query: bool = False) -> Any:
        if not (query and len(texts) == 1):
            return self.inner.embed(texts, query=query)
        key = texts[0]
        if key not in self.memo:
            if len(self.memo) >= self.KEEP:
                self.memo.pop(next(iter(self.memo)))
            self.memo[key] = self.inner.embed(texts, query=True)
        return self.memo[key]


def select(
    values: Sequence[str] = (), *, all_vaults: bool = False
) -> tuple[list[tuple[str, Path]], list[dict[str, str]]]:
    """The vaults ``--vaults`` (names or folders) or ``--all-vaults`` names: (name, folder) of each that
    can answer, and {vault, path, why} of each left out (its folder is gone, or is not a vault yet).
    An unknown name, or a set with no vault left, is an error."""
    reg = registry.load()
    if all_vaults:
        values = list(reg.vaults)
        if not values:
            raise ConfigError(
                'No named vaults yet, so --all-vaults has none to search. "mdmem vaults add NAME PATH" names one.'
            )
    by_path = {registry.absolute(p): n for n, p in reg.vaults.items()}
    chosen: list[tuple[str, Path]] = []
    skipped: list[dict[str, str]] = []
    seen: set[str] = set()
    for value in values:
        value = value.strip()
        if not value:
            continue
        folder = Path(value).expanduser()
        if all_vaults:  # registered names only: a folder that happens to share a name never stands in
            name, where = value, registry.absolute(reg.vaults[value])
        elif folder.is_dir():
            where = registry.absolute(folder)
            name = by_path.get(where) or re.sub(r"[^A-Za-z0-9_-]+", "-", folder.resolve().name).strip("-") or "vault"
        elif value in reg.vaults:
            name, where = value, reg.vaults[value]
        else:
            known = ", ".join(reg.vaults) or "none registered yet"
            raise VaultNotFound(
                f"No folder and no registered vault named {value!r} (vaults: {known}). "
                f'"mdmem vaults" lists them; "mdmem vaults add {value} PATH" adds one.'
            )
        if where in seen:
            continue
        seen.add(where)
        state = registry.status(where)
        if state == registry.MISSING:
            skipped.append(
                {
                    "vault": name,
                    "path": where,
                    "why": f'no folder at {where}: move it back, or "mdmem vaults remove {name}"',
                }
            )
        elif state == registry.NOT_YET:
            skipped.append(
                {"vault": name, "path": where, "why": f'{where} is not a vault yet: "mdmem init {where}" makes it one'}
            )
        else:
            taken = {n for n, _ in chosen}
            label, i = name, 2
            while label in taken:
                label, i = f"{name}-{i}", i + 1
            chosen.append((label, Path(where)))
    if not chosen:
        why = "; ".join(f"{s['vault']}: {s['why']}" for s in skipped) or "none named"
        raise VaultNotFound(f"No vault of the set can answer ({why}).")
    return chosen, skipped


def vault_name(folder: Path) -> str:
    """The name answers across vaults give ``folder``: its registered name, else its folder's name."""
    where = registry.absolute(folder)
    for name, path in registry.load().vaults.items():
        if registry.absolute(path) == where:
            return name
    return re.sub(r"[^A-Za-z0-9_-]+", "-", Path(where).name).strip("-") or "vault"


def split_ref(ref: str, names: Iterable[str]) -> tuple[str, str] | None:
    """(vault, note reference) for a qualified reference ``NAME:REF`` whose NAME is one of ``names``,
    else None (an ordinary reference: a title such as "Decision: use X" names no vault)."""
    m = QUALIFIED.match(ref)
    return (m.group(1), m.group(2)) if m and m.group(1) in set(names) else None


def registered_ref(ref: str) -> tuple[str, Path, str] | None:
    """(name, folder, note reference) when ``ref`` is ``NAME:REF`` and NAME a registered vault, else None.
    The registry is read only for a reference of that shape."""
    m = QUALIFIED.match(ref)
    if m is None:
        return None
    reg = registry.load()
    if m.group(1) not in reg.vaults:
        return None
    return m.group(1), registry.resolve(m.group(1)), m.group(2)


def open_ref(ref: str, current: Vault | None) -> tuple[Vault, str, bool]:
    """The vault and the reference within it for ``get REF``: ``NAME:REF`` opens the registered vault
    NAME (the third item True: the caller closes it), anything else is ``current``'s. A reference that
    is both — a note of ``current`` by its whole text, and NAME:REF — is an error naming both."""
    from .vault import Vault

    found = registered_ref(ref)
    if found is None:
        if current is None:
            raise VaultNotFound(f"No vault to look {ref!r} up in: pass --vault NAME|PATH, or give NAME:REF.")
        return current, ref, False
    name, folder, rest = found
    if current is not None and current.root != folder.resolve():
        try:
            path = current.resolve(ref)
        except NoteNotFound:
            path = None
        if path is not None:
            raise AmbiguousNote(
                ref, [f"{path} (in {current.root})", f"{rest} in vault {name!r} (mdmem --vault {name} get {rest!r})"]
            )
    if current is not None and current.root == folder.resolve():
        return current, rest, False
    return Vault.open(folder), rest, True


def retrieval(mode: Mode) -> Callable[..., Hits]:
    """A ``VaultSet`` method that asks its question in ``mode``, called as ``Vault``'s is."""

    def read(
        self: VaultSet,
        text: str,
        limit: int = 10,
        *,
        filters: FilterArgs | None = None,
        explain: bool = False,
        vectors: bool = True,
        **given: Any,
    ) -> Hits:
        return self.ask(Ask(mode, text, limit, explain, vectors, FilterArgs.of(filters, **given)))

    read.__name__ = read.__qualname__ = mode
    read.__doc__ = f"{mode} in every vault, merged on one scale (as ``Vault.{mode}``)."
    return read


class VaultSet:
    """The vaults of one question, opened together (``open``); reads merged on one scale."""

    def __init__(self, members: list[Member], skipped: list[dict[str, str]] | None = None) -> None:
        self.members = members
        self.skipped = list(skipped or [])
        self.comparable: bool | None = None  # whether the vaults' cosines can be compared (one model)
        self.errors: list[dict[str, str]] = []  # vaults that failed the last read

    @classmethod
    def open(cls, values: Sequence[str] = (), *, all_vaults: bool = False) -> VaultSet:
        """The vaults ``values`` names (or every registered one), each opened."""
        from .vault import Vault

        chosen, skipped = select(values, all_vaults=all_vaults)
        return cls([Member(name, Vault.open(path)) for name, path in chosen], skipped)

    def close(self) -> None:
        for m in self.members:
            m.vault.close()

    def __enter__(self) -> VaultSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.members]

    def primary(self, vault: Vault | None) -> Member:
        """The member that is ``vault`` (the one --vault or the current folder names), else the first:
        where calls that name no vault go."""
        for m in self.members:
            if vault is not None and m.vault.root == vault.root:
                return m
        return self.members[0]

    def member(self, name: str) -> Member:
        for m in self.members:
            if m.name == name:
                return m
        raise VaultNotFound(f"No vault named {name!r} in this set (vaults: {', '.join(self.names)}).")

    def share_models(self) -> None:
        """One embedder per model for the whole set, embedding each query once (``OneQuery``); notes
        whether every vault uses the same model (then cosines compare)."""
        if self.comparable is not None:
            return
        shared: dict[Any, OneQuery] = {}
        models = set()
        for m in self.members:
            sem = m.vault.semantic
            try:
                settings = sem.settings
                emb = shared.get(settings)
                if emb is None:
                    emb = shared[settings] = OneQuery(sem.embedder)
                sem.embedder = emb  # the cached property, set once for the set
                models.add(settings.model)
            except MdmemError:
                continue  # a model setting that cannot load: that vault's own read says so
        self.comparable = len(models) <= 1

    # -- reads -----------------------------------------------------------------------------------

    def ask(self, question: Ask) -> Hits:
        """The question asked in every vault, merged by evidence (coverage, cosine): BM25 (no model is
        loaded), vectors (one model loaded once), the hybrid query or recall (``info.intent`` is the
        first vault's)."""
        return self._merged(question)

    search, vsearch, query, recall = (retrieval(m) for m in MODES)

    def _merged(self, ask: Ask) -> Hits:
        text, limit, explain = ask.text, ask.limit, ask.explain
        vectors = ask.vectors and ask.mode != "search"  # BM25 alone has no cosine to merge by
        if vectors:
            self.share_models()
        self.errors = []
        answers: list[tuple[Member, Hits]] = []
        each = replace(ask, explain=True)  # the merge reads each hit's signals
        for m in self.members:
            try:
                answers.append((m, each.of(m.vault)))
            except MdmemError as exc:
                if len(self.members) == 1:
                    raise
                self.errors.append({"vault": m.name, "path": str(m.vault.root), "why": str(exc)})
        if not answers:
            raise MdmemError(
                "No vault of the set could answer: " + "; ".join(f"{e['vault']}: {e['why']}" for e in self.errors)
            )
        lists = []
        for m, hits in answers:
            floor, strong = _settings(m) if vectors else NO_VECTORS
            scale = NO_ANSWER if hits.info.get("relevant") is False else 1.0
            lists.append(
                [scale * evidence(h.explain or {}, floor, strong, bool(vectors and self.comparable)) for h in hits]
            )
        out = Hits(
            query=text,
            info=self._info(answers, vectors),
            warnings=[f"{m.name}: {w}" for m, hits in answers for w in hits.warnings],
        )
        for li, pos, key in merge_ranked(lists, limit):
            m, hits = answers[li]
            h = hits[pos]
            parts = (
                {
                    **(h.explain or {}),
                    "evidence": round(lists[li][pos], 4),
                    "vault_rank": pos + 1,
                    "merged": round(key, 4),
                }
                if explain
                else None
            )
            out.append(qualified(h, m.name, round(key, 4), parts))
        return out

    def _info(self, answers: list[tuple[Member, Hits]], vectors: bool) -> dict[str, Any]:
        infos = [h.info for _, h in answers]
        first = dict(infos[0])
        info: dict[str, Any] = {k: first[k] for k in ("intent", "route", "window") if k in first}
        info["vaults"] = [
            {"vault": m.name, "hits": len(h), **({"relevant": False} if h.info.get("relevant") is False else {})}
            for m, h in answers
        ]
        info["merge"] = (
            "evidence: coverage and cosine"
            if vectors and self.comparable
            else "evidence: coverage (the vaults' models differ)"
            if vectors
            else "evidence: coverage"
        )
        info["stages"] = [f"{m.name}: " + " ".join(h.info.get("stages", [])) for m, h in answers]
        if all(i.get("relevant") is False for i in infos):
            info["relevant"] = False
            info["unknown"] = first.get("unknown", [])
        missing = self.skipped + self.errors
        if missing:
            info["skipped"] = missing
        cov = [i["coverage"] for i in infos if i.get("coverage") and not i["coverage"].get("complete")]
        if cov:
            info["coverage"] = cov[0]
        return info

    def context(
        self,
        prompt: str,
        budget: int = 600,
        *,
        scope: list[str] | None = None,
        vectors: bool | None = True,
        as_of: str | None = None,
        explain: bool = False,
    ) -> MemoryContext:
        """Memory for a prompt from every vault within ``budget`` tokens: each vault's pinned notes
        first (in turn, up to half the budget), then the relevant ones merged by evidence
        (``explain``: each item keeps its vault's ranking signals)."""
        if vectors is not False:
            self.share_models()
        parts = []
        for m in self.members:
            parts.append((m, m.vault.context(prompt, budget, scope=scope, vectors=vectors, as_of=as_of, explain=True)))
        return merge_contexts(parts, budget, comparable=bool(self.comparable), skipped=self.skipped, explain=explain)

    def status(self) -> VaultStatuses:
        """Each vault's status, by name (the vaults that could not be opened in ``skipped``)."""
        from ..results.reports import VaultStatuses

        return VaultStatuses({m.name: m.vault.status() for m in self.members}, list(self.skipped))

    def get(self, ref: str) -> tuple[Member, str]:
        """The member and the note path a reference names: ``NAME:REF`` in that vault; a plain
        reference when exactly one vault has it (else an error listing them)."""
        split = split_ref(ref, self.names)
        if split is not None:
            m = self.member(split[0])
            return m, m.vault.resolve(split[1])
        found = []
        for m in self.members:
            try:
                found.append((m, m.vault.resolve(ref)))
            except NoteNotFound:
                continue
        if len(found) == 1:
            return found[0]
        if not found:
            raise NoteNotFound(ref)
        raise AmbiguousNote(ref, [f"{m.name}:{path}" for m, path in found])


def qualified(h: Hit, name: str, score: float, explain: dict[str, Any] | None) -> Hit:
    """A hit as an answer across vaults gives it: ``NAME:id``, its vault, the merged score."""
    links = None if h.links is None else [replace(x, id=f"{name}:{x.id}") if x.kind == "note" else x for x in h.links]
    return replace(h, id=f"{name}:{h.id}", vault=name, score=score, explain=explain, links=links)


def merge_contexts(
    parts: Sequence[tuple[Member, MemoryContext]],
    budget: int,
    *,
    comparable: bool,
    thresholds: dict[str, tuple[float, float]] | None = None,
    skipped: Sequence[dict[str, str]] = (),
    explain: bool = False,
) -> MemoryContext:
    """One context from each vault's (asked with ``explain``): the pinned notes of every vault in turn
    while they fit half the budget, then the relevant notes by evidence (``merge_ranked``), each line
    as ``context`` writes it with the vault's name in its id."""
    from ..core.text import estimate_tokens
    from ..features.recall import memory_line

    used = estimate_tokens(HEADER)
    lines: list[str] = []
    items: list[ContextItem] = []
    seen: set[tuple[str, str]] = set()

    def take(m: Member, item: ContextItem, score: float | None) -> bool:
        nonlocal used
        if (m.name, item.path) in seen:
            return True
        try:
            body = m.vault.body(item.path)
        except (OSError, MdmemError):
            return True
        line = memory_line(item.type, item.title, body, f"{m.name}:{item.id}")
        cost = estimate_tokens(line)
        if used + cost > budget:
            return False
        used += cost
        seen.add((m.name, item.path))
        lines.append(line)
        items.append(
            replace(
                item,
                id=f"{m.name}:{item.id}",
                vault=m.name,
                explain=item.explain if explain else None,
                score=item.score if score is None else round(score, 4),
            )
        )
        return True

    pinned = [[i for i in ctx.items if i.why == "pinned"] for _, ctx in parts]
    full = False
    for turn in range(max((len(p) for p in pinned), default=0)):
        for (m, _), own in zip(parts, pinned):
            if turn < len(own) and (used > budget // 2 or not take(m, own[turn], None)):
                full = True
                break
        if full:
            break
    relevant = [[i for i in ctx.items if i.why == "relevant"] for _, ctx in parts]
    lists = []
    for m, own in zip((m for m, _ in parts), relevant):
        floor, strong = (thresholds or {}).get(m.name) or _settings(m)
        lists.append([evidence(i.explain or {}, floor, strong, comparable) for i in own])
    for li, pos, key in merge_ranked(lists, sum(len(x) for x in lists)):
        if not take(parts[li][0], relevant[li][pos], key):
            break
    contexts = [c for _, c in parts]
    return MemoryContext(
        HEADER + "".join(lines) if lines else "",
        used if lines else 0,
        budget,
        items,
        contexts[0].intent,
        round(sum(c.ms for c in contexts), 1),
        any(c.vectors for c in contexts),
        vaults=[m.name for m, _ in parts],
        skipped=list(skipped),
        warnings=tuple(f"{m.name}: {w}" for m, c in parts for w in c.warnings),
    )


NO_VECTORS = (0.25, 0.45)  # the similarity floor and "strong" of a vault whose vector side cannot answer


def _settings(m: Member) -> tuple[float, float]:
    """A member's similarity floor and "strong" similarity (``[query]``)."""
    try:
        qs = m.vault.semantic.query_settings
    except MdmemError:
        return NO_VECTORS
    return qs.min_similarity, qs.strong_similarity


def same_model(vaults: Iterable[Vault]) -> bool:
    """Whether the vaults embed with one model (their cosines compare)."""
    models = set()
    for v in vaults:
        try:
            models.add(v.semantic.settings.model)
        except MdmemError:
            return False
    return len(models) <= 1


def share_model(view: Vault, of: Vault) -> None:
    """``view`` embeds with the model of ``of``, one call at a time (``Semantic.share_embedder``): a
    server's views of one vault, each a ``Vault`` of its own, load the model once."""
    view.semantic.share_embedder(of.semantic)
