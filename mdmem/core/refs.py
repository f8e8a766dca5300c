"""External references and person identities, pure: what a note cites outside the vault
(URLs, e-mail addresses, tickets, DOIs, file paths, ids in other systems) and the names a person is
known by, each in one canonical form so that every way of writing it finds the same thing.

``classify`` is the one place a reference is normalised: ``http://WWW.Example.com/a/#top`` and
``https://example.com/a`` are one URL, ``Alice@Example.COM`` and ``mailto:alice@example.com`` one
e-mail address, ``pay-1234`` is ``PAY-1234``, ``https://doi.org/10.1000/X`` is ``doi:10.1000/x``.
``identity_keys`` and ``mention_key`` do the same for people. No imports beyond the standard library.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

# kind → what it is; the order ``refs`` lists a note's references in
KINDS = ("url", "email", "doi", "ticket", "path", "handle", "id", "other")
FRONTMATTER, BODY = "frontmatter", "body"  # where a note wrote a reference
EXTERNAL = "ref:"  # node-key prefix of an external thing in the graph: ``ref:KIND:VALUE``

_EMAIL = re.compile(r"^[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)+$", re.UNICODE)
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_DOI_URL = re.compile(r"^(?:https?://)?(?:dx\.)?doi\.org/(10\.\d{4,9}/\S+)$", re.IGNORECASE)
_TICKET = re.compile(r"^[A-Za-z][A-Za-z0-9_]*-\d+$")  # PAY-1234, ops_2-17
_ISSUE = re.compile(r"^([\w.-]+/[\w.-]+)#(\d+)$")  # owner/repo#123
_HANDLE = re.compile(r"^@[\w.-]+$", re.UNICODE)
_ID = re.compile(r"^([A-Za-z][\w.+-]*):([^\s/][^\s]*)$", re.UNICODE)  # github:alice, hey:inv-003, slack:U12
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_WINDOWS = re.compile(r"^[A-Za-z]:[\\/]")
_FILE_EXT = re.compile(r"\.[A-Za-z0-9]{1,8}$")
# Characters a URL path keeps as they are; anything else is percent-encoded, so "ü" and "%C3%BC" agree.
_PATH_SAFE = "/:@!$&'()*+,;=-._~"
_DEFAULT_PORTS = {"http": "80", "https": "443", "ftp": "21"}


@dataclass(frozen=True, slots=True)
class Ref:
    """A reference a note makes to something outside the vault."""

    kind: str  # one of KINDS
    value: str  # the canonical form ``cites`` matches on
    written: str  # as the note wrote it
    origin: str = FRONTMATTER  # frontmatter (``refs:``) or body (a URL or e-mail address in the text)


def node_key(kind: str, value: str) -> str:
    """The graph key of an external thing: ``ref:url:https://example.com/a``."""
    return f"{EXTERNAL}{kind}:{value}"


def classify(written: str) -> tuple[str, str] | None:
    """(kind, canonical value) of a reference as written; None for an empty one."""
    s = written.strip().strip("<>").strip()
    if not s:
        return None
    low = s.casefold()
    if low.startswith("doi:"):
        doi = s[4:].strip()
        return "doi", unquote(doi).casefold()
    m = _DOI_URL.match(s)
    if m:
        return "doi", unquote(m.group(1)).casefold()
    if _DOI.match(s):
        return "doi", unquote(s).casefold()
    if low.startswith("mailto:"):
        s = unquote(s[7:].split("?", 1)[0])
        return ("email", s.casefold()) if _EMAIL.match(s) else ("other", " ".join(s.split()).casefold())
    if _EMAIL.match(s):
        return "email", s.casefold()
    if low.startswith("file://"):
        return "path", unquote(urlsplit(s).path) or s
    scheme = _SCHEME.match(s)
    if scheme or low.startswith("www."):
        return "url", normalize_url(s if scheme else "https://" + s)
    if _TICKET.match(s):
        return "ticket", s.upper()
    m = _ISSUE.match(s)
    if m:
        return "ticket", f"{m.group(1).casefold()}#{m.group(2)}"
    if _HANDLE.match(s):
        return "handle", s.casefold()
    if s.startswith(("/", "~/", "./", "../", "\\\\")) or _WINDOWS.match(s):
        return "path", s
    m = _ID.match(s)
    if m:
        return "id", s.casefold()
    folders = "/" in s or "\\" in s
    if (folders or " " not in s) and (_FILE_EXT.search(s) or (folders and " " not in s)):
        return "path", s  # docs/Spec.pdf, build\out.log, "docs/Retry plan.pdf": as written (case may matter)
    return "other", " ".join(s.split()).casefold()


