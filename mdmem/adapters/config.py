"""Vault settings from ``mdmem.toml`` and ``MDMEM_*`` variables. Data only: no setting can run code."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from ..core.schema import SEQUENCE_EDGES
from .repository import RepositoryFiles, repository_files

CONFIG_FILE = "mdmem.toml"
# What a vault without mdmem.toml leaves out: the template's list (vault_template/mdmem.toml, a test keeps
# the two equal), so a vault reads the same before and after `mdmem init` writes the file.
DEFAULT_EXCLUDE = ("README.md", "AGENTS.md")


@dataclass(frozen=True, slots=True)
class Config:
    """Settings of one vault."""

    exclude: tuple[str, ...] = ()  # glob patterns (vault-relative) that are not notes
    include: tuple[str, ...] = ()  # glob patterns that are notes whatever ``exclude`` or ``repository`` say
    repository: tuple[str, ...] = ()  # the repository's own files (``adapters.repository``), left out too
    repository_why: str = ""  # why they are (what kind of repository the vault is)
    notes_dir: str = "notes"  # where `mdmem add` writes new notes
    git_commit: bool = True  # mutating commands commit the files they write
    lock_timeout: float = 30.0  # seconds a writer waits for another writer
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def not_notes(self) -> tuple[str, ...]:
        """The globs of files that are not notes: ``exclude`` and the repository's files."""
        return self.exclude + self.repository


def load_config(root: Path) -> Config:
    """Read ``mdmem.toml`` (optional) and apply ``MDMEM_*`` overrides."""
    data: dict[str, object] = {}
    path = root / CONFIG_FILE
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: {exc}. Fix the TOML syntax or delete the file.") from exc
    tables = {name: data.get(name) for name in ("vault", "git")}
    vault: dict[str, Any] = tables["vault"] if isinstance(tables["vault"], dict) else {}
    git: dict[str, Any] = tables["git"] if isinstance(tables["git"], dict) else {}
    exclude = vault.get("exclude", [] if path.is_file() else list(DEFAULT_EXCLUDE))
    if not isinstance(exclude, list) or not all(isinstance(e, str) for e in exclude):
        raise ConfigError(f"{path}: [vault] exclude must be a list of glob strings.")
    include = vault.get("include", [])
    if not isinstance(include, list) or not all(isinstance(e, str) for e in include):
        raise ConfigError(f'{path}: [vault] include must be a list of glob strings, e.g. ["CHANGELOG.md"].')
    skip_repository = vault.get("skip_repository_files", True)
    if not isinstance(skip_repository, bool):
        raise ConfigError(f"{path}: [vault] skip_repository_files must be true or false, got {skip_repository!r}.")
    notes_dir = str(vault.get("notes_dir", "notes")).strip("/")
    if ".." in Path(notes_dir).parts or Path(notes_dir).is_absolute():
        raise ConfigError(f"{path}: [vault] notes_dir must be a folder inside the vault.")
    repository = repository_files(root, notes_dir) if skip_repository else RepositoryFiles()
    commit = git.get("commit", True)
    if not isinstance(commit, bool):  # bool("no") is True
        raise ConfigError(f"{path}: [git] commit must be true or false, got {commit!r}.")
    if os.environ.get("MDMEM_GIT_COMMIT"):
        commit = os.environ["MDMEM_GIT_COMMIT"].lower() not in ("0", "false", "no", "off")
    try:
        timeout = float(os.environ.get("MDMEM_LOCK_TIMEOUT", vault.get("lock_timeout", 30.0)))
    except ValueError as exc:
        raise ConfigError(f"MDMEM_LOCK_TIMEOUT must be a number of seconds: {exc}") from exc
    if not 0.0 <= timeout < 86400:  # also refuses nan and inf: a writer would wait forever
        raise ConfigError(f"{path}: [vault] lock_timeout must be a number of seconds from 0 to 86400, got {timeout}.")
    site_urls(data)  # checked here, so every command reports a bad [site], not only the graph's
    return Config(
        exclude=tuple(exclude),
        include=tuple(include),
        repository=repository.patterns,
        repository_why=repository.why,
        notes_dir=notes_dir,
        git_commit=bool(commit),
        lock_timeout=timeout,
        extra=data,
    )


def auto_embed(data: dict[str, object]) -> bool:
    """[embed] auto in mdmem.toml (default true): give changed chunks their vectors after every write,
    inline when cheap, else in a background job. $MDMEM_AUTO_EMBED (0/1) overrides."""
    env = os.environ.get("MDMEM_AUTO_EMBED")
    if env:
        return env.strip().lower() not in ("0", "false", "no", "off")
    raw = data.get("embed", {})
    value = raw.get("auto", True) if isinstance(raw, dict) else True
    if not isinstance(value, bool):  # bool("no") is True
        raise ConfigError(f"[embed] auto must be true or false, got {value!r}.")
    return value


