"""The command table's rows that find notes: the four retrieval modes and context (one parameter set),
why, similar, neighbors, timeline, and the graph's reads (links, backlinks, path, entity, refs, cites,
person), list and profile."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .table import (
    FILTERS,
    NOTE,
    SEARCH_VAULTS,
    Command,
    Param,
    as_of_param,
    flag,
    include_param,
    limit,
    words,
)

if TYPE_CHECKING:
    from ..api.reader import Mode
    from ..core.schema import FilterArgs

QUERY = words("query", "The question or words to look for.", "The question or words to look for, in any language.")
LIMIT = limit(10, 1000, "Most results to show.", tool_default=8, tool_high=50)  # an agent's context is small
NO_VECTORS = flag("no_vectors", "BM25 only (no model), with the rest of the pipeline.")


def retrieval(mode: Mode, explain: str, *extra: Param) -> tuple[Param, ...]:
    """The parameters every retrieval mode takes: the text, the limit, the filters, explain (its help
    ``explain``), the mode's own (``extra``) and the vaults."""
    return (QUERY, LIMIT, FILTERS, flag("explain", explain, "Attach each score's parts."), *extra, *SEARCH_VAULTS)


def asks(mode: Mode) -> Any:
    """The call of a retrieval mode: the question, asked of the reader."""

    def run(
        r: Any, query: str, limit: int, filters: FilterArgs, explain: bool = False, no_vectors: bool = False
    ) -> Any:
        from ..api.reader import Ask

        return Ask(mode, query, limit, explain, not no_vectors, filters).of(r)

    return run


def hits_view(args: dict[str, Any]) -> dict[str, Any]:
    return {"explain": args["explain"]}


def retrieval_row(mode: Mode, help: str, about: str, explain: str, *extra: Param, served: bool = True) -> Command:
    return Command(
        mode,
        asks(mode),
        help=help,
        about=about,
        params=retrieval(mode, explain, *extra),
        target="reader",
        served=served,
        color=True,
        cli_view=hits_view,
        tool_view=lambda args: {"tool": mode},
    )


def _context(r: Any, prompt: str, budget: int, scope: tuple[str, ...], no_vectors: bool) -> Any:
    return r.context(prompt, budget=budget, scope=list(scope) or None, vectors=not no_vectors)


def _why(v: Any, query: str, limit: int, filters: FilterArgs, depth: int, vectors: bool | None) -> Any:
    from ..api.reader import Ask
    from ..core.memory import WHY_MATCHES

    # Found by the hybrid query (a running "mdmem serve" has the model loaded already), then followed.
    seeds = Ask("query", query, WHY_MATCHES, filters=filters).of(v) if vectors else None
    return v.why(query, limit, depth=depth, vectors=vectors, seeds=seeds, filters=filters)


def _similar(v: Any, note: str, limit: int, filters: FilterArgs, no_vectors: bool) -> Any:
    return v.similar(note, limit, vectors=not no_vectors, filters=filters)


def _neighbors(v: Any, note: str, depth: int, types: tuple[str, ...], direction: str, limit: int) -> Any:
    return v.neighbors(note, depth, types=list(types), direction=direction, limit=limit)


def _timeline(
    v: Any, note: str, window: int, all_notes: bool, no_vectors: bool, include: tuple[str, ...], as_of: str | None
) -> Any:
    vectors = False if no_vectors else None
    return v.timeline(note, window, all_notes=all_notes, vectors=vectors, include=list(include), as_of=as_of)


def _links(v: Any, note: str) -> Any:
    return v.links(note)


def _backlinks(v: Any, note: str) -> Any:
    return v.backlinks(note)


def _path(v: Any, source: str, target: str, types: tuple[str, ...] = (), max_depth: int | None = None) -> Any:
    return v.shortest_path(source, target, types=list(types), max_depth=max_depth)


def _entity(v: Any, name: str, include: tuple[str, ...] = (), as_of: str | None = None) -> Any:
    return v.entity(name, include=list(include), as_of=as_of)


def _refs(v: Any, note: str) -> Any:
    return v.refs(note)


def _cites(v: Any, ref: str, include: tuple[str, ...] = (), as_of: str | None = None) -> Any:
    return v.cites(ref, include=list(include), as_of=as_of)


def _person(v: Any, name: str, include: tuple[str, ...] = (), as_of: str | None = None) -> Any:
    return v.person(name, include=list(include), as_of=as_of)


def _list(v: Any, limit: int, filters: FilterArgs) -> Any:
    return v.list_notes(limit, filters=filters)


