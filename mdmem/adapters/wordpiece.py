"""BERT's WordPiece tokenizer in plain Python, read from a model's ``tokenizer.json``: the ids the
``tokenizers`` library gives for a BERT (BertNormalizer, BertPreTokenizer, WordPiece, [CLS] … [SEP]).

A default install embeds with it, so that it needs neither ``tokenizers`` nor its Hugging Face Hub
client (a large install); where ``tokenizers`` is installed the runner uses that instead (it is faster). The
tests hold the two to the same ids over every Unicode character and a corpus of notes.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

# CJK ideographs are tokens of their own (BertNormalizer's handle_chinese_chars).
_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def supported(spec: dict[str, Any]) -> bool:
    """Whether a tokenizer.json describes the BERT pipeline this module implements."""
    norm, pre, model = spec.get("normalizer") or {}, spec.get("pre_tokenizer") or {}, spec.get("model") or {}
    return (
        norm.get("type") == "BertNormalizer"
        and pre.get("type") == "BertPreTokenizer"
        and model.get("type") == "WordPiece"
        and isinstance(model.get("vocab"), dict)
    )


@dataclass(frozen=True, slots=True)
class Encoding:
    """What the runner needs of one text (the fields ``tokenizers.Encoding`` has under these names)."""

    ids: list[int]
    type_ids: list[int]
    attention_mask: list[int]


class WordPiece:
    """Encodes texts as BERT's tokenizer does; ``encode_batch`` pads to the longest, like ``tokenizers``
    with ``enable_padding``."""

    def __init__(self, spec: dict[str, Any], max_length: int) -> None:
        norm, model = spec["normalizer"], spec["model"]
        self.clean_text = bool(norm.get("clean_text", True))
        self.chinese = bool(norm.get("handle_chinese_chars", True))
        self.lowercase = bool(norm.get("lowercase", True))
        strip = norm.get("strip_accents")
        self.strip_accents = self.lowercase if strip is None else bool(strip)
        self.vocab: dict[str, int] = model["vocab"]
        self.unk = self.vocab[model.get("unk_token", "[UNK]")]
        self.prefix = str(model.get("continuing_subword_prefix", "##"))
        self.max_chars = int(model.get("max_input_chars_per_word", 100))
        self.cls, self.sep = self.vocab["[CLS]"], self.vocab["[SEP]"]
        self.max_length = max_length
        self.pad_id = 0
        # Special tokens found in the text as written (not normalised): "[SEP]" in a note is one token.
        self.added = {t["content"]: int(t["id"]) for t in spec.get("added_tokens", []) if not t.get("normalized")}
        self._special = (
            re.compile("|".join(re.escape(t) for t in sorted(self.added, key=len, reverse=True)))
            if self.added
            else None
        )
        self._word = lru_cache(maxsize=65536)(self._word_ids)

    @classmethod
    def from_file(cls, path: Path, max_length: int) -> WordPiece:
        return cls(json.loads(path.read_text(encoding="utf-8")), max_length)

    def normalize(self, text: str) -> str:
        """BertNormalizer: drop control characters, whitespace to spaces, spaces around CJK ideographs,
        strip accents (NFD without its marks), then lowercase, in the order ``tokenizers`` applies them."""
        if self.clean_text and self.chinese:
            text = text.translate(_CLEAN)
        else:
            if self.clean_text:
                text = "".join(" " if _is_whitespace(c) else c for c in text if not _is_dropped(c))
            if self.chinese:
                text = "".join(f" {c} " if _is_cjk(c) else c for c in text)
        if self.strip_accents and not text.isascii():
            text = unicodedata.normalize("NFD", text).translate(_MARKS)
        return text.lower() if self.lowercase else text

    def pieces(self, text: str) -> list[str]:
        """Pre-tokens: split at whitespace (dropped) and around each punctuation character (kept)."""
        return text.translate(_PUNCT).split()

    def _word_ids(self, word: str) -> tuple[int, ...]:
        if len(word) > self.max_chars:
            return (self.unk,)
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                found = self.vocab.get(piece)
                if found is not None:
                    ids.append(found)
                    break
                end -= 1
            else:
                return (self.unk,)  # one piece of it is unknown: the whole word is
            start = end
        return tuple(ids)

    def ids(self, text: str) -> list[int]:
        """The text's ids with [CLS] and [SEP], cut to ``max_length`` tokens."""
        body: list[int] = []
        room = self.max_length - 2
        for part in self._split_special(text):
            if isinstance(part, int):
                body.append(part)
                continue
            for word in self.pieces(self.normalize(part)):
                body.extend(self._word(word))
                if len(body) >= room:
                    return [self.cls, *body[:room], self.sep]
        return [self.cls, *body[:room], self.sep]

    def _split_special(self, text: str) -> list[str | int]:
        """The text with its special tokens ([CLS], [SEP], …, written as they are) as their ids."""
        if self._special is None or not self._special.search(text):
            return [text]
        out: list[str | int] = []
        last = 0
        for m in self._special.finditer(text):
            out += [text[last : m.start()], self.added[m.group()]]
            last = m.end()
        return [*out, text[last:]]

    def encode_batch(self, texts: Sequence[str]) -> list[Encoding]:
        rows = [self.ids(t) for t in texts]
        width = max((len(r) for r in rows), default=0)
        return [
            Encoding(r + [self.pad_id] * (width - len(r)), [0] * width, [1] * len(r) + [0] * (width - len(r)))
            for r in rows
        ]


