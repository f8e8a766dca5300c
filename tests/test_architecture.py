"""The house rules of docs/architecture.md that import-linter does not check: no import circle (imports
inside functions count), no module uses another module's private names, modules stay readable."""

from __future__ import annotations

import ast
import io
import re
import tokenize
import tomllib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mdmem"
MAX_LINES = 750  # as ruff format lays the code out; the longest is the Vault facade, a method per command
ALLOWED_PRIVATE = {"_exit"}  # os._exit: the prompt hook's way out of a stuck worker thread


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
TREES = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in MODULES.items()}


def imports(name: str) -> set[str]:
    """The mdmem modules ``name`` imports anywhere (module level or inside functions)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(TREES[name]):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.add(full if full in MODULES else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m in MODULES and m != name}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles_counting_imports_inside_functions() -> None:
    graph = {name: imports(name) for name in MODULES}
    assert "mdmem.index.store" in graph["mdmem.api.vault"]  # the walk sees real imports
    assert cycles(graph) == []


def test_the_tree_shows_the_layers() -> None:
    """Every module lives in its layer's folder, and each folder is one rung of the layers contract."""
    contracts = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    rungs = next(c["layers"] for c in contracts if c["type"] == "layers")
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert {p.name for p in PACKAGE.glob("*.py")} == {"__init__.py", "__main__.py"}
    assert {f"mdmem.{f}" for f in folders} == set(rungs) - {"mdmem.__main__"}
    assert len(rungs) <= 10


def test_the_cycle_finder_finds_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def private_names_defined(tree: ast.AST) -> set[str]:
    """Private names a module defines: functions, classes, methods, globals and attributes it sets."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
    return {n for n in out if n.startswith("_") and not n.startswith("__")}


def foreign_private_uses(name: str) -> list[str]:
    tree = TREES[name]
    own = private_names_defined(tree)
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            bad += [
                f"from {node.module} import {a.name}"
                for a in node.names
                if a.name.startswith("_") and not a.name.startswith("__")
            ]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if node.attr not in own and node.attr not in ALLOWED_PRIVATE:
                bad.append(f"line {node.lineno}: {ast.unparse(node)}")
    return bad


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_uses_another_modules_private_names(name: str) -> None:
    assert foreign_private_uses(name) == []


def test_the_private_name_check_catches_a_reach_in() -> None:
    TREES["fake"] = ast.parse("from .vault import _helper\n\ndef f(v):\n    return v._catalog\n")
    try:
        assert foreign_private_uses("fake") == ["from vault import _helper", "line 4: v._catalog"]
    finally:
        del TREES["fake"]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_stay_readable(name: str) -> None:
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name}: {lines} lines"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_says_what_it_is(name: str) -> None:
    """docs/architecture.md sends a reader to each file's first line (``head -1 mdmem/index/*.py``)."""
    doc = ast.get_docstring(TREES[name])
    assert doc and len(doc.split()) >= 5, f"{name}: no docstring saying what the module is"


# A library with one home: no other module imports it, inside functions included ("pypdf only
# in one module"; whoosh, usearch, SQL and GitPython have import-linter's contracts).
ONE_HOME = {"pypdf": "mdmem.adapters.pdf"}


@pytest.mark.parametrize("library", sorted(ONE_HOME))
def test_a_library_is_imported_by_its_home_module_only(library: str) -> None:
    users = set()
    for name, tree in TREES.items():
        for node in ast.walk(tree):
            mods = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            if any(m == library or m.startswith(library + ".") for m in mods):
                users.add(name)
    assert users == {ONE_HOME[library]}


FACADE_INSIDES = {"store", "semantic", "files"}  # what a Vault holds; the edges ask the Vault itself


def reaches_past_the_facade(name: str) -> list[str]:
    return [
        f"line {node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(TREES[name])
        if isinstance(node, ast.Attribute) and node.attr in FACADE_INSIDES
    ]


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.startswith(("mdmem.cli", "mdmem.edges"))))
def test_the_edges_call_the_facade_only(name: str) -> None:
    """The CLI, the MCP server, serve and the hooks ask the Vault; its store, vector side and files are its own."""
    assert reaches_past_the_facade(name) == []


