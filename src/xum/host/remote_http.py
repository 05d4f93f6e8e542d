"""The REST side of a running `xum server`, as `xum.host.remote.RemoteHosts` calls it: one
httpx client per server (made on first use: httpx is not imported by a front-end that does not
attach), the token only in the `Authorization` header, and the server's errors (its code,
message and hint) raised as `RemoteError`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson

from xum.core.errors import XumError
from xum.host.server_target import ServerTarget

if TYPE_CHECKING:
    import httpx

TIMEOUT_S = 30.0


class RemoteError(XumError):
    """The server refused a call (its own code, message and hint) or could not be reached."""

    code = "server_unreachable"

    def __init__(self, message: str, *, code: str, hint: str | None = None, status: int = 0):
        super().__init__(message, hint=hint)
        self.code = code
        self.status = status


class ServerApi:
    def __init__(self, target: ServerTarget) -> None:
        self.target = target
        self._http: httpx.AsyncClient | None = None

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            import httpx

            headers = {"Accept": "application/json"}
            if self.target.token:
                headers["Authorization"] = f"Bearer {self.target.token}"
            self._http = httpx.AsyncClient(
                base_url=self.target.url,
                headers=headers,
                timeout=TIMEOUT_S,
                # A proxy from the environment must not see a loopback server's token.
                trust_env=not self.target.loopback,
            )
        return self._http

    async def call(
        self,
        method: str,
        path: str,
        body: object = None,
        params: Mapping[str, str] | None = None,
        content: bytes | None = None,
    ) -> dict[str, Any]:
        """One API call: `body` as JSON, or `content` as raw bytes (an image upload)."""
        import httpx

        options: dict[str, Any] = {"params": dict(params) if params else None}
        if content is not None:
            options["content"] = content
            options["headers"] = {"Content-Type": "application/octet-stream"}
        else:
            options["json"] = body
        try:
            res = await self._client().request(method, path, **options)
        except httpx.HTTPError as exc:
            raise RemoteError(
                f"the xum server at {self.target.url} did not answer ({type(exc).__name__})",
                code="server_unreachable",
                hint="check that it is still running (`xum server`), then try again",
            ) from None
        try:
            data = orjson.loads(res.content) if res.content else {}
        except orjson.JSONDecodeError:
            data = {}
        if res.status_code >= 400:
            error = data.get("error") if isinstance(data, dict) else None
            if isinstance(error, dict) and isinstance(error.get("message"), str):
                raise RemoteError(
                    error["message"],
                    code=str(error.get("code") or "error"),
                    hint=error.get("hint") or None,
                    status=res.status_code,
                )
            raise RemoteError(
                f"the xum server answered HTTP {res.status_code}",
                code="server_error",
                hint="its log (the terminal it runs in) says why",
                status=res.status_code,
            )
        return data if isinstance(data, dict) else {}
