"""The evaluation datasets (pure): LoCoMo conversations, the gold set and public corpora, their judged
queries, and the notes an agent that captured a conversation would write (one per turn or per session)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


@dataclass(frozen=True, slots=True)
class Query:
    """One judged query: relevant note ids with grades, notes that must not show up, a group."""

    id: str
    text: str
    relevant: Mapping[str, int]
    group: str = ""
    excluded: tuple[str, ...] = ()
    any_of: bool = False  # answered by any one of ``relevant`` (a corpus question), not by all of them


_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_SESSION_KEY = re.compile(r"session_(\d+)")
_MONTHS = {
    m: i
    for i, m in enumerate(
        "january february march april may june july august september october november december".split(), 1
    )
}
_SESSION_DATE = re.compile(
    r"\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*", re.IGNORECASE
)


def normalize_evidence(raw: Iterable[Any]) -> tuple[str, ...]:
    """LoCoMo evidence ids as clean ``D<session>:<turn>`` ids, in order, without duplicates.

    Splits "D8:6; D9:17" and space-separated lists, mends "D:11:26" → D11:26 and "D30:05" → D30:5,
    and drops a bare "D" (data/README.md).
    """
    out: dict[str, None] = {}
    for item in raw:
        for piece in re.split(r"[;,\s]+", str(item)):
            m = _EVIDENCE.fullmatch(piece)
            if m:
                out.setdefault(f"D{int(m[1])}:{int(m[2])}", None)
    return tuple(out)


def parse_session_date(text: str) -> str:
    """ "1:56 pm on 8 May, 2023" → "2023-05-08T13:56:00Z" (LoCoMo times carry no zone)."""
    m = _SESSION_DATE.fullmatch(text)
    month = _MONTHS.get(m[5].lower()) if m else None
    if m is None or month is None:
        raise ValueError(f"not a LoCoMo session date: {text!r}")
    hour, minute = int(m[1]) % 12, int(m[2])
    if m[3].lower() == "p":
        hour += 12
    return f"{int(m[6]):04d}-{month:02d}-{int(m[4]):02d}T{hour:02d}:{minute:02d}:00Z"


def session_of(dia_id: str) -> int:
    """The session number of a dialogue id: "D8:6" → 8."""
    return int(dia_id[1:].split(":", 1)[0])


@dataclass(frozen=True, slots=True)
class Turn:
    """One utterance; photo turns carry the caption of the shared image."""

    dia_id: str
    speaker: str
    text: str
    caption: str | None = None


@dataclass(frozen=True, slots=True)
class Session:
    """A dated session of a conversation."""

    number: int
    date_time: str  # as LoCoMo writes it: "1:56 pm on 8 May, 2023"
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Question:
    """A scorable question: categories 1–4 with at least one evidence id."""

    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    """One LoCoMo sample: two speakers, their sessions and the questions about them."""

    sample_id: str
    speakers: tuple[str, ...]
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]


def parse_locomo(data: Sequence[Mapping[str, Any]]) -> list[Conversation]:
    """The conversations of a locomo10.json document, keeping only scorable questions."""
    convs = []
    for sample in data:
        c = sample["conversation"]
        sessions = []
        for key, turns in c.items():
            m = _SESSION_KEY.fullmatch(key)
            if not m or not isinstance(turns, list):
                continue  # session_N_date_time, speakers, or a dated session that has no turns
            sessions.append(
                Session(
                    number=int(m[1]),
                    date_time=str(c.get(f"{key}_date_time", "")),
                    turns=tuple(
                        Turn(
                            dia_id=normalize_evidence([t["dia_id"]])[0],
                            speaker=t["speaker"],
                            text=t.get("text", ""),
                            caption=t.get("blip_caption"),
                        )
                        for t in turns
                    ),
                )
            )
        questions = []
        for qa in sample.get("qa", []):
            cat = qa.get("category")
            evidence = normalize_evidence(qa.get("evidence") or [])
            if cat in CATEGORIES and evidence:
                questions.append(Question(text=str(qa["question"]), category=int(cat), evidence=evidence))
        convs.append(
            Conversation(
                sample_id=str(sample["sample_id"]),
                speakers=tuple(s for s in (c.get("speaker_a"), c.get("speaker_b")) if s),
                sessions=tuple(sorted(sessions, key=lambda s: s.number)),
                questions=tuple(questions),
            )
        )
    return convs


def _turn_text(t: Turn) -> str:
    if not t.caption:
        return t.text
    cap = t.caption.strip()
    if cap.lower().startswith(("a photo", "a picture")):
        shared = f"[shares {cap}]"
    else:
        shared = f"[shares a photo: {cap}]"
    return f"{t.text} {shared}".strip()


def _date_label(date_time: str) -> str:
    """A short human date for titles: "1:56 pm on 8 May, 2023" → "8 May 2023"."""
    m = _SESSION_DATE.fullmatch(date_time)
    return f"{int(m[4])} {m[5]} {m[6]}" if m else date_time


def _iso_or_none(date_time: str) -> str | None:
    try:
        return parse_session_date(date_time)
    except ValueError:
        return None


def session_id(number: int) -> str:
    """The note id of a session note."""
    return f"session-{number}"


def turn_notes(conv: Conversation) -> dict[str, str]:
    """One note per turn, as an agent capturing the chat would write it: path → text."""
    from .note import render_note

    notes = {}
    for s in conv.sessions:
        when = _date_label(s.date_time)
        previous = None
        for t in s.turns:
            sess, turn = t.dia_id[1:].split(":")
            meta: dict[str, Any] = {
                "id": t.dia_id,
                "title": f"{t.speaker}, {when}" if when else t.speaker,
                "type": "conversation",
                "created": _iso_or_none(s.date_time),
                "entities": [t.speaker],
            }
            if previous:  # the chat's order, as a typed link to the turn before
                meta["links"] = [{"type": "follows", "target": previous}]
            previous = t.dia_id
            notes[f"notes/session-{int(sess):02d}/turn-{int(turn):03d}.md"] = render_note(meta, _turn_text(t))
    return notes


def session_notes(conv: Conversation) -> dict[str, str]:
    """One note per session: every turn as a "Speaker: text" line."""
    from .note import render_note

    notes = {}
    previous = None
    for s in conv.sessions:
        when = _date_label(s.date_time)
        speakers = list(dict.fromkeys([*conv.speakers, *(t.speaker for t in s.turns)]))
        meta: dict[str, Any] = {
            "id": session_id(s.number),
            "title": f"Session {s.number} with {' and '.join(speakers)}" + (f", {when}" if when else ""),
            "type": "conversation",
            "created": _iso_or_none(s.date_time),
            "entities": speakers,
        }
        if previous:
            meta["links"] = [{"type": "follows", "target": previous}]
        previous = meta["id"]
        body = "\n".join(f"{t.speaker}: {_turn_text(t)}" for t in s.turns)
        notes[f"notes/session-{s.number:02d}.md"] = render_note(meta, body)
    return notes


def locomo_queries(conv: Conversation, level: str) -> list[Query]:
    """The conversation's questions with their relevant turn (or session) note ids."""
    out = []
    for i, q in enumerate(conv.questions):
        if level == "turn":
            relevant = {e: 1 for e in q.evidence}
        else:
            relevant = {session_id(session_of(e)): 1 for e in q.evidence}
        out.append(Query(id=f"{conv.sample_id}#{i}", text=q.text, relevant=relevant, group=CATEGORIES[q.category]))
    return out