def test_the_facade_check_catches_a_reach_past() -> None:
    TREES["fake"] = ast.parse("def f(vault):\n    return vault.semantic.coverage()\n")
    try:
        assert reaches_past_the_facade("fake") == ["line 2: vault.semantic"]
    finally:
        del TREES["fake"]


# -- figures stay out of comments ------------------------------------------------------------------------
# A comment says why; how fast, how big or how good goes to docs/benchmarks.md (timings, memory) or
# docs/retrieval.md (retrieval metrics), where a benchmark's next run updates it. A number that is a
# setting or a bound ("at most 2 MB", "a 30 s limit") is no measurement: FIGURES_ALLOWED names it.

FIGURE = re.compile(
    r"(?<![\w.])\d+(?:[.,]\d+)?\s*(?:ms|s|MB|GB|KB|kB|MiB|GiB|min|µs)\b"  # a time or a size
    r"|(?<![\w])\.?\d[\d.,]*\s*(?:ms|s|MB|GB|KB|%|×)?\s*→(?=\s*~?\.?\d)"  # before → after
    r"|\b(?:R|Hit|hit|P|nDCG|MRR|recall)@\d+|\bMRR\b|\bnDCG\b"  # a retrieval metric
    r"|\d+(?:\.\d+)?\s*(?:×|x|%)\s*(?:faster|slower|less|more)\b|\d+(?:\.\d+)?\s*%\s*of\s[^.;]*\bCPU"  # a speed-up
)

# (module or file, the text of the figure's line it is found in): settings and bounds, not measurements
FIGURES_ALLOWED: set[tuple[str, str]] = {
    (
        "mdmem.adapters.git",
        "at once, then one every 0.1 s for up to ``$MDMEM_GIT_LOCK_WAIT`` (``GIT_LOCK_WAIT``) seconds. The",
    ),
    (
        "mdmem.edges.evaluate",
        "nDCG@k when one relevant item is all the question needs: 1 / log2(1 + rank of the first).",
    ),
    ("mdmem.edges.evaluate", "nDCG@k with gain = grade (linear gains; a grade-1-only set is binary nDCG)."),
    ("mdmem.edges.serve", "query would wait with it (up to lock_timeout, 30 s) while another process writes."),
    ("mdmem.index.lexical", "cached postings across terms (~48 MB) before the cache starts over"),
    ("mdmem.render.cli_text", "'40 s', '12 min', '2.5 h'."),
    # the metrics eval prints, by name (its help and module docstring), not values of them
    (
        "mdmem.cli.eval",
        "``mdmem eval``: retrieval quality (recall@k, MRR, nDCG@10) per mode on LoCoMo, the gold set and",
    ),
    ("mdmem.cli.eval", "Measure retrieval quality: recall@k, MRR and nDCG@10 per mode on LoCoMo, the gold set and"),
    # progress_lines(every=10.0): the interval of embed's progress lines, a setting
    ("mdmem.cli.vectors", 'on stderr every ~10 s; "mdmem status" shows it from another shell.'),
    # the code's own factor: each round asks usearch for 4x the matches of the last
    ("mdmem.index.semantic", "~2 chunks a note: usually enough notes at once, else 4× more"),
}


