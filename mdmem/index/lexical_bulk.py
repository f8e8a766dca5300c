"""The full build's whoosh writer: one segment written straight through whoosh's codec.

Whoosh's ``SegmentWriter`` sends every posting through a sorting pool (a size estimate and a tuple
per posting, a sort, runs spilled to disk past its memory limit), then through
``FieldWriter.add_postings``, which looks every posting's field length up again in the per-document
file and type-checks it. Profiled on a full build, that was most of the CPU. Here
postings are kept in memory per (field, term) with their documents appended in order (the order the
pool's sort yields; ~8 bytes a posting), and each term's blocks are written at once: the same W3
segment bytes (blocks, term infos, lengths, stored fields), which whoosh's readers open unchanged
(``tests/test_lexical_bulk.py`` compares them with whoosh's writer's, byte for byte).

Only for a new, empty index: ``LexicalIndex.write(bulk=True)`` on a generation being built.
"""

from __future__ import annotations

import gc
import zlib
from array import array
from collections.abc import Iterable
from typing import Any

from whoosh.codec.whoosh3 import WHOOSH3_HEADER_MAGIC, W3Codec, W3TermInfo
from whoosh.compat import dumps
from whoosh.filedb.filetables import OrderedHashWriter
from whoosh.index import TOC, clean_files
from whoosh.system import pack_int, pack_ushort
from whoosh.util.numeric import byte_to_length, length_to_byte
from whoosh.util.numlists import delta_encode

BLOCK = 128  # postings per block: W3Codec's default blocklimit
COMPRESSION = 3  # W3Codec's default zlib level
MEMO_CHARS = 64  # field values up to this long are indexed once per build (most repeat from note to note)
MEMO_MAX = 20_000  # values remembered: the repeating ones come early; a large vault's unique ones are many


class _Block:
    """One block of a term's postings, with the statistics ``W3TermInfo.add_block`` reads."""

    def __init__(self, ids: list[int], weights: list[float], lengths: list[int]) -> None:
        self._ids = array("I", ids)
        self._weights = array("f", weights)
        self._maxweight = 0.0
        for w in weights:  # as W3PostingsWriter.add_posting keeps it (the first maximum, 0 if none is > 0)
            if w > self._maxweight:
                self._maxweight = w
        real = [n for n in lengths if n]
        self._minlength = min(real) if real else None
        self._maxlength = max(real) if real else 0

    def __len__(self) -> int:
        return len(self._ids)

    def min_id(self) -> int:
        return self._ids[0]

    def max_id(self) -> int:
        return self._ids[-1]

    def min_length(self) -> int | None:
        return self._minlength

    def max_length(self) -> int:
        return self._maxlength

    def max_weight(self) -> float:
        return self._maxweight

    def data(self, values: list[bytes], fixedsize: int | None) -> bytes:
        """The block's pickled, compressed (ids, weights, values), as ``W3PostingsWriter`` writes them."""
        weights = self._weights
        first = weights[0]
        if weights.count(first) < len(weights):
            mini_w: Any = tuple(weights)
        else:
            mini_w = None if first == 1.0 else first
        if fixedsize is None or fixedsize < 0:
            mini_v: Any = tuple(values)
        elif fixedsize == 0:
            mini_v = None
        else:
            mini_v = b"".join(values)
        return zlib.compress(dumps((tuple(delta_encode(self._ids)), mini_w, mini_v), 2), COMPRESSION)

    def info(self) -> bytes:
        return dumps(
            (
                len(self._ids),
                self._ids[-1],
                self._maxweight,
                COMPRESSION,
                length_to_byte(self._minlength),
                length_to_byte(self._maxlength),
            ),
            2,
        )


def write_new_segment(ix: Any, docs: Iterable[tuple[dict[str, Any], dict[str, Any] | None]]) -> int:
    """Add ``docs`` to the empty index ``ix`` as one segment and commit it; the number of documents
    written. Each doc: ``add_document``'s keyword arguments (no boosts), and what ``field.index(value)``
    returns for some of its fields if known already (or None)."""
    schema = ix.schema
    if not ix.is_empty():
        raise ValueError("the lean writer builds only a new index")
    lock = ix.lock("WRITELOCK")
    if not lock.acquire():
        from whoosh.index import LockError

        raise LockError
    # The build keeps every posting until the end, so the cyclic collector's full passes walk an
    # ever larger heap for nothing (it holds no cycles): a good part of a build's CPU. Off meanwhile.
    collecting = gc.isenabled()
    gc.disable()
    try:
        storage, codec = ix.storage, W3Codec()
        generation = ix.latest_generation() + 1
        segment = codec.new_segment(storage, ix.indexname)
        perdoc = codec.per_document_writer(storage, segment)
        pool = _Pool()
        count = 0
        try:
            for docnum, (fields, indexed) in enumerate(docs):
                _add(schema, perdoc, pool, docnum, fields, indexed or {})
                count += 1
            perdoc.close()
            segments = []
            if count:  # (whoosh commits a writer that added nothing as a generation without segments)
                _write_postings(storage, segment, schema, pool)
                segment.set_doc_count(count)
                if segment.should_assemble():
                    segment.create_compound_file(storage)
                segments.append(segment)
            else:
                for name in segment.list_files(storage):
                    storage.delete_file(name)
            commit_toc(ix, segments, generation)
        except BaseException:
            if not perdoc.is_closed:
                perdoc.close()
            for name in segment.list_files(storage):
                storage.delete_file(name)
            raise
    finally:
        # the per-document writer's scratch folder (whoosh's writer removes it the same way)
        ix.storage.temp_storage(f"{ix.indexname}.tmp").destroy()
        lock.release()
        if collecting:
            gc.enable()
    return count