def _profile(v: Any, budget: int = 600, scope: str | None = None) -> Any:
    return v.profile(budget, scope=scope)


EXPLAIN_LINKS = Param(
    "explain",
    "Say how each target was found (path, suffix, nearest file name, …) and which "
    "files shared its name (--json always has it).",
    type=bool,
    default=False,
    on="render",
)
EDGE_TYPES = Param(
    "types",
    "Follow only edges of this type (repeatable), e.g. caused_by, mentions, about.",
    many=True,
    default=(),
    flag="--type",
    metavar="TYPE",
    about="Follow only these link types, e.g. caused_by, depends_on, mentions, about.",
)


ROWS: tuple[Command, ...] = (
    retrieval_row(
        "search",
        """Full-text (BM25) search for exact words, names and identifiers; other forms of a word count
    (deploy finds deployment, the form typed first), deploy* finds the words it starts, and a misspelled
    name finds the name one edit away. No model is loaded.""",
        """Exact-word full-text search (BM25, no model; fast). Best for identifiers, error codes, file and
        function names, people and product names, e.g. ERR_PAY_504 or max_pool_size.""",
        "Show each score's parts (bm25, the share of the query covered).",
        served=False,  # no model to keep warm
    ),
    retrieval_row(
        "vsearch",
        "Vector search: notes close in meaning to QUERY, whatever words they use (loads the model).",
        """Meaning-only search (vectors): finds notes that say the same thing in other words. Use when
        search finds nothing because you do not know the vault's wording.""",
        "Show each score's parts (cosine, chunk).",
    ),
    retrieval_row(
        "query",
        """Hybrid search: BM25 and vectors fused (RRF; by their scores when BM25 matches little of QUERY),
    the first ten ordered by a learned judgement of relevance, misspelled names fixed, priors, optional
    rerank, diversity.""",
        """Hybrid search (BM25 words + vector meaning, fused), without recall's intent routing. Use for a
        plain topical lookup, usually with filters (type, tag, scope, dates).""",
        "Show each score's parts: bm25, cosine, ranks, rrf, blend, the model's p and features, priors, final.",
        NO_VECTORS,
    ),
    retrieval_row(
        "recall",
        "What an agent should call first: classifies QUERY (why/when/who/recent/general) and routes it.",
        """Look up memory: call this FIRST when the request may depend on earlier decisions, preferences,
        facts, problems or sessions. It classifies the question (why / when / who / recent / general) and
        routes it: causes and consequences for "why", a time window for "when", entity matches for "who",
        newest first for "latest / last time", hybrid search otherwise. Returns compact hits (id, type,
        title, key line, score); call get(id) for a whole note.""",
        "Show the intent, the route and each score's parts.",
        flag("no_vectors", "No model: BM25 and the graph only."),
    ),
    Command(
        "context",
        _context,
        help="The memories worth injecting for PROMPT within a token budget: pinned first, then relevant.",
        about="""Memory for a prompt as one block within a token budget: pinned notes first, then the most
        relevant (what the prompt hook injects). Use recall instead when you want to pick notes.""",
        params=(
            words("prompt", "The prompt.", "The question or words to look for, in any language."),
            Param(
                "budget",
                "Most tokens of memory to return (estimated, ~4 characters a token).",
                type=int,
                default=600,
                low=50,
                high=100_000,
                tool_high=20_000,
                about="Most tokens to return.",
            ),
            Param(
                "scope",
                "Only this scope (global notes always qualify).",
                many=True,
                default=(),
                metavar="SCOPE",
            ),
            flag("no_vectors", "No model: BM25 only (what a cold hook does)."),
            *SEARCH_VAULTS,
        ),
        target="reader",
    ),
    Command(
        "why",
        _why,
        help="""Why something is so: the notes that best match QUERY, then their causes and effects along
    causal edges (caused_by, depends_on, because, led_to, supersedes, …) in both directions.

    \b
    Each result says whether it is a match, a cause or an effect, and the chain of edges (with
    their reasons) from the match to it. Causes rank with the match they explain.
    """,
        about="""Why something is so: the notes that best match the question, then their causes and effects
        along causal links (caused_by, depends_on, because, led_to, supersedes, …). Each result says
        whether it is a match, a cause or an effect, with the chain of links (and their reasons) to it.
        Use for "why did we …", "what led to …", "what depends on …".""",
        params=(
            QUERY,
            LIMIT,
            FILTERS,
            Param(
                "depth",
                "Causal hops to follow from each match, each way.",
                type=int,
                default=3,
                low=1,
                high=10,
                flag="-d/--depth",
                tool_high=6,
            ),
            Param(
                "vectors",
                "Find the matches with hybrid search (loads the model) / BM25 only. "
                "[default: BM25, hybrid only when BM25 finds nothing and the vault has vectors]",
                type=bool,
                default=None,
                flag="--vectors/--no-vectors",
                about="true: find the matches with hybrid search; false: BM25 only; unset: BM25, hybrid only "
                "when BM25 finds nothing.",
            ),
        ),
        served=True,
    ),
    Command(
        "similar",
        _similar,
        tool="find_similar",
        help="""The notes most like NOTE: by meaning (its vectors, when the index has them) and by its
    distinctive words, fused; NOTE itself left out.

    Notes it already links to or is linked from are marked (linked: out, in, both); the others
    are candidates for "mdmem link". No model runs: only vectors already in the index are used.
    """,
        about="""The memories most like one memory, by meaning and by its distinctive words; itself left out,
        those already linked with it marked (linked: out, in, both). Use before adding or correcting
        (is it already there, in other words?) and to find notes worth linking to it.""",
        params=(NOTE, LIMIT, FILTERS, flag("no_vectors", "Words alone (leave the note's vectors out).")),
    ),
    Command(
        "neighbors",
        _neighbors,
        help="Notes and entities within --depth hops of NOTE, nearest first, with the edge that reached each.",
        about="""The notes and entities linked to a note within a few hops, nearest first, each with the link
        that reached it. Use to explore what a memory is connected to.""",
        params=(
            NOTE,
            Param("depth", "Hops to go out.", type=int, default=1, low=1, high=10, flag="-d/--depth", tool_high=4),
            EDGE_TYPES,
            Param(
                "direction",
                "Follow edges out of each note, into it, or both.",
                default="both",
                choices=("both", "out", "in"),
            ),
            limit(200, 100_000, "Most neighbours to list.", tool_default=20, tool_high=50),
        ),
    ),
    Command(
        "timeline",
        _timeline,
        help="""What came before and after NOTE in time (a note reference, or a query whose best match is used).

    Related notes are its graph neighbours within two hops (links, mentions, versions, shared
    entities) and notes on the same subject; dates are authored, else created (a note without dates of
    its own: its first commit, following renames; a file git does not know: its mtime).
    """,
        about="""What came before and after a note in time, among its related notes (links, mentions, versions,
        shared entities, same subject). Use for "what happened around …", "what came after …".""",
        params=(
            words(
                "note",
                "A note or a question.",
                "A note (id, path, title, alias) or a question whose best match is used.",
            ),
            Param(
                "window",
                "Notes to show before and after.",
                type=int,
                default=5,
                low=1,
                high=1000,
                flag="-w/--window",
                tool_high=50,
                about="Notes before and after.",
            ),
            flag(
                "all_notes",
                "Place it among all notes, not only related ones (graph neighbours, same subject).",
                "Among all notes, not only related ones.",
                spelled="--all",
            ),
            flag("no_vectors", "Find a note for a query with BM25 only (no model)."),
            include_param(),
            as_of_param(),
        ),
        color=True,
        cli_view=lambda args: {"ref": args["note"]},
        tool_view=lambda args: {"ref": args["note"]},
    ),
    Command(
        "links",
        _links,
        params=(NOTE, EXPLAIN_LINKS),
        help="""Edges out of NOTE, one row per linked note and type: typed frontmatter links (with reasons),
        [[links]] in properties (typed by the property: parent: "[[X]]"), [[wikilinks]], embeds and
        markdown links in the body (mentions, with how many and the first line that has one), supersedes,
        and the entities it is about. Links resolve as Obsidian resolves
        them; attachments are listed, and dangling links and missing attachments are marked.""",
        about="""The links out of a memory: typed frontmatter links (with reasons), body mentions, what it
        supersedes, its entities. Use to see what a note depends on or points to.""",
    ),
    Command(
        "backlinks",
        _backlinks,
        params=(Param("note", "A note (id, path, title, alias) or an entity.", kind="note"), EXPLAIN_LINKS),
        help="""Notes that link to NOTE (or an entity), one row per note and type, with how many links and
        the first line that has one.""",
        about="""The memories that link to a note or mention an entity. Use to see what depends on a note
        before changing or forgetting it.""",
    ),
    Command(
        "path",
        _path,
        params=(
            Param("source", "The note the path starts from.", kind="note", metavar="A"),
            Param("target", "The note it ends at.", kind="note", metavar="B"),
            EDGE_TYPES,
            Param("max_depth", "Give up beyond this many hops.", type=int, default=None, low=1),
        ),
        help="""The shortest chain of edges between notes A and B (edges followed either way; each step
        shows its own direction, type and reason).""",
        about="The fewest links between two memories, in either direction. Use to see how two things relate.",
    ),
    Command(
        "entity",
        _entity,
        params=(
            words("name", "A person, system or product, or one of its aliases.", metavar="NAME"),
            include_param(),
            as_of_param(),
        ),
        help="""Everything about an entity (a person, system, project) under any of its names: its own note,
        notes that list it in `entities`, notes linking to it, and notes that mention it.""",
        about="""Everything about an entity: its own note, notes about it, links and mentions. Use for "who is
        …", "what do we know about …".""",
    ),
    Command(
        "refs",
        _refs,
        params=(NOTE,),
        help="""What NOTE cites outside the vault: its `refs:` (URLs, e-mail addresses, tickets such as
        PAY-1234, DOIs, file paths, ids such as github:alice) and the URLs and e-mail addresses in its
        body (not in code). Each with its kind, canonical value, as written, and where it is written.""",
        about="""What a note cites outside the vault: URLs, e-mail addresses, tickets (PAY-1234), DOIs, file
        paths, from its refs and its body, each with kind and canonical value. Use to follow a memory to
        its sources.""",
    ),
    Command(
        "cites",
        _cites,
        params=(
            Param("ref", "A URL, e-mail address, ticket such as PAY-1234, DOI or file path, in any written form."),
            include_param(),
            as_of_param(),
        ),
        help="""The notes that cite REF — a URL, e-mail address, ticket, DOI or path — however each wrote it.

        \b
        http and https, www., a trailing slash, a #fragment and the host's case do not matter; nor does
        an e-mail address's case; tickets match in any case (pay-1234 is PAY-1234); a DOI as doi:10.x
        or https://doi.org/10.x. File paths match as written.""",
        about="""The notes that cite a URL, ticket, e-mail address, DOI or path, however each wrote it
        (http/https, www., trailing slash and case do not matter). Use for "what do we know about PAY-1234"
        or "where did we use this page".""",
    ),
    Command(
        "person",
        _person,
        params=(
            words("name", "Someone's name, e-mail address or handle (@alice, github:alice).", metavar="NAME"),
            include_param(),
            as_of_param(),
        ),
        help="""Who NAME is — by any identity: a name, e-mail address, @handle or service:handle — from their
        person note (`type: person`, `identities: [...]`): identities, summary, the notes that mention
        them (in `entities`, a link, or an e-mail in `refs:` or the body) and their timeline.""",
        about="""Who someone is: their person note (identities, summary), the notes that mention any of their
        names, e-mail addresses or handles, and their timeline. Use for "who is …" and "what did … do".""",
    ),
    Command(
        "list",
        _list,
        tool="list_notes",
        params=(limit(20, 100_000, "Most notes to list.", tool_default=20, tool_high=200), FILTERS),
        help="""The notes the filters alone select, newest first (no query): e.g. --type decision, --tag
        billing, --since 2026-05-01. Dated as retrieval dates them: authored, updated, created; a note
        without dates of its own by its last commit.""",
        about="""List memories by filters alone, newest first, without a query: e.g. type decision for the
        latest decisions, type handoff with since/until for a day's sessions, a tag or a scope. Use when the
        question is which notes of a kind exist, not what answers some words.""",
    ),
    Command(
        "profile",
        _profile,
        params=(
            Param(
                "budget",
                "Most tokens to return (estimated, ~4 characters a token).",
                type=int,
                default=600,
                low=50,
                high=100_000,
            ),
            Param(
                "scope", "This scope's notes and handoffs (global notes always qualify).", default=None, metavar="SCOPE"
            ),
        ),
        help="""What an agent starting cold should know, within a token budget, in two labelled sections.

        \b
        Standing facts: pinned notes, preferences and facts of salience 0.7+, notes tagged identity
        or convention. Recent context: the latest handoffs, active decisions, open problems.
        The same vault gives the same answer (fixed order); --json lists each note and its section.""",
        about="""Who the user is and where things stand, in one call: standing facts (pinned rules, important
        preferences and facts, conventions) and recent context (latest handoffs, active decisions, open
        problems), within a token budget. Call it once when a session starts cold, before recall.""",
    ),
)
