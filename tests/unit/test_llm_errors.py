"""Error translation and the retry policy, without a server."""

from __future__ import annotations

import email.utils
import time

import pytest

from xum.llm.errors import ErrorContext, classify, payload_fields
from xum.llm.retry import RetryPolicy, parse_retry_after

KEY = "sk-ant-api03-SECRETSECRET"
CTX = ErrorContext(
    "anthropic", "claude-opus-5-5", "https://api.anthropic.com/v1", "env:ANTHROPIC_API_KEY", KEY
)


@pytest.mark.parametrize(
    ("status", "body", "kind", "retryable"),
    [
        (401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}, "auth", False),
        (403, {"error": {"message": "forbidden"}}, "auth", False),
        (404, {"type": "error", "error": {"type": "not_found_error", "message": "model: claude-x"}}, "not_found", False),
        (400, {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}, "context_length", False),
        (400, {"error": {"code": "context_length_exceeded", "message": "Your input exceeds the context window"}}, "context_length", False),
        (413, {"type": "error", "error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}}, "context_length", False),
        (429, {"error": {"type": "rate_limit_error", "message": "slow"}}, "rate_limit", True),
        (429, {"error": {"code": "insufficient_quota", "message": "You exceeded your current quota"}}, "rate_limit", False),
        (500, {"error": {"message": "boom"}}, "server", True),
        (502, "Bad gateway", "server", True),
        (503, {}, "server", True),
        (529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "overloaded", True),
        (400, {"error": {"message": "temperature: must be <= 1"}}, "bad_request", False),
        (422, {"detail": "bad"}, "bad_request", False),
        (400, {"error": {"code": "content_policy_violation", "message": "no"}}, "refused", False),
    ],
)  # fmt: skip
def test_classify_http(status: int, body: object, kind: str, retryable: bool) -> None:
    codes, detail = payload_fields(body)
    err = classify(CTX, status=status, codes=codes, detail=detail)
    assert (err.kind, err.retryable, err.status) == (kind, retryable, status)
    assert err.provider == "anthropic"


def test_auth_message_names_the_key_source_and_what_to_do() -> None:
    err = classify(CTX, status=401, codes=set(), detail=f"invalid key {KEY}")
    text = str(err)
    assert "env:ANTHROPIC_API_KEY" in text and "ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN" in text
    assert "providers.jsonc" in text
    assert KEY not in text and KEY not in repr(err.to_dict())


def test_missing_key_message() -> None:
    ctx = ErrorContext("openai", "gpt-6.1-sol", "https://api.openai.com/v1")
    err = classify(ctx, status=401, codes=set(), detail="")
    assert "none was configured" in err.message and "OPENAI_API_KEY" in (err.hint or "")


def test_not_found_names_the_model_and_how_to_choose() -> None:
    err = classify(CTX, status=404, codes=set(), detail="")
    assert "claude-opus-5-5" in err.message
    assert "--model anthropic:<model-id>" in (err.hint or "")


def test_server_says_do_not_retry() -> None:
    err = classify(CTX, status=500, codes=set(), detail="", should_retry=False)
    assert err.kind == "server" and not err.retryable
    assert classify(CTX, status=409, codes=set(), detail="", should_retry=True).retryable


def test_long_details_are_cut() -> None:
    err = classify(CTX, status=400, codes=set(), detail="x" * 5000)
    assert len(err.message) < 700


def test_parse_retry_after() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (parse_retry_after({"retry-after": when}) or 0) <= 31


def test_backoff_grows_is_capped_and_jittered() -> None:
    policy = RetryPolicy(base_delay_s=1, max_delay_s=8, jitter=0.25, rand=lambda: 0.5)
    assert [policy.backoff(n) for n in range(1, 6)] == [1, 2, 4, 8, 8]
    low = RetryPolicy(base_delay_s=1, max_delay_s=8, jitter=0.25, rand=lambda: 0.0)
    high = RetryPolicy(base_delay_s=1, max_delay_s=8, jitter=0.25, rand=lambda: 1.0)
    assert low.backoff(2) == 1.5 and high.backoff(2) == 2.5 and high.backoff(9) == 8
    assert policy.delay(1, retry_after=7.0) == 7.0
