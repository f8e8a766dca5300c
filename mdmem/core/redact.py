"""Pure secret redaction: what an agent captured is scrubbed before it is written.

Each rule names a kind of secret; a match is replaced by ``[REDACTED:kind]``. Where a secret sits
behind a label (``password=…``, ``Authorization: Bearer …``) the label stays and only the value
goes, so the note still says that a password was set, not what it was. Rules favour catching
secrets over keeping odd-looking text: a false positive costs a word, a miss leaks a key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# (kind, pattern, group holding the secret; 0 = the whole match)
_RULES: tuple[tuple[str, re.Pattern[str], int], ...] = (
    (
        "private-key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
        0,
    ),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"), 0),
    (
        "aws-secret-key",
        re.compile(
            r"(?i)\baws_?(?:secret_?(?:access_?)?key|session_?token)\b[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{16,})"
        ),
        1,
    ),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})\b"), 0),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}\b"), 0),
    ("api-key", re.compile(r"\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_\-]{20,}\b"), 0),
    ("stripe-key", re.compile(r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}\b"), 0),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}\b"), 0),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+"), 0),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), 0),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\b"), 0),
    (
        "auth-header",
        re.compile(
            r"(?i)\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)\s+([A-Za-z0-9._~+/=\-]{6,})"
        ),
        1,
    ),
    ("bearer-token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{20,}=*)"), 1),
    # a scheme of at most 32 characters: "a.a.a…" without "://" was scanned to its end from every letter
    ("url-password", re.compile(r"\b[a-z][a-z0-9+.\-]{0,31}://[^\s:/@]+:([^\s@/]+)@"), 1),
    (
        "password",
        re.compile(
            r"(?i)\b(?:[a-z0-9]+_)*(?:password|passwd|pwd|passphrase|secret|client_secret|api[_-]?key|apikey|"
            r"access[_-]?token|auth[_-]?token|refresh[_-]?token|private[_-]?key|secret[_-]?key)\b[\"']?\s*"
            r"(?::|=|:=|=>)\s*(\"[^\"\n]{3,}\"|'[^'\n]{3,}'|[^\s\"',;*<\[({$%][^\s\"',;]{3,})"
        ),
        1,
    ),
)


@dataclass(frozen=True, slots=True)
class Redaction:
    """Text with its secrets replaced, and how many of each kind were found."""

    text: str
    found: dict[str, int]

    @property
    def count(self) -> int:
        return sum(self.found.values())


def redact(text: str) -> Redaction:
    """Replace every secret in ``text`` by ``[REDACTED:kind]``."""
    found: dict[str, int] = {}
    for kind, pattern, group in _RULES:
        marker = f"[REDACTED:{kind}]"

        def sub(m: re.Match[str], kind: str = kind, marker: str = marker, group: int = group) -> str:
            value = m.group(group)
            if value is None or "[REDACTED:" in value:
                return m.group(0)
            found[kind] = found.get(kind, 0) + 1
            if group == 0:
                return marker
            start, end = m.start(group) - m.start(0), m.end(group) - m.start(0)
            whole = m.group(0)
            return whole[:start] + marker + whole[end:]

        text = pattern.sub(sub, text)
    return Redaction(text, found)


def redact_text(text: str) -> str:
    """``text`` with its secrets replaced (see ``redact``)."""
    return redact(text).text
