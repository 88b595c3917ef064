"""Secret scanning: credentials are replaced before anything is stored, ordinary prose is not."""

from __future__ import annotations

import uuid

import pytest
from dokoro_store.walls.secrets import redact, redact_all

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


def test_index_content_is_a_plain_write_whose_statement_hook_redacts_every_string_it_stores(any_store) -> None:
    """index_content writes through Database.writing() (Core statements, no ORM session): the title,
    which nothing redacts before the statement, reaches no stored row with its secret, in the
    document or its chunks, threaded or not."""
    from sqlalchemy import text

    store = any_store
    store.docs.index_content("plain-write", f"Rotate the deploy key monthly; it is {GITHUB}.", f"Key {GITHUB}")
    store.docs.index_content("plain-thread", "The second turn of the talk.", f"Turn {GITHUB}", thread="talk-1")

    with store.db.engine.connect() as connection:
        docs = connection.execute(text("SELECT id, title, content, thread FROM docs WHERE id LIKE 'plain-%'")).all()
        chunks = connection.execute(
            text("SELECT chunk_id, header_context FROM chunks WHERE doc_id LIKE 'plain-%'")
        ).all()
    assert sorted(row.id for row in docs) == ["plain-thread", "plain-write"]
    assert [row.thread for row in docs if row.id == "plain-thread"] == ["talk-1"]
    assert chunks, "the documents were indexed"
    stored = [str(value) for row in [*docs, *chunks] for value in row if value is not None]
    assert not [value for value in stored if GITHUB in value]
    assert all("[REDACTED" in row.title for row in docs)


# ------------------------------------------------------------------ broader formats (issue 12)
# Well-formed fakes composed at run time, in the shapes real credentials take.
ENV_CASES = [
    ("DB_PASSWORD=" + "Tr0ub4dor-3x", "Tr0ub4dor-3x"),
    ("export GITHUB_TOKEN=" + "gho_" + "Pk4Lr9" * 6, "gho_"),
    ('export API_SECRET="' + "s3cr3t-value!" + '"', "s3cr3t-value!"),
    ("SERVICE_TOKEN='" + "svQ9w8E7r6T5y4U3i2" + "'", "svQ9w8E7r6T5y4U3i2"),
    ("STRIPE_SECRET_KEY=" + "plainlongsecretvalue", "plainlongsecretvalue"),
    ("SIGNING_KEY=" + "kY8fP2mQ9zR4tW7x", "kY8fP2mQ9zR4tW7x"),
    ("MY_KEY=" + "Ab3dEf9hIjK2mN0pQ7sT", "Ab3dEf9hIjK2mN0pQ7sT"),
    ("db_password: " + "hunter2pass", "hunter2pass"),
    ('{"client_secret": "' + "cl1ent-s3cret" + '"}', "cl1ent-s3cret"),
    ("apiToken = '" + "tok3nValue99" + "'", "tok3nValue99"),
    ("aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY", "wJalrXUtnFEMI"),
    ('reason: "x\\nexport SERVICE_TOKEN=\\"' + "svQ9w8E7r6T5y4U3i2" + '\\""', "svQ9w8E7r6T5y4U3i2"),
]


@pytest.mark.parametrize(("text", "secret"), ENV_CASES, ids=[t.split("=")[0][:24] for t, _ in ENV_CASES])
def test_env_style_assignments_to_secret_names_are_redacted(text: str, secret: str) -> None:
    result = redact(text)
    assert secret not in result.text, result.text
    assert result.kinds


FORMAT_CASES = [
    ("github-token", "gho_" + "Pk4Lr9" * 6),
    ("github-token", "github_pat_" + "11ABCDEFG0" + "x7Yq2Lm9Ns4Kp1Bv6Cz3Dw8" * 2),
    ("slack-token", "xoxp-" + "1234567890-0987654321-" + "AbCdEfGhIjKl"),
    ("slack-webhook", "https://hooks.slack.com/services/" + "T0ABCDEFG/B0ABCDEFG/" + "Xk9" * 8),
    ("stripe-key", "rk_live_" + "Qw3rTy" * 4),
    ("stripe-key", "sk_test_" + "Qw3rTy" * 4),
    ("google-api-key", "AIza" + "Sy" + "Xk9" * 11),
    ("aws-access-key", "ASIA" + "QX7Z" * 4),
    ("jwt", "eyJ" + "hbGciOiJIUzI1NiJ9" + ".eyJ" + "zdWIiOiJhZ2VudCJ9" + "." + "c2lnbmF0dXJlLXZhbHVl"),
    ("url-password", "mysql://root:" + "s3cr3tpw" + "@127.0.0.1:3306/app"),
    ("url-password", "redis://:" + "p4ssw0rd99" + "@cache:6379/0"),
    ("url-password", "https://deploy:" + "Zq8Wm3Zq8" + "@git.example.org/org/repo.git"),
    ("basic-auth", "Authorization: Basic " + "ZGVwbG95OnMzY3IzdA=="),
    ("secret", "the api key is " + "Zk8v2QpL0xWm4RtY7uBn3"),
    ("secret", "token " + "Zk8v2QpL0xWm4RtY7uBn3" + " expires"),
]
NEEDLE = {
    "url-password": lambda s: s.split("://")[-1].split("@")[0].split(":")[-1],
    "secret": lambda s: "Zk8v2QpL0xWm4RtY7uBn3",
}