def comment_lines(source: str) -> list[tuple[int, str]]:
    """The comments and docstrings of Python ``source``, line by line: (line number, text)."""
    out = [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                if isinstance(first.value.value, str):
                    out += [(first.lineno + i, line) for i, line in enumerate(first.value.value.splitlines())]
    return sorted(out)


def figures(name: str, lines: list[tuple[int, str]]) -> list[str]:
    """The figures in ``lines`` that no entry of ``FIGURES_ALLOWED`` names, as ``name:line: figure``."""
    return [
        f"{name}:{n}: {m.group(0)}"
        for n, text in lines
        for m in FIGURE.finditer(text)
        if (name, text.strip().lstrip("# ").strip()) not in FIGURES_ALLOWED
    ]


def toml_comments(text: str) -> list[tuple[int, str]]:
    """The comments of a TOML file (a ``#`` outside a string, roughly: pyproject.toml has no ``#`` in its strings)."""
    return [(n, line.split("#", 1)[1]) for n, line in enumerate(text.splitlines(), 1) if "#" in line]


def all_figures() -> dict[str, list[str]]:
    """Every figure in a comment or docstring of mdmem and pyproject.toml, by module."""
    found = {name: figures(name, comment_lines(path.read_text(encoding="utf-8"))) for name, path in MODULES.items()}
    found["pyproject.toml"] = figures("pyproject.toml", toml_comments((PACKAGE.parent / "pyproject.toml").read_text()))
    return {name: f for name, f in found.items() if f}


def test_comments_hold_no_figures() -> None:
    assert [f for _, fs in sorted(all_figures().items()) for f in fs] == []


def test_the_figure_finder_finds_figures() -> None:
    source = (
        '"""A module (R@10 .936)."""\n'
        "# batch 32 raised peak RSS by ~140 MB; ~30% faster\n"
        "x = 1  # a cold start 4.8 → 1.4 s\n"
        "def f() -> None:\n"
        '    """Fast: ~75 ms at 50k notes; MRR .5."""\n'
        's = "12 ms in a string is code, not a comment"\n'
    )
    assert figures("m", comment_lines(source)) == [
        "m:1: R@10",
        "m:2: 140 MB",
        "m:2: 30% faster",
        "m:3: 4.8 →",
        "m:3: 1.4 s",
        "m:5: 75 ms",
        "m:5: MRR",
    ]
    FIGURES_ALLOWED.add(("m", "batch 32 raised peak RSS by ~140 MB; ~30% faster"))
    try:
        assert "m:2: 140 MB" not in figures("m", comment_lines(source))
    finally:
        FIGURES_ALLOWED.discard(("m", "batch 32 raised peak RSS by ~140 MB; ~30% faster"))
    assert figures("p", toml_comments('a = 1  # 2 m 03 s on two workers\nb = "x"\n')) == ["p:1: 03 s"]


STORE_INSIDES = {"catalog", "lexical"}  # the index's parts, which features read through IndexStore.reading()
STORE_READS = {"read", "repair"}  # the view repairs, and retries a read on a damaged index, itself


def reaches_into_the_index(name: str) -> list[str]:
    """Where a module names the catalogue or the BM25 index of a store, or calls its ``read`` or ``repair``."""
    found = []
    for node in ast.walk(TREES[name]):
        if isinstance(node, ast.Attribute) and node.attr in STORE_INSIDES:
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in STORE_READS
            and ast.unparse(node.func.value).split(".")[-1] == "store"
        ):
            found.append(f"line {node.lineno}: {ast.unparse(node.func)}")
    return found


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.startswith("mdmem.features")))
def test_features_read_the_index_through_its_read_door(name: str) -> None:
    """A feature asks a read view (``store.reading()``), never the store's catalogue, BM25 index or repair."""
    assert reaches_into_the_index(name) == []


def test_the_read_door_check_catches_a_reach_in() -> None:
    TREES["fake"] = ast.parse(
        "def f(store, sem, idx):\n"
        "    store.repair()\n"
        "    sem.repair()\n"
        "    rows = store.catalog.rows([])\n"
        "    return idx.store.read(lambda: store.lexical.search('x', 1)), idx.rows([])\n"
    )
    try:
        assert sorted(reaches_into_the_index("fake")) == [
            "line 2: store.repair",
            "line 4: store.catalog",
            "line 5: idx.store.read",
            "line 5: store.lexical",
        ]
    finally:
        del TREES["fake"]


if __name__ == "__main__":  # python tests/test_architecture.py: every figure left, for moving them
    for found in all_figures().values():
        print(*found, sep="\n")
