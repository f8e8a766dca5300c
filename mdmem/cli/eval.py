"""``mdmem eval``: retrieval quality (recall@k, MRR, nDCG@10) per mode on LoCoMo, the gold set and
public corpora."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..edges.evaluate import Report

DEFAULT_LOCOMO = Path("..") / "shared" / "data" / "locomo10.json"
DEFAULT_GOLD = Path("benchmarks") / "gold"


def _path_option(value: str | None, default: Path) -> Path | None:
    """An explicit path, the default if it exists, or None ("none" turns a dataset off)."""
    if value is not None:
        return None if value.lower() in ("", "none", "-") else Path(value)
    return default if default.exists() else None


@click.command("eval")
@click.option(
    "--locomo",
    "locomo_opt",
    metavar="PATH",
    help=f"LoCoMo locomo10.json [default: {DEFAULT_LOCOMO} if it exists; 'none' skips it].",
)
@click.option(
    "--gold",
    "gold_opt",
    metavar="PATH",
    help=f"Gold set folder (queries.yaml + vault/) [default: {DEFAULT_GOLD} if it exists; 'none' skips it].",
)
@click.option(
    "--level",
    type=click.Choice(["turn", "session", "both"]),
    default="both",
    show_default=True,
    help="LoCoMo: one note per turn, per session, or both.",
)
@click.option(
    "--modes",
    metavar="MODES",
    help="Comma-separated retrieval modes: grep (baseline), search, vsearch, query, "
    "query-relevance (query without priors), recall.  [default: all of them]",
)
@click.option("--by-category", is_flag=True, help="Add a row per LoCoMo category (multi-hop, temporal, …).")
@click.option("--by-kind", is_flag=True, help="Add a row per gold query kind (and corpus question kind).")
@click.option(
    "--corpus",
    "corpora",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    metavar="PATH",
    help="A local git clone of a corpus that a --questions file asks about (repeat "
    "both, in the same order); only read: the vault is checked out into the cache.",
)
@click.option(
    "--questions",
    "question_files",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    metavar="FILE",
    help="A corpus questions file (benchmarks/corpora/*.yaml). With it, LoCoMo and the gold set run only when named.",
)
@click.option(
    "--conversations",
    type=click.IntRange(min=1),
    metavar="N",
    help="Only the first N LoCoMo conversations (for quick runs).",
)
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Where the evaluation vaults and their indexes live [default: ~/.cache/mdmem/eval].",
)
@click.option(
    "--self",
    "self_eval",
    is_flag=True,
    help="Ask each vault the queries it provides itself (titles, aliases, headings, link anchor text, "
    "first sentences; each its note's known answer) instead of written questions: the vault of --vault "
    "(or the current folder), or the --gold and --corpus vaults when named. Rows of level 'self', one "
    "group per kind with --by-kind.",
)
@click.option(
    "--self-size",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    metavar="N",
    help="With --self: at most N queries of each kind (a seeded draw: the same vault gives the same queries).",
)
@click.option("--rebuild", is_flag=True, help="Rewrite the evaluation vaults and their indexes from scratch.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def eval_command(
    locomo_opt: str | None,
    gold_opt: str | None,
    level: str,
    modes: str | None,
    by_category: bool,
    by_kind: bool,
    corpora: tuple[Path, ...],
    question_files: tuple[Path, ...],
    conversations: int | None,
    cache_dir: Path | None,
    self_eval: bool,
    self_size: int,
    rebuild: bool,
    as_json: bool,
) -> None:
    """Measure retrieval quality: recall@k, MRR and nDCG@10 per mode on LoCoMo, the gold set and
    public corpora.

    \b
    Each LoCoMo question is searched only within its own conversation, written as one note per
    turn (--level turn) or per session (--level session); relevant notes are its evidence.
    The gold set's no-answer queries give the quiet rate (share with no hit, or that said nothing in
    the vault matches well; "muted" is that share among answerable queries) and its
    queries with excluded notes the leak rate (share showing one in the top 10).
    A corpus (--corpus CLONE --questions FILE) is checked out at the file's commit; its questions
    count as answered when any of their answers is in the top k; the held-out ones are reported
    on rows of their own (level "heldout").
    With --self the queries come from the vault itself (see --self; docs/benchmarks.md says what
    each kind measures): on your own vault, how well mdmem finds your notes, with no questions written;
    its index is brought up to date and embedded, its notes are only read.
    The vaults are built once under the cache directory and reused; --rebuild remakes them.
    The embedding model is [embed] model's default; compare another with $MDMEM_EMBED_MODEL
    (e.g. multilingual-e5-small) and its own --cache-dir.
    """
    from ..core.errors import MdmemError
    from ..core.eval_data import CATEGORIES, load_locomo
    from ..edges.evaluate import (
        ALL_MODES,
        Row,
        Suite,
        build_corpus,
        build_gold,
        build_locomo,
        default_cache_dir,
        file_sha,
        index_suite,
        run_suite,
        summarize_groups,
        unknown_ids,
    )

    requested = [m.strip() for m in (modes or ",".join(ALL_MODES)).split(",") if m.strip()]
    bad = [m for m in requested if m not in ALL_MODES]
    if bad or not requested:
        raise click.BadParameter(
            f"unknown mode(s) {', '.join(bad) or '(none)'}; use some of {', '.join(ALL_MODES)}.", param_hint="--modes"
        )

    if len(corpora) != len(question_files):
        raise click.BadParameter(
            f"{len(question_files)} --questions file(s) but {len(corpora)} --corpus "
            "folder(s): give one --corpus CLONE per --questions FILE, in the same order.",
            param_hint="--corpus",
        )
    specs = [_load_corpus(f) for f in question_files]
    if self_eval:
        return _self_eval(specs, corpora, gold_opt, requested, by_kind, cache_dir, self_size, rebuild, as_json)
    locomo = _path_option(locomo_opt, DEFAULT_LOCOMO) if not specs or locomo_opt else None
    gold = _path_option(gold_opt, DEFAULT_GOLD) if not specs or gold_opt else None
    if locomo_opt is None and locomo is None and not specs:
        click.echo(f"mdmem eval: no LoCoMo data at {DEFAULT_LOCOMO}; skipping it (pass --locomo PATH).", err=True)
    if locomo is not None and not locomo.is_file():
        raise click.BadParameter(f"no file at {locomo}.", param_hint="--locomo")
    if gold is not None and not (gold / "queries.yaml").is_file():
        raise click.BadParameter(f"{gold} has no queries.yaml (expected queries.yaml and vault/).", param_hint="--gold")
    if locomo is None and gold is None and not specs:
        raise click.ClickException(
            "Nothing to evaluate: pass --locomo PATH (locomo10.json), --gold FOLDER or --corpus CLONE --questions FILE."
        )

    cache = (cache_dir or default_cache_dir()).expanduser()
    started = time.perf_counter()
    suites: list[Suite] = []
    info: dict[str, Any] = {"modes": requested, "cache_dir": str(cache)}
    try:
        if locomo is not None:
            sha = file_sha(locomo)
            convs = load_locomo(locomo)[:conversations]
            levels = ["turn", "session"] if level == "both" else [level]
            suites += build_locomo(convs, cache / sha[:16], levels, rebuild)
            info["locomo"] = {
                "path": str(locomo),
                "sha256": sha,
                "conversations": len(convs),
                "questions": sum(len(c.questions) for c in convs),
            }
        if gold is not None:
            gs = build_gold(gold, cache, rebuild)
            suites.append(gs)
            unknown = unknown_ids(gs)
            info["gold"] = {"path": str(gold), "queries": gs.n_queries, "unknown_ids": unknown}
            if unknown:
                click.echo(
                    f"mdmem eval: {len(unknown)} gold ids name no note in the vault: "
                    f"{', '.join(unknown[:8])}{' …' if len(unknown) > 8 else ''}",
                    err=True,
                )
        for spec, clone in zip(specs, corpora, strict=True):
            suites += build_corpus(spec, clone, cache, rebuild)
            info.setdefault("corpora", []).append(
                {
                    "name": spec.name,
                    "commit": spec.commit,
                    "path": str(clone),
                    "questions": len(spec.questions),
                    "heldout": len(spec.heldout),
                }
            )
        rows: list[Row] = []
        timings = {}
        for suite in suites:
            index_s = index_suite(suite, requested, _lines())
            t0 = time.perf_counter()
            results = run_suite(suite, requested, _lines())
            timings[f"{suite.dataset}/{suite.level}"] = {
                "index_s": round(index_s, 2),
                "query_s": round(time.perf_counter() - t0, 2),
            }
            breakdown = by_category if suite.dataset == "locomo" else by_kind
            per_mode = {
                m: summarize_groups(
                    results[m],
                    dataset=suite.dataset,
                    level=suite.level,
                    mode=m,
                    by_group=breakdown,
                    order=list(CATEGORIES.values()),
                )
                for m in requested
            }
            rows += interleaved(per_mode, requested)
    except MdmemError as exc:
        raise click.ClickException(str(exc)) from exc
    _report(rows, info, timings, started, as_json)


def interleaved(per_mode: dict[str, list[Any]], modes: list[str]) -> list[Any]:
    """Rows grouped so the modes of one group sit together: all, then each group."""
    return [per_mode[m][i] for i in range(len(per_mode[modes[0]])) for m in modes]


def _report(rows: list[Any], info: dict[str, Any], timings: dict[str, Any], started: float, as_json: bool) -> None:
    """The rows as the table (with the timings) or as one JSON document."""
    from ..edges.evaluate import format_table

    info["timings"] = timings
    info["total_s"] = round(time.perf_counter() - started, 2)
    if as_json:
        click.echo(json.dumps({"rows": [asdict(r) for r in rows], **info}, indent=2, ensure_ascii=False))
        return
    click.echo(format_table(rows))
    click.echo("")
    for name, t in timings.items():
        click.echo(f"{name}: index {t['index_s']:.1f} s, queries {t['query_s']:.1f} s")
    if any(r.n_noanswer or r.n_excluded for r in rows):
        click.echo(
            "quiet = share of no-answer queries with no hit, or that said nothing matches well; "
            "leak = share of queries with excluded notes that showed one in the top 10 (/count); "
            "muted = share of answerable queries that said nothing matches well."
        )
    click.echo(f"total {info['total_s']:.1f} s; vaults in {', '.join(info.get('vaults', [info['cache_dir']]))}")


def _load_corpus(path: Path) -> Any:
    """A corpus questions file, or a one-line error that names the file and the problem."""
    import yaml

    from ..core.eval_data import parse_corpus

    try:
        return parse_corpus(yaml.safe_load(path.read_text(encoding="utf-8")), str(path))
    except (ValueError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise click.BadParameter(str(exc).splitlines()[0], param_hint="--questions") from exc


def _self_eval(
    specs: list[Any],
    corpora: tuple[Path, ...],
    gold_opt: str | None,
    modes: list[str],
    by_kind: bool,
    cache_dir: Path | None,
    per_kind: int,
    rebuild: bool,
    as_json: bool,
) -> None:
    """``eval --self``: the self-generated queries of the named gold and corpus vaults, else of the
    vault --vault (or the current folder) names."""
    from ..core.errors import MdmemError
    from ..core.self_queries import KINDS
    from ..edges.evaluate import (
        build_corpus,
        build_gold,
        default_cache_dir,
        index_suite,
        run_suite,
        self_suite,
        summarize_groups,
    )

    started = time.perf_counter()
    cache = (cache_dir or default_cache_dir()).expanduser()
    gold = _path_option(gold_opt, DEFAULT_GOLD) if gold_opt else None
    if gold is not None and not (gold / "vault").is_dir():
        raise click.BadParameter(f"{gold} has no vault/ folder.", param_hint="--gold")
    info: dict[str, Any] = {"modes": modes, "cache_dir": str(cache), "self": {"per_kind": per_kind, "kinds": KINDS}}
    targets: list[tuple[Path, str]] = []
    try:
        if gold is not None:
            targets.append((build_gold(gold, cache, rebuild).vaults[0][0], "gold"))
        for spec, clone in zip(specs, corpora, strict=True):
            folder = build_corpus(spec, clone, cache, rebuild)[0].vaults[0][0]
            targets.append((folder, spec.slug))
        if not targets:
            root = _vault_root()
            targets.append((root, root.name))
        info["vaults"] = [str(f) for f, _ in targets]
        rows: list[Any] = []
        timings: dict[str, Any] = {}
        for folder, name in targets:
            suite = self_suite(folder, name, per_kind=per_kind)
            if not suite.n_queries:
                click.echo(f"mdmem eval: {folder} offers no queries (no titled notes).", err=True)
                continue
            index_s = index_suite(suite, modes, _lines())
            t0 = time.perf_counter()
            results = run_suite(suite, modes, _lines())
            timings[f"{name}/self"] = {"index_s": round(index_s, 2), "query_s": round(time.perf_counter() - t0, 2)}
            per_mode = {
                m: summarize_groups(results[m], dataset=name, level="self", mode=m, by_group=by_kind, order=list(KINDS))
                for m in modes
            }
            rows += interleaved(per_mode, modes)
    except MdmemError as exc:
        raise click.ClickException(str(exc)) from exc
    _report(rows, info, timings, started, as_json)


def _vault_root() -> Path:
    """The vault --vault names, else the one at or above the current folder."""
    from ..api.vault import Vault
    from .options import State

    state = click.get_current_context().find_object(State)
    return state.vault_root if state is not None else Vault.find_root()


def _lines() -> Report | None:
    """Progress for a stderr that is no terminal (a pipe, a log): a line now and then
    (``options.progress_lines``); None on a terminal, which gets bars."""
    import sys

    from .options import progress_lines

    return None if sys.stderr.isatty() else progress_lines
