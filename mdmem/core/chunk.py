"""Pure chunking of a note for vectors: by heading, then by size; each chunk carries its context."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

MAX_CHARS = 1000  # ~250 tokens: what MiniLM-class models read before truncating
MAX_CHUNKS = 64  # a huge note is represented by its first sections; BM25 still sees all of it

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a note that is embedded on its own."""

    ord: int
    heading: str  # heading path, "Design › Risks"
    text: str  # the piece of the body
    embed_text: str  # what the model reads: title, heading path, piece
    hash: str  # content hash of embed_text: the embedding cache key


def chunk_note(title: str, body: str, *, max_chars: int = MAX_CHARS, pack: bool = True) -> list[Chunk]:
    """Split a note body into chunks; a note always has at least one (its title). ``pack``: sections that
    fit together into the model's window share a chunk (the heading of each but the first becomes a line
    of it): a wiki of short sections had 5.6 chunks a note, each one more model call for its title."""
    pieces: list[tuple[str, str]] = []
    for heading, text in _sections(body):
        for piece in _split(text.strip(), max_chars):
            pieces.append((heading, piece))
    if pack:
        pieces = _pack(pieces, max_chars)
    if not pieces:
        pieces = [("", "")]
    chunks = []
    for i, (heading, text) in enumerate(pieces[:MAX_CHUNKS]):
        context = title + (f" › {heading}" if heading else "")
        embed_text = f"{context}\n{text}".strip()
        digest = hashlib.blake2b(embed_text.encode(), digest_size=12).hexdigest()
        chunks.append(Chunk(ord=i, heading=heading, text=text, embed_text=embed_text, hash=digest))
    return chunks


def _pack(pieces: list[tuple[str, str]], max_chars: int) -> list[tuple[str, str]]:
    """Consecutive pieces joined while the whole stays within ``max_chars``; a joined piece keeps the first
    one's heading and starts with its own heading's last part. The first piece (a note's lead) stays alone:
    every note's first chunk is embedded before any second one, and short first chunks let that first
    stretch end sooner (Obsidian Hub: 3.3 MB of text to embed first instead of 5.2)."""
    out: list[tuple[str, str]] = []
    for heading, text in pieces:
        if len(out) > 1:
            first, joined = out[-1]
            label = heading.rsplit(" › ", 1)[-1] if heading != first else ""
            more = f"{label}\n{text}" if label else text
            if len(joined) + 2 + len(more) <= max_chars:
                out[-1] = (first, f"{joined}\n\n{more}")
                continue
        out.append((heading, text))
    return out


def _sections(body: str) -> list[tuple[str, str]]:
    """(heading path, text) for the text before the first heading and under each heading."""
    out: list[tuple[str, str]] = []
    stack: list[tuple[int, str]] = []
    lines: list[str] = []
    in_fence = False

    def flush() -> None:
        text = "\n".join(lines)
        if text.strip():
            out.append((" › ".join(h for _, h in stack), text))
        lines.clear()

    for line in body.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line)
        if m:
            flush()
            level = len(m.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, m.group(2).strip()))
            continue
        lines.append(line)
    flush()
    return out


def _split(text: str, max_chars: int) -> list[str]:
    """Pieces of at most ``max_chars``, cut at paragraph, then sentence, then word boundaries."""
    if len(text) <= max_chars:
        return [text] if text else []
    out: list[str] = []
    current = ""
    for unit in _units(text, max_chars):
        if current and len(current) + 2 + len(unit) > max_chars:
            out.append(current)
            current = unit
        else:
            current = f"{current}\n\n{unit}" if current else unit
    if current:
        out.append(current)
    return out


def _units(text: str, max_chars: int) -> list[str]:
    units: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = para.strip()
        if len(para) <= max_chars:
            if para:
                units.append(para)
            continue
        for sentence in re.split(r"(?<=[.!?。！？])\s+", para):
            while len(sentence) > max_chars:
                cut = sentence.rfind(" ", 0, max_chars)
                cut = cut if cut > max_chars // 2 else max_chars
                units.append(sentence[:cut].strip())
                sentence = sentence[cut:].strip()
            if sentence:
                units.append(sentence)
    return units