@lru_cache(maxsize=8192)
def _is_dropped(c: str) -> bool:
    """Characters clean_text removes: NUL, U+FFFD and control characters other than tab and newlines."""
    if c in "\t\n\r":
        return False
    return c in "\x00\ufffd" or _category(c) in ("Cc", "Cf", "Co")


@lru_cache(maxsize=8192)
def _is_whitespace(c: str) -> bool:
    return c in " \t\n\r" or _category(c) == "Zs" or c.isspace()


def _is_cjk(c: str) -> bool:
    cp = ord(c)
    return any(lo <= cp <= hi for lo, hi in _CJK)


@lru_cache(maxsize=8192)
def _is_punctuation(c: str) -> bool:
    """ASCII punctuation (``$``, ``^``, ``` ` ``` and the like count) or a Unicode punctuation character."""
    cp = ord(c)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return _category(c).startswith("P")


# Where Python's Unicode tables (14.0 on 3.11) and those ``tokenizers`` was built with disagree: marks
# and punctuation added to Unicode since (historic and minority scripts), which ``tokenizers`` treats as
# unassigned, and three characters whose category changed. Found by encoding every code point both ways.
_NEWER_THAN_TOKENIZERS = (
    "61d 7fd 890-891 898-89f 8ca-8e2 9fd-9fe a76 afa-aff b55 c04 c3c c77 c84 d00 d3b-d3c d81 eba 180f "
    "1885-1886 1abf-1ace 1b7d-1b7e 1df6-1dfb 2e43-2e4f 2e52-2e5d a82c a8c5 a8ff a9bd 10d24-10d27 10eab-10ead "
    "10f46-10f50 10f55-10f59 10f82-10f89 11070 11073-11074 110c2 110cd 111cf 1123e 1133b 11438-1143f "
    "11442-11444 11446 1144b-1144f 1145a-1145b 1145d-1145e 11660-1166c 116b9 1182f-11837 11839-1183b "
    "1193b-1193c 1193e 11943-11946 119d4-119d7 119da-119db 119e0 119e2 11a01-11a0a 11a33-11a38 11a3b-11a47 "
    "11a51-11a56 11a59-11a5b 11a8a-11a96 11a98-11a9c 11a9e-11aa2 11c30-11c36 11c38-11c3d 11c3f 11c41-11c45 "
    "11c70-11c71 11c92-11ca7 11caa-11cb0 11cb2-11cb3 11cb5-11cb6 11d31-11d36 11d3a 11d3c-11d3d 11d3f-11d45 "
    "11d47 11d90-11d91 11d95 11d97 11ef3-11ef4 11ef7-11ef8 11fff 12ff1-12ff2 13430-13438 16e97-16e9a 16f4f "
    "16fe2 16fe4 1cf00-1cf2d 1cf30-1cf46 1e000-1e006 1e008-1e018 1e01b-1e021 1e023-1e024 1e026-1e02a "
    "1e130-1e136 1e2ae 1e2ec-1e2ef 1e944-1e94a 1e95e-1e95f"
)
_CHANGED = {0x166D: "Po", 0x111C9: "Po", 0x1734: "Mn"}


def _overrides() -> dict[int, str]:
    out = dict(_CHANGED)
    for part in _NEWER_THAN_TOKENIZERS.split():
        lo, _, hi = part.partition("-")
        for cp in range(int(lo, 16), int(hi or lo, 16) + 1):
            out[cp] = "Cn"
    return out


_OVERRIDES = _overrides()


@lru_cache(maxsize=16384)
def _category(c: str) -> str:
    return _OVERRIDES.get(ord(c)) or unicodedata.category(c)


class _Table(dict[int, str | None]):
    """A ``str.translate`` table that works each character out once, on first sight."""

    def __init__(self, rule: Callable[[str], str | None]) -> None:
        super().__init__()
        self.rule = rule

    def __missing__(self, cp: int) -> str | None:
        value = self[cp] = self.rule(chr(cp))
        return value


def _clean(c: str) -> str | None:
    if _is_dropped(c):
        return None
    if _is_whitespace(c):
        return " "
    return f" {c} " if _is_cjk(c) else c


_CLEAN = _Table(_clean)
_MARKS = _Table(lambda c: None if _category(c) == "Mn" else c)
_PUNCT = _Table(lambda c: " " if _is_whitespace(c) else f" {c} " if _is_punctuation(c) else c)
