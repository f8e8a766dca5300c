"""The vocabulary of the vault format and of retrieval: note types and statuses, the
date keys, what can be hidden, and the filter arguments every read takes. No imports, so the CLI
can build its options from it without loading anything."""

TYPES = frozenset(
    """decision preference fact context idea feedback domain problem milestone research project
    progress handoff conversation antipattern hub reference person note""".split()
)
STATUSES = ("active", "archived", "forgotten")
DATE_KEYS = ("created", "updated", "authored", "snoozed_until", "valid_from", "valid_until")
# Notes default retrieval hides, each shown again by ``--include``.
INCLUDE_CHOICES = ("forgotten", "archived", "snoozed", "expired")
# The retrieval filters every read takes (CLI options, MCP parameters and Vault keyword arguments
# alike); ``IndexStore.filters`` turns them into ``rank.Filters``.
FILTER_ARGS = ("type", "tag", "scope", "status", "since", "until", "path", "include", "as_of")
# Edge types that mean "comes right before/after" (a conversation, a log, a series of notes): ``query``
# lends relevance along them (``config.QuerySettings.spread``). The causal types are in ``graph``.
SEQUENCE_EDGES = (
    "follows",
    "precedes",
    "next",
    "previous",
    "prev",
    "reply_to",
    "replies_to",
    "continues",
    "continued_by",
)
# The frontmatter keys ``mdmem set`` edits (the rest: the lifecycle commands, or the file itself).
SETTABLE = ("salience", "confidence", "pinned", "type", "tags", "scope", "valid_from", "valid_until")
