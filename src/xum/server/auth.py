"""Who may talk to the server: the token, browser sessions, and Origin/Host checks.

Requests authenticate with `Authorization: Bearer <token>` or with the `xum_session` cookie that
signing in sets. The cookie holds a random session id, never the token; the server keeps only a
hash of it (in `$XUM_ROOT/server-sessions.json`, 0600), bound to a fingerprint of the token, so
a new token ends every browser session. Tokens and session ids are compared in constant time and
never logged.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import ipaddress
import os
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any, Literal

import orjson

from xum.core.fsutil import atomic_write_bytes
from xum.core.paths import ensure_root, xum_root

TOKEN_ENV = "XUM_SERVER_AUTH_TOKEN"
ALLOW_HTTP_ORIGIN_ENV = "XUM_SERVER_ALLOW_HTTP_ORIGIN"
COOKIE_NAME = "xum_session"
COOKIE_MAX_AGE_S = 30 * 24 * 3600
SESSIONS_FILE = "server-sessions.json"
MAX_BROWSER_SESSIONS = 200
_SEEN_WRITE_INTERVAL_S = 60.0

TokenSource = Literal["--no-auth", "--auth-token", "XUM_SERVER_AUTH_TOKEN", "generated"]


@dataclass(frozen=True)
class TokenChoice:
    token: str | None  # None: auth disabled
    source: TokenSource


def resolve_token(
    *, no_auth: bool, auth_token: str | None, env: Mapping[str, str] | None = None
) -> TokenChoice:
    """The documented precedence: `--no-auth` > `--auth-token` > `XUM_SERVER_AUTH_TOKEN` >
    a generated token, kept for the next start on the same root (`token_store`)."""
    env = os.environ if env is None else env  # read only: nothing is handed on
    if no_auth:
        return TokenChoice(None, "--no-auth")
    if auth_token is not None and auth_token.strip():
        return TokenChoice(auth_token.strip(), "--auth-token")
    from_env = env.get(TOKEN_ENV, "").strip()
    if from_env:
        return TokenChoice(from_env, "XUM_SERVER_AUTH_TOKEN")
    from xum.server.token_store import stored_token

    return TokenChoice(stored_token(), "generated")


def tokens_equal(given: str | None, expected: str) -> bool:
    if given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode())


def _hash(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def _fingerprint(token: str) -> str:
    return hashlib.sha256(b"xum-browser-sessions\0" + token.encode()).hexdigest()


@dataclass
class BrowserSession:
    public_id: str
    secret_hash: str
    created_at: int
    last_seen_at: int
    user_agent: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.public_id,
            "hash": self.secret_hash,
            "createdAt": self.created_at,
            "lastSeenAt": self.last_seen_at,
            "userAgent": self.user_agent,
        }


class BrowserSessions:
    """Cookie-backed browser sessions, persisted so a restart with the same token keeps them."""

    def __init__(self, token: str, path: Path | None = None) -> None:
        self.path = path or xum_root() / SESSIONS_FILE
        self.fingerprint = _fingerprint(token)
        self._by_hash: dict[str, BrowserSession] = {}
        self._last_write = 0.0
        self._load()

    def _load(self) -> None:
        try:
            data = orjson.loads(self.path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return
        if not isinstance(data, dict) or data.get("tokenFingerprint") != self.fingerprint:
            return  # another token: those sessions are over
        for raw in data.get("sessions", []):
            with contextlib.suppress(KeyError, TypeError, ValueError):
                s = BrowserSession(
                    str(raw["id"]),
                    str(raw["hash"]),
                    int(raw["createdAt"]),
                    int(raw["lastSeenAt"]),
                    str(raw.get("userAgent", ""))[:300],
                )
                self._by_hash[s.secret_hash] = s

    def _save(self) -> None:
        ensure_root()
        payload = {
            "tokenFingerprint": self.fingerprint,
            "sessions": [s.to_json() for s in self._by_hash.values()],
        }
        atomic_write_bytes(self.path, orjson.dumps(payload, option=orjson.OPT_INDENT_2))
        self._last_write = time.monotonic()

    def create(self, user_agent: str) -> tuple[str, BrowserSession]:
        """A new session: returns the cookie value (shown once) and the record."""
        secret = secrets.token_urlsafe(32)
        now = int(time.time() * 1000)
        session = BrowserSession(secrets.token_hex(8), _hash(secret), now, now, user_agent[:300])
        if len(self._by_hash) >= MAX_BROWSER_SESSIONS:
            oldest = min(self._by_hash.values(), key=lambda s: s.last_seen_at)
            del self._by_hash[oldest.secret_hash]
        self._by_hash[session.secret_hash] = session
        self._save()
        return secret, session

    def lookup(self, secret: str | None) -> BrowserSession | None:
        if not secret:
            return None
        wanted = _hash(secret)
        found = None
        for known, session in self._by_hash.items():  # constant time per entry
            if hmac.compare_digest(known, wanted):
                found = session
        if found is not None:
            found.last_seen_at = int(time.time() * 1000)
            if time.monotonic() - self._last_write > _SEEN_WRITE_INTERVAL_S:
                with contextlib.suppress(OSError):
                    self._save()
        return found

    def list(self) -> list[BrowserSession]:
        return sorted(self._by_hash.values(), key=lambda s: s.created_at)

    def revoke(self, public_id: str) -> bool:
        for key, session in list(self._by_hash.items()):
            if session.public_id == public_id:
                del self._by_hash[key]
                self._save()
                return True
        return False

    def revoke_others(self, keep_public_id: str | None) -> int:
        doomed = [k for k, s in self._by_hash.items() if s.public_id != keep_public_id]
        for key in doomed:
            del self._by_hash[key]
        if doomed:
            self._save()
        return len(doomed)


# Request checks ----------------------------------------------------------------------------------

LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]"}


def is_loopback_host(host: str) -> bool:
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def split_host_header(value: str) -> tuple[str, int | None]:
    value = value.strip()
    if value.startswith("["):
        end = value.find("]")
        host, rest = value[: end + 1], value[end + 1 :]
        port = rest[1:] if rest.startswith(":") else ""
    elif value.count(":") == 1:
        host, port = value.split(":")
    else:
        host, port = value, ""
    try:
        return host.lower(), int(port) if port else None
    except ValueError:
        return host.lower(), None


def header(headers: list[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def cookie_value(headers: list[tuple[bytes, bytes]], name: str) -> str | None:
    for key, value in headers:
        if key.lower() != b"cookie":
            continue
        jar: SimpleCookie = SimpleCookie()
        with contextlib.suppress(Exception):
            jar.load(value.decode("latin-1"))
        if name in jar:
            return jar[name].value
    return None


def bearer_token(headers: list[tuple[bytes, bytes]]) -> str | None:
    value = header(headers, b"authorization")
    if value is None:
        return None
    scheme, _, rest = value.strip().partition(" ")
    return rest.strip() if scheme.lower() == "bearer" and rest.strip() else None


def origin_allowed(
    origin: str,
    *,
    host_header: str | None,
    scheme: str,
    forwarded_proto: str | None,
    allow_http_origin: bool,
) -> bool:
    """True when `origin` is the server's own origin as the browser addressed it."""
    if host_header is None:
        return False
    origin = origin.strip().lower().rstrip("/")
    if origin == "null":
        return False
    o_scheme, sep, o_rest = origin.partition("://")
    if not sep:
        return False
    o_host, o_port = split_host_header(o_rest)
    h_host, h_port = split_host_header(host_header)
    default = {"http": 80, "https": 443}
    expected_scheme = scheme
    if forwarded_proto:
        expected_scheme = forwarded_proto.split(",")[0].strip().lower()
    schemes = {expected_scheme}
    if allow_http_origin and expected_scheme == "http":
        schemes.add("https")  # TLS ends at a proxy that rewrote X-Forwarded-Proto to http
    if o_scheme not in schemes or o_host != h_host:
        return False
    o_port_n = o_port if o_port is not None else default.get(o_scheme)
    if h_port is None:
        # The Host header omits the port when it is the scheme's default.
        return o_port_n == default.get(o_scheme) or (
            o_scheme == "https" and allow_http_origin and o_port_n == 443
        )
    return o_port_n == h_port
