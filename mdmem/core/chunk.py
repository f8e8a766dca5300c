"""Pure chunking of a note for vectors: by heading, then by size; each chunk carries its context."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

MAX_CHARS = 1000  # ~250 tokens: what MiniLM-class models read before truncating
MAX_CHUNKS = 64  # a huge note is represented by its first sections; BM25 still sees all of it

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+)$")  # the closing #s and blanks: str.rstrip, not backtracking
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
    of it): a wiki of short sections had 5.6 chunks a note, each one more model call for its title.
    Only the pieces the first ``MAX_CHUNKS`` chunks can hold are made (a huge note is not cut whole to
    keep 64 chunks of it): a chunk holds at most ``max_chars`` of them."""
    pieces: list[tuple[str, str]] = []
    size, enough = 0, MAX_CHUNKS * max_chars
    for heading, text in _sections(body):
        for piece in _split(text.strip(), max_chars):
            pieces.append((heading, piece))
            size += len(piece)
            if size > enough or (not pack and len(pieces) >= MAX_CHUNKS):
                break
        if size > enough or (not pack and len(pieces) >= MAX_CHUNKS):
            break
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
    stretch end sooner (on the Obsidian hub about a third less text to embed first)."""
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
            stack.append((level, m.group(2).rstrip(" \t#").strip() or m.group(2)[:1]))
            continue
        lines.append(line)
    flush()
    return out


def _split(text: str, max_chars: int) -> Iterator[str]:
    """Pieces of at most ``max_chars``, cut at paragraph, then sentence, then word boundaries (made
    as they are asked for)."""
    if len(text) <= max_chars:
        if text:
            yield text
        return
    current = ""
    for unit in _units(text, max_chars):
        if current and len(current) + 2 + len(unit) > max_chars:
            yield current
            current = unit
        else:
            current = f"{current}\n\n{unit}" if current else unit
    if current:
        yield current


def _units(text: str, max_chars: int) -> Iterator[str]:
    for para in re.split(r"\n\s*\n", text):
        para = para.strip()
        if len(para) <= max_chars:
            if para:
                yield para
            continue
        for sentence in re.split(r"(?<=[.!?。！？])\s+", para):
            start = 0  # cut by position: slicing off the rest each time copied a long sentence again
            while len(sentence) - start > max_chars:
                cut = sentence.rfind(" ", start, start + max_chars)
                cut = cut if cut > start + max_chars // 2 else start + max_chars
                yield sentence[start:cut].strip()
                start = cut
                while start < len(sentence) and sentence[start].isspace():
                    start += 1
            if sentence[start:]:
                yield sentence[start:]
