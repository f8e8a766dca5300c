"""Every text pass over a note is linear: the parser, the plain text shown to readers, snippets, chunks,
redaction, the index's terms and the people named in prose (what ``query`` and ``recall`` add to their hits), on the inputs that made them quadratic or worse (a line of "[[", 30,000
paragraphs holding the query word, emphasis markers that never close …). Each case runs in a child
process under a CPU-time limit: a build that went back to quadratic would take minutes to hours on
these sizes, and is stopped there. Also: what the parser reads past its markdown bound is still found."""

from __future__ import annotations

import subprocess
import sys

from mdmem.core.links import analyze_body, display_text
from mdmem.core.mentions import find_names, prose_names, prose_of
from mdmem.core.text import snippet

SIZE = 200_000  # characters of each hostile body
CPU_SECONDS = 60  # the fixed passes take ~6 s of CPU here for all cases together; quadratic ones, hours

CASES = {
    "a line of [[": "[[" * (SIZE // 2),
    "[[x without ]]": "[[a" * (SIZE // 3),
    "embeds ![[": "![[" * (SIZE // 3),
    "brackets": "[" * SIZE,
    "links [a](": "[a](" * (SIZE // 4),
    "images ![a](": "![a](" * (SIZE // 5),
    "footnotes [^": "[^" * (SIZE // 2),
    "autolinks <http://": "<http://" * (SIZE // 8),
    "bold **a": "**a " * (SIZE // 4),
    "bold __a": "__a " * (SIZE // 4),
    "italics *a": "*a " * (SIZE // 3),
    "strike ~~a": "~~a " * (SIZE // 4),
    "backticks": "a" + "`" * SIZE,
    "backticks, each run shorter": "a " + " ".join("`" * k for k in range(630, 0, -1)),
    "code spans of every length": "a " + " ".join("`" * k for k in range(1, 630)),
    "heading with trailing blanks": "# a" + " " * SIZE + "b",
    "heading hashes": "## a" + " #" * (SIZE // 2) + "x",
    "blank lines": "x" + "\n \n" * (SIZE // 3) + "x",
    "scheme-like words": "a." * (SIZE // 2),
    "paragraphs holding the word": "word alpha\n\n" * (SIZE // 12),
    "one long sentence": "word " * (SIZE // 5),
}

SCRIPT = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_CPU, ({cpu}, {cpu}))
from mdmem.core.chunk import chunk_note
from mdmem.core.links import display_text
from mdmem.core.mentions import find_names, prose_names, prose_of
from mdmem.core.note import parse_note
from mdmem.core.redact import redact
from mdmem.core.text import index_terms, snippet
from tests.core.test_linear import CASES
people = prose_names([("people/ada", ["Ada Lovelace", "@ada"]), ("people/word", ["Word Alpha"])])
for case, body in CASES.items():
    print("case", case, flush=True)  # the last one printed is the one a kill stopped
    note = parse_note(body, "x.md")
    shown = display_text(body)
    snippet(shown, {{"word", "alpha", "a"}})
    chunk_note("t", body)
    redact(body)
    index_terms(note.text)
    find_names(display_text(prose_of(body)), people)
    assert len(note.text) >= len(body) // 2, case  # the text is indexed, not dropped
print("done", flush=True)
"""


def test_every_text_pass_is_linear() -> None:
    """All cases in one child process (one start-up), under one CPU limit."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(cpu=CPU_SECONDS)], capture_output=True, text=True)
    last = [ln for ln in proc.stdout.splitlines() if ln.startswith("case ")][-1:]
    assert proc.returncode == 0 and proc.stdout.endswith("done\n"), (
        f"stopped in {last} (rc {proc.returncode}): {proc.stderr[-500:]}"
    )


def test_what_lies_past_the_markdown_bound_is_still_found() -> None:
    from mdmem.core.links import MARKDOWN_MAX

    prose = "Plain words about lighthouses and fog.\n\n" * (MARKDOWN_MAX // 40 + 10)
    tail = (
        "## Late heading ##\n\nSee [[Target note|the target]] and [the plan](docs/plan.md#Risks), "
        "#latetag, https://example.org/x and ops@example.org.\n\n```\n[[in code]]\n```\n"
    )
    info = analyze_body(prose + tail)
    assert len(prose) > MARKDOWN_MAX
    assert ("Target note", "the target") in [(link.target, link.label) for link in info.links]
    assert ("docs/plan.md", "Risks") in [(link.target, link.heading) for link in info.links]
    assert "latetag" in info.tags and "https://example.org/x" in info.refs
    assert [h.text for h in info.headings][-1] == "Late heading"
    assert info.headings[-1].line == (prose + tail).count("\n", 0, (prose + tail).index("## Late"))
    assert "Late heading" in info.text and "lighthouses" in info.text


def test_snippets_still_pick_the_passage_with_the_most_query_words() -> None:
    text = "\n\n".join(["alpha only here"] * 2000 + ["alpha and beta together"] + ["beta only"] * 2000)
    assert snippet(text, {"alpha", "beta"}) == "**alpha** and **beta** together"
    shown = display_text("# Title ##\n\n**bold** and `code` and [[Note|label]] and [link](x.md) ~~old~~")
    assert shown == "Title\n\nbold and code and label and link old"


def test_the_prose_searched_for_names_is_bounded_as_the_text_shown_is() -> None:
    from mdmem.core.links import DISPLAY_MAX

    people = prose_names([("people/ada", ["Ada Lovelace"])])
    line = "Ada Lovelace wrote [[the table]] and `code`.\n"
    body = line * (4 * DISPLAY_MAX // len(line))
    prose = prose_of(body)
    assert len(prose) <= DISPLAY_MAX and "the table" not in prose and "code" not in prose
    assert find_names(display_text(prose), people)[0] == ("ada lovelace", "Ada Lovelace")
    assert prose_of("See `a\nb` and [[x]] but Ada ``here``") == "See   and   but Ada  "
