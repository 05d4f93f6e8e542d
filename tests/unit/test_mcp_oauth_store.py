"""The MCP OAuth token store: 0600, refused when others can read it, an expired token handed
to the SDK so that it refreshes, a registration for another redirect URI not reused, and the
tokens registered with the own-secrets masker (by a name that is no part of them)."""

from __future__ import annotations

import asyncio
import stat

import pytest
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl

from xum.core import ownsecrets
from xum.core.errors import ConfigError
from xum.workspaces.mcp.oauth import FileTokenStorage, has_tokens, sign_out, store_path

URL = "http://127.0.0.1:9/mcp"
REDIRECT = "http://127.0.0.1:8080/api/mcp/oauth/callback"


def test_tokens_round_trip_masked_and_private() -> None:
    storage = FileTokenStorage(URL, REDIRECT)
    token = OAuthToken(
        access_token="acc-0123456789", refresh_token="ref-9876543210", expires_in=600
    )
    asyncio.run(storage.set_tokens(token))
    assert stat.S_IMODE(store_path().stat().st_mode) == 0o600
    assert has_tokens(URL)
    loaded = asyncio.run(storage.get_tokens())
    assert loaded is not None and loaded.access_token == "acc-0123456789"
    assert loaded.expires_in is not None and 500 < loaded.expires_in <= 600
    known = {v: k for k, v in ownsecrets.known_values({}).items()}
    for value in ("acc-0123456789", "ref-9876543210"):
        name = known[value]
        assert name.startswith("mcp-oauth-") and value[-4:] not in name
    sign_out(URL)
    assert not has_tokens(URL) and asyncio.run(storage.get_tokens()) is None


def test_an_expired_token_is_handed_over_for_refresh() -> None:
    storage = FileTokenStorage(URL, REDIRECT)
    asyncio.run(storage.set_tokens(OAuthToken(access_token="a", refresh_token="r", expires_in=1)))
    loaded = asyncio.run(storage.get_tokens())  # within the margin: refresh first
    assert loaded is not None and loaded.access_token == "" and loaded.refresh_token == "r"


def test_a_registration_for_another_address_is_not_reused() -> None:
    info = OAuthClientInformationFull(client_id="c1", redirect_uris=[AnyUrl(REDIRECT)])
    asyncio.run(FileTokenStorage(URL, REDIRECT).set_client_info(info))
    assert asyncio.run(FileTokenStorage(URL, REDIRECT).get_client_info()) is not None
    other = FileTokenStorage(URL, "http://127.0.0.1:9999/api/mcp/oauth/callback")
    assert asyncio.run(other.get_client_info()) is None


def test_a_store_others_can_read_is_refused() -> None:
    asyncio.run(FileTokenStorage(URL, REDIRECT).set_tokens(OAuthToken(access_token="a")))
    store_path().chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        asyncio.run(FileTokenStorage(URL, REDIRECT).get_tokens())