def normalize_url(url: str) -> str:
    """A URL's canonical form: http and https alike (written https), host in lower case without
    ``www.`` or a default port, no fragment, no trailing slash, the path's encoding made uniform."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url.strip()
    scheme = parts.scheme.casefold()
    if scheme == "http":
        scheme = "https"
    host = (parts.hostname or "").casefold().removeprefix("www.")
    if port is not None and str(port) != _DEFAULT_PORTS.get(parts.scheme.casefold()):
        host += f":{port}"
    user = f"{parts.username}@" if parts.username else ""
    path = quote(unquote(parts.path), safe=_PATH_SAFE).rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{scheme}://{user}{host}{path}{query}"


def site_target(value: str, sites: Iterable[tuple[str, str]]) -> str | None:
    """The vault link target a URL (canonical, ``normalize_url``) names when it lies under a site
    the vault is published as (``sites``: (canonical URL prefix, vault folder)): its path below the
    prefix, in that folder, without ``.html`` or a trailing ``index``; None for any other URL.
    "https://til.example.net/sqlite/wal" under ("https://til.example.net", "") → "sqlite/wal"."""
    for prefix, folder in sites:
        if value == prefix or value.startswith(prefix + "/"):
            rest = unquote(value[len(prefix) :].split("?", 1)[0]).strip("/")
            rest = rest.removesuffix(".html").removesuffix("/index")
            rest = "" if rest == "index" else rest
            target = "/".join(p for p in (folder, rest.strip("/")) if p)
            return target or None
    return None


def note_refs(frontmatter: Iterable[str], body: Iterable[str]) -> list[Ref]:
    """A note's references: its ``refs:`` items and the URLs and e-mail addresses of its body, each
    (kind, value) once per origin, in the order written."""
    out: list[Ref] = []
    seen: set[tuple[str, str, str]] = set()
    for origin, items in ((FRONTMATTER, frontmatter), (BODY, body)):
        for written in items:
            kv = classify(written)
            if kv is None or (*kv, origin) in seen:
                continue
            seen.add((*kv, origin))
            out.append(Ref(kv[0], kv[1], written.strip(), origin))
    return out


# -- body text ---------------------------------------------------------------------------------------

_BARE_URL = re.compile(r"(?<![\w@/])(?:https?://|ftp://|www\.)[^\s<>\"'`\[\]{}|\\^]+", re.IGNORECASE)
_BARE_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}(?![\w-])", re.UNICODE)
_TRAILING = ".,;:!?*_~'\""


def text_refs(text: str) -> list[str]:
    """The bare URLs and e-mail addresses in a run of prose (markdown syntax already removed), as
    written: trailing punctuation and an unbalanced closing parenthesis are not part of a URL."""
    found: list[tuple[int, str]] = []
    for m in _BARE_URL.finditer(text):
        url = m.group()
        while url:
            if url[-1] in _TRAILING:
                url = url[:-1]
            elif url[-1] == ")" and url.count(")") > url.count("("):
                url = url[:-1]
            else:
                break
        if url and url.casefold() not in ("http://", "https://", "ftp://", "www."):
            found.append((m.start(), url))
    rest = _BARE_URL.sub(_blank, text)  # an address inside a URL is the URL's
    found += [(m.start(), m.group()) for m in _BARE_EMAIL.finditer(rest)]
    return [u for _, u in sorted(found)]


def blank_refs(text: str) -> str:
    """``text`` with its bare URLs and e-mail addresses (``text_refs``) blanked to spaces, in one pass:
    the places of everything else stay."""
    return _BARE_EMAIL.sub(_blank, _BARE_URL.sub(_blank, text))


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group())


def is_external_href(href: str) -> bool:
    """Whether a markdown link's target is a reference outside the vault (a web or mail address)."""
    low = href.strip().casefold()
    return low.startswith(("http://", "https://", "ftp://", "mailto:", "www.")) or low.startswith("doi:")