def load_locomo(path: Path) -> list[Conversation]:
    """Read and parse a locomo10.json file."""
    with open(path, encoding="utf-8") as fh:
        return parse_locomo(json.load(fh))


# ---------------------------------------------------------------------------------------------
# gold set


def parse_gold(data: Any) -> list[Query]:
    """Queries from queries.yaml: a list, or a mapping holding the list (under ``queries``)."""
    if isinstance(data, Mapping):
        items = data.get("queries")
        if items is None:
            items = next((v for v in data.values() if isinstance(v, list)), [])
    else:
        items = data or []
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) or not item.get("query"):
            continue
        rel = item.get("relevant") or {}
        if isinstance(rel, Mapping):
            relevant = {str(k): int(v) for k, v in rel.items() if v}
        else:  # a plain list of ids: all grade 1
            relevant = {str(k): 1 for k in rel}
        out.append(
            Query(
                id=str(item.get("id", f"q{i + 1}")),
                text=str(item["query"]),
                relevant=relevant,
                group=str(item.get("kind") or "other"),
                excluded=tuple(str(x) for x in item.get("excluded") or ()),
            )
        )
    return out


def gold_as_of(folder: Path) -> str | None:
    """The gold set's "today" (``as_of`` in queries.yaml), as an ISO date, if it names one."""
    import yaml

    with open(folder / "queries.yaml", encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    value = data.get("as_of") if isinstance(data, Mapping) else None
    return str(value) if value else None


def load_gold(folder: Path) -> list[Query]:
    """The gold queries in ``folder/queries.yaml``."""
    import yaml

    with open(folder / "queries.yaml", encoding="utf-8") as fh:
        return parse_gold(yaml.safe_load(fh))


# ---------------------------------------------------------------------------------------------
# public corpora: a git repository at a commit, and questions about it


@dataclass(frozen=True, slots=True)
class Corpus:
    """A corpus questions file: which repository and commit, which of its files are the vault
    (git sparse-checkout patterns), the vault's ``mdmem.toml``, and the questions (``heldout``: the
    ids kept aside from tuning, reported apart)."""

    name: str
    source: str
    commit: str
    sparse: tuple[str, ...]
    config: str
    questions: tuple[Query, ...]
    heldout: frozenset[str]

    @property
    def slug(self) -> str:
        """A short folder-safe name: the repository's name ("simonw/til" → "til")."""
        return re.sub(r"[^A-Za-z0-9._-]+", "-", self.name.rsplit("/", 1)[-1]).strip("-") or "corpus"


def parse_corpus(data: Any, where: str = "questions file") -> Corpus:
    """A corpus questions file (see benchmarks/corpora/README.md); ``ValueError`` says what is wrong."""
    if not isinstance(data, Mapping) or not isinstance(data.get("corpus"), Mapping):
        raise ValueError(f"{where}: expected a mapping with `corpus:` and `questions:`.")
    meta = data["corpus"]
    commit = str(meta.get("commit") or "")
    if not re.fullmatch(r"[0-9a-f]{7,40}", commit):
        raise ValueError(f"{where}: corpus.commit must be a commit id, got {commit!r}.")
    sparse = meta.get("sparse") or ["*.md"]
    if not isinstance(sparse, list) or not all(isinstance(p, str) for p in sparse):
        raise ValueError(f"{where}: corpus.sparse must be a list of patterns.")
    queries, heldout, seen = [], set(), set()
    for i, item in enumerate(data.get("questions") or []):
        if not isinstance(item, Mapping) or not item.get("query"):
            raise ValueError(f"{where}: question {i + 1} has no `query`.")
        qid = str(item.get("id") or f"q{i + 1}")
        if qid in seen:
            raise ValueError(f"{where}: two questions have the id {qid!r}.")
        seen.add(qid)
        answers = item.get("answers") or []
        if not isinstance(answers, list):
            raise ValueError(f"{where}: {qid}: `answers` must be a list of paths.")
        queries.append(
            Query(
                id=qid,
                text=str(item["query"]),
                relevant={str(a): 1 for a in answers},
                group=str(item.get("kind") or "other"),
                any_of=True,
            )
        )
        if item.get("heldout"):
            heldout.add(qid)
    if not queries:
        raise ValueError(f"{where}: no questions.")
    return Corpus(
        name=str(meta.get("name") or "corpus"),
        source=str(meta.get("source") or ""),
        commit=commit,
        sparse=tuple(sparse),
        config=str(meta.get("config") or ""),
        questions=tuple(queries),
        heldout=frozenset(heldout),
    )


def resolve_answers(queries: Sequence[Query], paths: Iterable[str]) -> tuple[list[Query], list[str]]:
    """Each answer as the vault path it names: the path itself or the one path ending in ``/answer``.
    Returns the queries with resolved answers and the problems ("q1: no note at x", "… names 2 notes")."""
    paths = list(paths)
    known = set(paths)
    by_name: dict[str, list[str]] = {}
    for p in paths:
        by_name.setdefault(p.rsplit("/", 1)[-1], []).append(p)
    out, problems = [], []
    for q in queries:
        relevant: dict[str, int] = {}
        for answer, grade in q.relevant.items():
            if answer in known:
                relevant[answer] = grade
                continue
            found = [p for p in by_name.get(answer.rsplit("/", 1)[-1], []) if p.endswith("/" + answer)]
            if len(found) == 1:
                relevant[found[0]] = grade
            else:
                problems.append(f"{q.id}: {'no note at' if not found else f'{len(found)} notes end with'} {answer}")
        out.append(Query(q.id, q.text, relevant, q.group, q.excluded, q.any_of))
    return out, problems