def commit_toc(ix: Any, segments: list[Any], generation: int) -> None:
    """Make ``segments`` the index (what readers see switches here, as in ``SegmentWriter._commit_toc``)."""
    TOC(ix.schema, segments, generation).write(ix.storage, ix.indexname)
    clean_files(ix.storage, ix.indexname, generation, segments)


class _Pool:
    """The build's postings in memory, ~8 bytes each: per field and term an array of (docnum, code)
    pairs, a code naming one distinct (weight, value bytes) of the build (a term's frequency, mostly)."""

    def __init__(self) -> None:
        self.terms: dict[str, dict[bytes, array[int]]] = {}
        self.codes: dict[tuple[float, bytes], int] = {}
        self.lengths: dict[str, dict[int, int]] = {}  # field → docnum → length as whoosh reads it back
        self.memo: dict[tuple[str, Any], list[Any]] = {}  # (field, short value) → its postings: type, tags, dates


def _add(schema: Any, perdoc: Any, pool: _Pool, docnum: int, fields: dict[str, Any], indexed: dict[str, Any]) -> None:
    """``SegmentWriter.add_document`` for one document, its postings into ``pool``."""
    names = sorted(fields)
    unknown = [n for n in names if n not in schema]
    if unknown or any(n.startswith("_") for n in names):
        raise ValueError(f"fields the lean writer cannot add: {unknown or names}")
    codes, memo = pool.codes, pool.memo
    perdoc.start_doc(docnum)
    for name in names:
        value = fields[name]
        if value is None:
            continue
        field = schema[name]
        length = 0
        if field.indexed:
            scorable = field.scorable
            terms = pool.terms.setdefault(name, {})
            items = indexed.get(name)
            if items is None and (isinstance(value, float) or (isinstance(value, str) and len(value) <= MEMO_CHARS)):
                items = memo.get((name, value))
                if items is None:
                    items = list(field.index(value))
                    if len(memo) < MEMO_MAX:  # unique values (ids, paths, times) would fill it for nothing
                        memo[name, value] = items
            elif items is None:
                items = field.index(value)
            for tbytes, freq, weight, vbytes in items:
                if scorable:
                    length += freq
                key = (weight * 1.0, vbytes)  # * the field boost (1.0), as whoosh
                code = codes.get(key)
                if code is None:
                    code = codes[key] = len(codes)
                got = terms.get(tbytes)
                if got is None:
                    terms[tbytes] = array("I", (docnum, code))
                else:
                    got.append(docnum)
                    got.append(code)
            if length:
                pool.lengths.setdefault(name, {})[docnum] = byte_to_length(length_to_byte(length))
        if field.separate_spelling() or field.vector:
            raise ValueError(f"the lean writer does not write spelling or vectors ({name})")
        perdoc.add_field(name, field, value if field.stored else None, length)
        column = field.column_type
        if column:
            perdoc.add_column_value(name, column, field.to_column_value(value))
    perdoc.finish_doc()


def _write_postings(storage: Any, segment: Any, schema: Any, pool: _Pool) -> None:
    """The terms file and the postings file, as ``W3FieldWriter`` and ``W3PostingsWriter`` write them."""
    tindex = OrderedHashWriter(segment.create_file(storage, W3Codec.TERMS_EXT))
    fieldmap: dict[str, int] = {}
    tindex.extras["fieldmap"] = fieldmap
    postfile = segment.create_file(storage, W3Codec.POSTS_EXT)
    offset = postfile.tell()
    weight_of = [w for w, _ in pool.codes]  # code → weight, value bytes (dicts keep insertion order)
    value_of = [v for _, v in pool.codes]
    try:
        for name in sorted(n for n, terms in pool.terms.items() if terms):  # a field without terms has no id
            fieldid = fieldmap[name] = len(fieldmap)
            fixedsize = schema[name].format.fixed_value_size()
            flen = pool.lengths.get(name, {})
            terms = pool.terms[name]
            for tbytes in sorted(terms):
                pairs = terms[tbytes]
                docs, codes = pairs[0::2].tolist(), pairs[1::2].tolist()
                n = len(docs)
                terminfo = W3TermInfo()
                out = bytearray(WHOOSH3_HEADER_MAGIC)  # the term's postings, written at once
                for i in range(0, n, BLOCK):
                    ids = docs[i : i + BLOCK] if n > BLOCK else docs
                    part = codes[i : i + BLOCK] if n > BLOCK else codes
                    block = _Block(ids, [weight_of[c] for c in part], [flen.get(d, 0) for d in ids])
                    terminfo.add_block(block)
                    data = block.data([v for c in part if (v := value_of[c])], fixedsize)
                    info = block.info()
                    size = len(info) + len(data)
                    out += pack_int(size if i + BLOCK < n else -size)
                    out += info
                    out += data
                postfile.write(out)
                terminfo.set_extent(offset, len(out))
                offset += len(out)
                tindex.add(pack_ushort(fieldid) + tbytes, terminfo.to_bytes())
    finally:
        tindex.close()
        postfile.close()
