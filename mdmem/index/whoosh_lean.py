"""whoosh imported lean: the helper ``index.lexical`` (the module that uses whoosh) runs first."""

from __future__ import annotations

from typing import Any


def import_whoosh_lean() -> None:
    """Import whoosh without the ~100 ms it spends on modules it never uses here.

    whoosh.compat imports urllib.request (for ``urlretrieve``), whoosh.reading imports the
    ``cached_property`` package (which imports asyncio) and whoosh.query.terms imports
    whoosh.lang.morph_en, which compiles hundreds of regexes for the Variations query we never
    build. Each is stood in for by a forwarder during the import and removed again, so nobody
    else ever sees the stand-ins. Measured: cold ``mdmem search`` import time 250 → 150 ms.
    """
    import functools
    import sys
    import types

    if "whoosh.index" in sys.modules:
        return
    stand_ins: dict[str, types.ModuleType] = {}
    if "urllib.request" not in sys.modules:
        mod = types.ModuleType("urllib.request")

        def urlretrieve(*args: Any, **kwargs: Any) -> Any:
            from urllib.request import urlretrieve as real

            return real(*args, **kwargs)

        mod.urlretrieve = urlretrieve  # type: ignore[attr-defined]
        stand_ins["urllib.request"] = mod
    if "whoosh.lang.morph_en" not in sys.modules:
        mod = types.ModuleType("whoosh.lang.morph_en")

        def variations(word: str) -> Any:
            from whoosh.lang.morph_en import variations as real

            return real(word)

        mod.variations = variations  # type: ignore[attr-defined]
        stand_ins["whoosh.lang.morph_en"] = mod
    if "cached_property" not in sys.modules:
        mod = types.ModuleType("cached_property")
        mod.cached_property = functools.cached_property  # type: ignore[attr-defined]
        stand_ins["cached_property"] = mod
    sys.modules.update(stand_ins)
    try:
        import whoosh.index  # noqa: F401
        import whoosh.query  # noqa: F401
        import whoosh.reading  # noqa: F401
        import whoosh.scoring  # noqa: F401
    finally:
        for name, mod in stand_ins.items():
            if sys.modules.get(name) is mod:
                del sys.modules[name]
        lang = sys.modules.get("whoosh.lang")
        if lang is not None and getattr(lang, "morph_en", None) is stand_ins.get("whoosh.lang.morph_en"):
            delattr(lang, "morph_en")
