"""Engines imported lean: whoosh (for ``index.lexical``) and usearch (for ``index.vectors``) without the
modules they import but never use here. Each unused module is stood in for by a forwarder while the
engine is imported, then removed again, so nobody else ever sees the stand-ins; a call that does reach
one (nothing in mdmem does) imports the real module and goes through."""

from __future__ import annotations

import functools
import importlib
import sys
import types
from collections.abc import Iterable
from typing import Any


def _forwarder(module: str, attr: str) -> Any:
    def forward(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), attr)(*args, **kwargs)

    return forward


def import_lean(modules: Iterable[str], stand_ins: dict[str, dict[str, Any]]) -> None:
    """Import ``modules`` while each module named in ``stand_ins`` (unless already imported) is a stand-in
    holding the given attributes."""
    placed: dict[str, types.ModuleType] = {}
    for name, attrs in stand_ins.items():
        if name not in sys.modules:
            mod = types.ModuleType(name)
            for attr, value in attrs.items():
                setattr(mod, attr, value)
            placed[name] = mod
    sys.modules.update(placed)
    try:
        for name in modules:
            importlib.import_module(name)
    finally:
        for name, mod in placed.items():
            if sys.modules.get(name) is mod:
                del sys.modules[name]
            parent, _, child = name.rpartition(".")
            if parent and getattr(sys.modules.get(parent), child, None) is mod:
                delattr(sys.modules[parent], child)


def import_whoosh_lean() -> None:
    """whoosh without the time it spends on modules it never uses here: whoosh.compat imports
    urllib.request (for ``urlretrieve``), whoosh.reading the ``cached_property`` package (which imports
    asyncio) and whoosh.query.terms whoosh.lang.morph_en, which compiles hundreds of regexes for the
    Variations query we never build: a cold ``mdmem search`` imports markedly faster (docs/benchmarks.md,
    Cold start)."""
    if "whoosh.index" in sys.modules:
        return
    import_lean(
        ("whoosh.index", "whoosh.query", "whoosh.reading", "whoosh.scoring"),
        {
            "urllib.request": {"urlretrieve": _forwarder("urllib.request", "urlretrieve")},
            "whoosh.lang.morph_en": {"variations": _forwarder("whoosh.lang.morph_en", "variations")},
            "cached_property": {"cached_property": functools.cached_property},
        },
    )


def import_usearch_lean() -> None:
    """usearch without urllib.request (for downloading its binaries) and tqdm (progress bars of bulk
    calls mdmem never makes with ``progress=True``): most of its import time, in every cold vector command."""
    if "usearch.index" in sys.modules:
        return
    import_lean(
        ("usearch.index",),
        {
            "urllib.request": {"urlretrieve": _forwarder("urllib.request", "urlretrieve")},
            "tqdm": {"tqdm": _forwarder("tqdm", "tqdm")},
        },
    )