def site_urls(data: dict[str, object]) -> tuple[tuple[str, str], ...]:
    """[site] in mdmem.toml: the vault is also a published site, so a link to one of its pages is a
    link to the note (``url``: the site's address, or a list of them; ``folder``: the vault folder
    the site's root shows, default the vault's root). (canonical URL prefix, folder) pairs."""
    from ..core.refs import normalize_url

    raw = data.get("site")
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise ConfigError('[site] must be a table: url = "https://example.com/" (and folder = "notes").')
    urls = raw.get("url", [])
    urls = [urls] if isinstance(urls, str) else urls
    if not isinstance(urls, list) or not all(
        isinstance(u, str) and u.strip().lower().startswith(("http://", "https://")) for u in urls
    ):
        raise ConfigError(
            '[site] url must be an http(s) address or a list of them, e.g. url = "https://notes.example.com/".'
        )
    folder = raw.get("folder", "")
    if not isinstance(folder, str) or ".." in Path(folder).parts or Path(folder).is_absolute():
        raise ConfigError('[site] folder must be a folder inside the vault ("" for its root).')
    return tuple((normalize_url(u), folder.strip("/")) for u in urls)


@dataclass(frozen=True, slots=True)
class QuerySettings:
    """[query] in mdmem.toml: fusion weights and thresholds (measured with ``mdmem eval``)."""

    candidates: int = 50  # per leg
    rrf_k: int = 60
    bm25_weight: float = 1.0
    vector_weight: float = 0.3  # MiniLM is the weaker leg on LoCoMo (docs/retrieval.md has the figures)
    min_similarity: float = 0.25  # cosine floor: below it a vector match is noise
    strong_ratio: float = 2.0  # BM25 top score ≥ this × the second: skip the vector leg
    duplicate_similarity: float = 0.9  # notes at least this similar (best chunks) count as copies
    duplicate_places: int = 2  # a copy waits until this many other notes are placed after its twin
    expand: bool = False  # pseudo-relevance feedback list; off: it lowered LoCoMo's recall
    expand_weight: float = 0.5  # its weight in the fusion
    top_bonus: float = 0.01  # added to BM25's first hit: fusion kept burying it where it was the answer
    # Score-aware blending when BM25 cannot answer: when the best BM25 match covers less than
    # blend_coverage of the query's IDF mass, fusion moves towards a blend of normalised scores
    # (BM25 / its best + blend_vector_weight × the cosine's place between min_similarity and the best
    # cosine), fully at blend_coverage_full. RRF sees only ranks and buried clear vector wins on
    # paraphrases (``query`` found far fewer of them than ``vsearch``); LoCoMo's questions mostly
    # share words with their answers and keep RRF. Gold paraphrases and no-answer queries have a best
    # coverage ≤ .47, identifiers and keywords ~1; 0.35–0.5 was picked on the gold set and checked on
    # LoCoMo, which it leaves as it was (a blend from 0.3 cost it recall).
    blend_coverage: float = 0.5
    blend_coverage_full: float = 0.35
    blend_vector_weight: float = 1.0
    # In a large vault (large_vault_words) the blend's BM25 part is its score over the best one times
    # the share of the query the note holds: on a paraphrase over thousands of documents BM25's scores
    # are flat (every hit matched "make" or "copy" in a short title), so score alone put each of them
    # near the best and buried the note the vectors found. In a chat (LoCoMo) a turn that names the
    # speaker is often the answer however little else it shares: weighing coverage there cost recall.
    blend_by_coverage: bool = True
    # A clear vector winner (its cosine ≥ winner_cosine and winner_gap above the second's) goes first,
    # unless BM25's first note holds every word of the query and is another note.
    winner_gap: float = 0.15
    winner_cosine: float = 0.45
    # "Nothing relevant" (``rank.no_answer``): a name no note mentions with the best match holding under
    # blend_coverage of the query, or unknown_share of the query in words no note has, or
    # weak_unknown_share of it with no note closer than weak_similarity. Calibrated on the public
    # corpora's questions (benchmarks/corpora/), checked on the gold set and LoCoMo.
    unknown_share: float = 0.4
    weak_unknown_share: float = 0.3
    weak_similarity: float = 0.42
    # A large vault: its bodies hold this many words. Only there does a word's absence say much (the
    # rules above; in a LoCoMo conversation, ~8k words, or the gold vault, ~7k, an answerable question
    # often uses words no note does: those rules silenced answerable LoCoMo questions) and coverage
    # weigh the blend. The public corpora hold 250k-830k.
    large_vault_words: int = 50_000
    section_coverage: bool = True  # blend by the best section's coverage of the query (see hybrid._section_coverage)
    rerank_model: str = ""  # a local cross-encoder folder; empty = no rerank
    # "head": fusion and the rules on it choose the first ``head`` notes and one learned probability of
    # relevance orders them; "rules": fusion and the rules alone; "model": the probability ranks every
    # candidate (core/relevance.py; measured in docs/retrieval.md)
    ranking: str = "head"
    head: int = 10
    head_per_leg: int = 2  # each leg's first notes join the head when the fusion left them out
    # What says nothing in the vault is relevant: "rules" (rank.no_answer), "model" (its threshold), or
    # empty: the model's with ranking = "model", else the rules' (``verdict``; docs/retrieval.md).
    relevance: str = ""
    rerank_top: int = 30
    min_coverage: float = 0.0  # a BM25-only candidate must match this share of the query's IDF mass
    strong_similarity: float = 0.45  # a vector match this close passes the coverage floor anyway
    # Spreading along sequence edges: a hit lends this share of its score to the notes one link
    # away (and spread × spread_decay two links away). A chat turn's answer is usually the next
    # turn, which shares no words with the question (it raised LoCoMo's turn recall and first answers).
    spread: float = 0.2
    spread_decay: float = 0.5
    spread_hops: int = 2
    spread_types: tuple[str, ...] = SEQUENCE_EDGES
    # Only fragments lend and receive: a note of a few sentences (a chat turn) means little without
    # its neighbours, a long note stands alone (LoCoMo's sessions as one note each lost recall when
    # whole sessions spread to the next).
    spread_max_bytes: int = 2000

    def __post_init__(self) -> None:
        # Bounds a cloned vault's mdmem.toml cannot step out of (a huge candidate list or hop count
        # would make every query slow); the float settings must be real numbers.
        import math

        for name, low, high in (
            ("candidates", 1, 10_000),
            ("rrf_k", 1, 10_000),
            ("rerank_top", 0, 1_000),
            ("head", 0, 1_000),
            ("head_per_leg", 0, 100),
            ("large_vault_words", 0, 10**12),
            ("duplicate_places", 0, 100),
            ("spread_hops", 0, 4),
            ("spread_max_bytes", 0, 10_000_000),
        ):
            if not low <= getattr(self, name) <= high:
                raise ConfigError(f"[query] {name} must be from {low} to {high}, got {getattr(self, name)}.")
        if self.ranking not in ("head", "rules", "model"):
            raise ConfigError(f'[query] ranking must be "head", "rules" or "model", got {self.ranking!r}.')
        if self.relevance not in ("", "rules", "model"):
            raise ConfigError(f'[query] relevance must be "rules", "model" or "", got {self.relevance!r}.')
        if self.relevance == "model" and (self.ranking == "rules" or self.head == 0 and self.ranking == "head"):
            # the model's probability is computed only when it ranks: accepted here, it would be ignored
            raise ConfigError(
                '[query] relevance = "model" needs the model to rank: ranking = "head" (head > 0) or "model";'
                ' or leave relevance "".'
            )
        for name in (
            "bm25_weight",
            "vector_weight",
            "min_similarity",
            "strong_ratio",
            "duplicate_similarity",
            "expand_weight",
            "top_bonus",
            "min_coverage",
            "strong_similarity",
            "spread",
            "spread_decay",
            "blend_coverage",
            "blend_coverage_full",
            "blend_vector_weight",
            "winner_gap",
            "winner_cosine",
            "unknown_share",
            "weak_unknown_share",
            "weak_similarity",
        ):
            if not math.isfinite(getattr(self, name)):
                raise ConfigError(f"[query] {name} must be a finite number, got {getattr(self, name)}.")

    @property
    def verdict(self) -> str:
        """Whose verdict "nothing in the vault is relevant" is: "model" or "rules"."""
        return self.relevance or ("model" if self.ranking == "model" else "rules")

    @classmethod
    def from_config(cls, data: dict[str, Any], defaults: dict[str, Any] | None = None) -> QuerySettings:
        """From ``defaults`` (the embedding model's), then [query]/[rerank] in mdmem.toml, then
        $MDMEM_QUERY ("vector_weight=0.4,expand=false")."""
        raw = dict(defaults or {})
        raw.update(data.get("query", {}) if isinstance(data.get("query"), dict) else {})
        for item in filter(None, os.environ.get("MDMEM_QUERY", "").split(",")):
            key, _, value = item.partition("=")
            raw[key.strip()] = (
                value.strip().lower() not in ("false", "0", "no")
                if value.strip().lower() in ("true", "false", "yes", "no")
                else value.strip()
            )
        rerank = data.get("rerank", {})
        kwargs: dict[str, Any] = {}
        if raw:
            for f in (fld.name for fld in fields(cls) if fld.name != "rerank_model"):  # that one is [rerank] model
                if f in raw:
                    kind = type(getattr(cls(), f))
                    if kind is tuple:
                        value = raw[f]
                        items = value.split("|") if isinstance(value, str) else list(value)
                        kwargs[f] = tuple(str(v).strip() for v in items if str(v).strip())
                    else:
                        try:
                            kwargs[f] = raw[f] if kind is bool and isinstance(raw[f], bool) else kind(raw[f])
                        except (TypeError, ValueError) as exc:
                            word = {int: "a whole number", float: "a number"}.get(kind, kind.__name__)
                            raise ConfigError(f"[query] {f} = {raw[f]!r} must be {word}.") from exc
        if isinstance(rerank, dict) and rerank.get("model"):
            kwargs["rerank_model"] = str(rerank["model"])
        return cls(**kwargs)
