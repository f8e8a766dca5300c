"""Secret redaction: realistic (fake) keys and tokens go; ordinary text stays."""

from __future__ import annotations

import pytest

from mdmem.core.redact import redact

# Built from parts so the fakes are not one literal a scanner would flag in this file.
AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
GH_TOKEN = "ghp_" + "1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ"
GH_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOP"
SK_KEY = "sk-proj-" + "Xy12Ab34Cd56Ef78Gh90Ij12Kl34Mn56Op78Qr90St"
SK_ANT = "sk-ant-api03-" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEf"
JWT = "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7V5c3cI6u0hMqkQF2xYd\nq3b9Zr1k0Qy8mYwz"
    "\n-----END RSA PRIVATE KEY-----"
)
OPENSSH = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        (f"export AWS_ACCESS_KEY_ID={AWS_ID}", AWS_ID, "aws-access-key"),
        (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET, "aws-secret-key"),
        (f"git clone https://x:{GH_TOKEN}@github.com/acme/api", GH_TOKEN, "github-token"),
        (f"token is {GH_PAT} for CI", GH_PAT, "github-token"),
        (f"OPENAI_API_KEY={SK_KEY}", SK_KEY, "api-key"),
        (f"use {SK_ANT} in staging", SK_ANT, "api-key"),
        (f"curl -H 'Authorization: Bearer {JWT}' https://api", JWT, "jwt"),
        ('curl -H "Authorization: Bearer abcDEF123456ghiJKL789" https://api', "abcDEF123456ghiJKL789", "auth-header"),
        ("Authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy", "auth-header"),
        (f"key file:\n{PEM}\nend", "MIIEowIBAAKCAQEA7V5c3cI6u0hMqkQF2xYd", "private-key"),
        (f"{OPENSSH}", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "private-key"),
        (
            "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC (pasted, cut off)",
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
            "private-key",
        ),
        ("DB_PASSWORD=hunter2-Xq9", "hunter2-Xq9", "password"),
        ('{"password": "s3cr3t pass!"}', "s3cr3t pass!", "password"),
        ("client_secret: 8f9a7b6c5d4e3f2a", "8f9a7b6c5d4e3f2a", "password"),
        ("postgres://app:pa55w0rd@db.internal:5432/app", "pa55w0rd", "url-password"),
        ("slack xoxb-1234567890-abcdefghijkl", "xoxb-1234567890-abcdefghijkl", "slack-token"),
        ("stripe " + "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc", "stripe-key"),
    ],
)
def test_secrets_are_redacted(text: str, secret: str, kind: str) -> None:
    r = redact(text)
    assert secret not in r.text
    assert kind in r.found, r
    assert "[REDACTED:" in r.text


def test_labels_stay_and_only_values_go() -> None:
    r = redact("DB_PASSWORD=hunter2-Xq9 and Authorization: Bearer abcDEF123456ghiJKL789")
    assert r.text == "DB_PASSWORD=[REDACTED:password] and Authorization: Bearer [REDACTED:auth-header]"
    assert r.count == 2


@pytest.mark.parametrize(
    "text",
    [
        "We decided to rotate the password every 90 days.",
        "The token bucket algorithm limits the API to 100 requests.",
        "Commit 3f2a9c1e7b4d8f0a2c6e1b9d7f3a5c8e0b2d4f6a fixed ERR_PAY_504.",
        "Use sk-learn? No: scikit-learn. See ghp_ prefixes in the docs.",
        "Bearer tokens must never be logged.",
        "password: **see 1Password**",
    ],
)
def test_ordinary_text_is_untouched(text: str) -> None:
    r = redact(text)
    assert r.text == text and r.count == 0


def test_redaction_is_idempotent() -> None:
    once = redact(f"key {AWS_ID} pass=hunter2-Xq9 {PEM}").text
    assert redact(once).text == once and redact(once).count == 0


@pytest.mark.parametrize("text", ["password=${DB_PASSWORD}", "api_key: <your key here>", "secret = [see vault]"])
def test_placeholders_and_references_are_not_secrets(text: str) -> None:
    assert redact(text).text == text
