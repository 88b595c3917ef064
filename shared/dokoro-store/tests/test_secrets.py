"""Secret scanning: credentials are replaced before anything is stored, ordinary prose is not."""

from __future__ import annotations

import pytest
from dokoro_store.secrets import redact, redact_all

GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
CASES = [
    ("openai-key", f"export OPENAI_API_KEY_VALUE sk-proj-{'x' * 40}"),
    ("anthropic-key", f"key sk-ant-api03-{'Y' * 40} was used"),
    ("github-token", f"pushed with {GITHUB}"),
    ("gitlab-token", "glpat-abcdefghij0123456789"),
    ("slack-token", "xoxb-1234567890-abcdefghij"),
    ("stripe-key", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"),
    ("aws-access-key", "AKIAIOSFODNN7EXAMPLE"),
    ("google-api-key", "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("bearer-token", "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwx' https://api"),
    ("url-password", "postgresql://dokoro:hunter2pass@db.internal:5432/team"),
    ("password", 'config: password = "correct-horse-battery"'),
    ("dokoro-token", "dkr_0106aa6b_XOJcg77HOqf9bDECEvybLAV3GtLsSOlcKcMnqdpaFiQ"),
]


@pytest.mark.parametrize(("kind", "text"), CASES, ids=[kind for kind, _ in CASES])
def test_each_kind_of_secret_is_redacted(kind: str, text: str) -> None:
    result = redact(text)
    assert kind in result.kinds
    assert f"[REDACTED:{kind}]" in result.text
    assert "redacted" in result.notice()


def test_a_private_key_block_is_removed_whole() -> None:
    block = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAA\n-----END OPENSSH PRIVATE KEY-----"
    result = redact(f"before\n{block}\nafter")
    assert result.text == "before\n[REDACTED:private-key]\nafter"
    assert result.kinds == ("private-key",)


def test_the_surroundings_of_a_secret_are_kept() -> None:
    result = redact("connect to postgresql://dokoro:hunter2pass@db.internal:5432/team now")
    assert result.text == "connect to postgresql://dokoro:[REDACTED:url-password]@db.internal:5432/team now"


def test_ordinary_developer_prose_is_left_alone() -> None:
    prose = (
        "Fixed the race in auth/session.ts; the password reset flow uses signed cookies. "
        "See https://example.com/docs and sk-learn notes; token refresh happens every 5 min."
    )
    result = redact(prose)
    assert result.text == prose
    assert result.kinds == () and result.notice() == ""


def test_redacting_twice_changes_nothing_more() -> None:
    once = redact(f"token {GITHUB}")
    twice = redact(once.text)
    assert twice.text == once.text and twice.kinds == ()


def test_several_fields_are_redacted_together() -> None:
    values, kinds = redact_all(["plain", None, f"uses {GITHUB}"])
    assert values[0] == "plain" and values[1] is None and "[REDACTED:github-token]" in str(values[2])
    assert kinds == ("github-token",)


def test_indexed_documents_are_redacted_and_the_report_says_so(store) -> None:
    report = store.docs.index_content("research-keys", f"The staging key is {GITHUB}; rotate monthly.")

    assert any("redacted 1 secret" in note for note in report.notes)
    assert GITHUB not in (store.docs.get("research-keys").content or "")
    assert [h.doc_id for h in store.search.universal("staging key rotate").hits] == ["research-keys"]
