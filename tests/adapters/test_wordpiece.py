"""mdmem's own WordPiece gives the ids ``tokenizers`` gives for the bundled model, for every Unicode
character and a corpus of notes and code: a default install (without ``tokenizers``) embeds the same."""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path

import pytest

from mdmem.adapters.embed import bundled_model_path
from mdmem.adapters.wordpiece import WordPiece

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def both() -> tuple[object, WordPiece]:
    from tokenizers import Tokenizer

    path = bundled_model_path() / "tokenizer.json"
    rust = Tokenizer.from_file(str(path))
    rust.enable_truncation(64)
    rust.no_padding()
    return rust, WordPiece.from_file(path, 64)


def test_every_character_outside_the_letters_tokenises_alike(both: tuple[object, WordPiece]) -> None:
    """Each code point between letters and at a word's start: control characters dropped, whitespace,
    punctuation split off, accents stripped, CJK on its own, marks and punctuation newer than the Rust
    library's Unicode tables. Letters (most of Unicode) are sampled: they only look words up."""
    rust, py = both
    chars = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        cat = unicodedata.category(chr(cp))
        if cat[0] not in "LC" or cat in ("Cc", "Cf", "Co") or cp % 97 == 0:
            chars.append(chr(cp))
    texts = [f"a{c}b {c}x" for c in chars]
    got = rust.encode_batch(texts)  # type: ignore[attr-defined]
    wrong = [hex(ord(c)) for c, r, t in zip(chars, got, texts) if r.ids != py.ids(t)]
    assert len(chars) > 150_000 and wrong == []


def test_notes_code_and_noise_tokenise_alike_and_batches_pad(both: tuple[object, WordPiece]) -> None:
    rust, py = both
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "benchmarks" / "gold" / "vault").rglob("*.md"))]
    texts += [p.read_text(encoding="utf-8")[:4000] for p in sorted((ROOT / "mdmem" / "adapters").glob("*.py"))]
    rnd = random.Random(7)
    alphabet = (
        [chr(c) for c in range(0x20, 0x3100)] + list("数据库迁移は来週 ﬁ ß İ ǅ [CLS] [SEP] [MASK] ") + ["🙂", "👍🏽"]
    )
    texts += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 300))) for _ in range(500)]
    assert len(texts) > 600
    assert [r.ids for r in rust.encode_batch(texts)] == [py.ids(t) for t in texts]  # type: ignore[attr-defined]
    rust.enable_padding(pad_id=0, pad_token="[PAD]")  # type: ignore[attr-defined]
    for r, p in zip(rust.encode_batch(texts[:20]), py.encode_batch(texts[:20])):  # type: ignore[attr-defined]
        assert (r.ids, r.attention_mask, r.type_ids) == (p.ids, p.attention_mask, p.type_ids)