@pytest.mark.parametrize(("kind", "secret"), FORMAT_CASES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(FORMAT_CASES)])
def test_real_token_formats_are_redacted(kind: str, secret: str) -> None:
    result = redact(f"see {secret} here")
    assert kind in result.kinds, result
    value = NEEDLE[kind](secret) if kind in NEEDLE else secret[-12:]
    assert value not in result.text


def test_a_private_key_cut_short_is_removed_to_the_end_of_its_body() -> None:
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + "BKcwggSjAgEAAoIBAQC7"
    result = redact(f"key:\n-----BEGIN RSA PRIVATE KEY-----\n{body}\n{body}\n\nafter the key")
    assert body not in result.text and "after the key" in result.text
    assert result.kinds == ("private-key",)


NOT_SECRETS = [
    "commit 3f2a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a\nMerge: 1a2b3c4 5d6e7f8\nAuthor: Ann <ann@example.org>",
    "cache key 3f2a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a and token 9f86d081884c7d659a2feaa0c55ad015",
    "request id 550e8400-e29b-41d4-a716-446655440000, session_id=550e8400-e29b-41d4-a716-446655440000",
    "see /home/user/.ssh/id_rsa, src/auth/token.py and ./config/secrets.example.yml",
    "git@github.com:org/repo.git and https://user@example.org/path and https://example.org/a:b",
    "token_count=123456 TOKEN_BUDGET=4000 password_file=/run/secrets/db key_id=abc123def",
    "primary_key=True; sort_key=name; password = getpass(); api_key = settings.api_key",
    'api_key = os.environ["API_KEY"]  # read from the environment',
    "password: see the vault; the token refresh runs every 5 minutes; secret: rotate monthly",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "API_KEY=${API_KEY} DB_PASSWORD=<your-password> TOKEN=*** SECRET=changeme",
    "The hashing floor embeds with 256 dimensions; keyword search uses BM25 with k1=1.2.",
    '{"key":"item:feature-20260610-222315","sha":"9f86d081884c7d659a2feaa0c55ad015"}',
    "cache key feature-20260610-222315 and sort_key=created-2026-06-10-x1",
]


@pytest.mark.parametrize("text", NOT_SECRETS, ids=range(len(NOT_SECRETS)))
def test_hashes_uuids_paths_and_code_are_left_alone(text: str) -> None:
    result = redact(text)
    assert result.text == text, result.kinds


def test_redacted_json_stays_valid_json() -> None:
    import json

    document = {
        "password": "Tr0ub4dor-3x",
        "text": "line\nDB_PASSWORD=hunter2xyz\n" + "ghp_" + "Zq8Wm3" * 6,
        "url": "postgresql://app:" + "hunter42Zebra" + "@db/prod",
        "quote": 'api_secret="x\\"y' + 'Zq8Wm3Zq8"',
    }
    serialised = json.dumps(document)
    result = redact(serialised)
    parsed = json.loads(result.text)
    assert "Tr0ub4dor" not in result.text and "hunter2xyz" not in result.text and "Zq8Wm3Zq8Wm3" not in result.text
    assert parsed["url"] == "postgresql://app:[REDACTED:url-password]@db/prod"


def test_json_values_are_redacted_by_their_keys() -> None:
    from dokoro_store.walls.secrets import redact_value

    value, kinds = redact_value({"password": "Tr0ub4dor-3x", "nested": [{"api_token": "tok3nValue99"}], "n": 3})
    assert value == {"password": "[REDACTED:password]", "nested": [{"api_token": "[REDACTED:password]"}], "n": 3}
    assert kinds == ("password", "password")
    same = {"note": "plain", "token_count": "123456"}
    assert redact_value(same) == (same, ())


HOSTILE = [
    "a" * 1_000_000,
    "x-" * 500_000,
    "password=" * 110_000,
    "https://" * 125_000,
    "-----BEGIN PRIVATE KEY-----" * 37_000,
    "a:b@" * 250_000,
    "sk-" * 330_000,
    ("The deploy token is fine. " * 40_000),
    "DB_PASSWORD=" + "x" * 1_000_000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=[t[:12] for t in HOSTILE])
def test_a_megabyte_of_hostile_text_is_redacted_in_linear_time(text: str) -> None:
    # No timing is asserted (the machine may be slow): a catastrophic pattern would not finish.
    result = redact(text)
    assert len(result.text) <= len(text) + 100 * len(result.kinds)


def test_a_text_is_scanned_once_however_many_layers_redact_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # A write redacts the same values in the service, the ORM flush and the statement hook; short
    # values (ids, states, timestamps) too. Each text is scanned once; its clean form is remembered.
    from dokoro_store.walls import secrets as module

    scanned: list[str] = []
    real = module._private_keys

    def counting(text: str, kinds: list[str]) -> str:
        scanned.append(text)
        return real(text, kinds)

    monkeypatch.setattr(module, "_private_keys", counting)
    value = f"mem_20261201_{uuid.uuid4().hex[:8]}"
    assert [module.redact(value).text for _ in range(3)] == [value] * 3
    assert scanned == [value]

    leaked = f"token {GITHUB[:-6]}{uuid.uuid4().hex[:6]} pasted"
    first = module.redact(leaked)
    assert first.kinds and "[REDACTED:" in first.text
    assert module.redact(first.text).text == first.text  # its clean form is not scanned again
    assert scanned == [value, leaked]