# -- people ------------------------------------------------------------------------------------------

AS_WRITTEN, DERIVED = 0, 1  # an identity's strength: as the person note wrote it, or a form derived from it


def mention_key(text: str) -> str:
    """The key a mention of someone is looked up by (an entity, a link target, an e-mail reference):
    an e-mail address or URL in canonical form, else the words case-folded (as entity names are)."""
    s = text.strip().strip("[]").split("|", 1)[0].strip()
    kv = classify(s)
    if kv is not None and kv[0] in ("email", "url", "doi"):
        return kv[1]
    return " ".join(s.split()).casefold()


def identity_keys(written: str) -> list[tuple[str, int]]:
    """The keys an identity of a person is found by, each with its strength: ``@alice`` also as
    ``alice``; ``github:alice`` also as ``@alice`` and ``alice``; an e-mail address and a URL in
    canonical form; a name case-folded."""
    key = mention_key(written)
    if not key:
        return []
    out = [(key, AS_WRITTEN)]
    if _HANDLE.match(key):
        out.append((key[1:], DERIVED))
    else:
        m = _ID.match(key)
        if m and "@" not in key and classify(key) == ("id", key):
            out += [("@" + m.group(2), DERIVED), (m.group(2), DERIVED)]
    return out


@dataclass(frozen=True, slots=True)
class IdentityClash:
    """An identity key two person notes write alike (``@alice`` on both): ``winner`` gets the mentions."""

    key: str
    winner: str
    others: tuple[str, ...]


def person_index(rows: Iterable[tuple[str, str, int]]) -> tuple[dict[str, str], list[IdentityClash]]:
    """key → person note from (path, key, strength) rows, and the clashes: a key goes to the note
    that claims it most strongly (as written beats derived), then to the first by path. Only keys two
    notes write are clashes; a derived form two share (``alice`` of ``@alice`` and of ``github:alice``)
    goes to the first by path without a word, as it follows from what was written."""
    claims: dict[str, dict[str, int]] = {}
    for path, key, strength in rows:
        mine = claims.setdefault(key, {})
        mine[path] = min(strength, mine.get(path, strength))
    index: dict[str, str] = {}
    clashes: list[IdentityClash] = []
    for key in sorted(claims):
        by = claims[key]
        best = min(by.values())
        top = sorted(p for p, s in by.items() if s == best)
        index[key] = top[0]
        if len(top) > 1 and best == AS_WRITTEN:
            clashes.append(IdentityClash(key, top[0], tuple(top[1:])))
    return index, clashes


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def identities_given(emails: list[str], handles: list[str], names: list[str]) -> list[str]:
    """The identities as the person note writes them: e-mail addresses as given (checked), handles with
    their ``@`` (``dana`` → ``@dana``; ``github:dana`` as it is), names with their spaces collapsed."""
    from .errors import BadValue

    out = []
    for e in emails:
        if not _EMAIL.fullmatch(e.strip()):
            raise BadValue(f"--email {e!r} is not an e-mail address; write it like dana@example.com.")
        out.append(e.strip())
    for h in handles:
        h = h.strip()
        if not re.fullmatch(r"@?[\w.-]*\w|[A-Za-z][\w.+-]*:[\w.-]*\w", h):
            raise BadValue(f"--handle {h!r} is not a handle; write it like @dana or github:dana.")
        out.append(h if h.startswith("@") or ":" in h else "@" + h)
    out += [" ".join(n.split()) for n in names if n.strip()]
    return out
