"""The app shell and the built UI's files, and the sign-in link exchange.

`GET /?token=...` with the right token sets the session cookie and redirects to `/`, so the token
leaves the address bar (and the history). Files come from `src/xum/server/static/` (built by
`make build-web`); when it has not been built, `/` says so and how to build it.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from xum.server.auth import tokens_equal
from xum.server.errors import error_response
from xum.server.routes.auth import sign_in
from xum.server.state import get_state

router = APIRouter(include_in_schema=False)

NOT_BUILT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>xum</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem">
<h1>xum server is running</h1>
<p>The web UI has not been built in this checkout, so there is nothing to show here yet.
The API is up: <code>/api/</code> (see <code>docs/api.md</code>).</p>
<p>Build the UI with <code>make build-web</code> (needs Node.js and npm), then reload this page.</p>
</body></html>
"""

NO_CACHE = {"Cache-Control": "no-store"}


def _index(request: Request) -> Response:
    index = get_state(request).config.static_dir / "index.html"
    if index.is_file():
        return FileResponse(index, media_type="text/html; charset=utf-8", headers=NO_CACHE)
    return HTMLResponse(NOT_BUILT, headers=NO_CACHE)


@router.get("/")
async def app_shell(request: Request, token: str | None = None) -> Response:
    state = get_state(request)
    if token is not None:
        if state.token is None:
            return RedirectResponse("/", status_code=303)
        if not tokens_equal(token.strip(), state.token):
            return RedirectResponse("/?signin=failed", status_code=303)
        response = RedirectResponse("/", status_code=303)
        sign_in(state, request, response)
        return response
    return _index(request)


@router.api_route(
    "/api/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
)
async def no_such_route(path: str, request: Request) -> Response:
    return error_response(404, "not_found", f"no route {request.method} /api/{path[:200]}")


@router.get("/{path:path}")
async def static_file(path: str, request: Request) -> Response:
    root = get_state(request).config.static_dir.resolve()
    candidate = (root / path).resolve()
    if root in candidate.parents and candidate.is_file():
        media_type = mimetypes.guess_type(candidate.name)[0] or "application/octet-stream"
        cache = (
            {"Cache-Control": "public, max-age=31536000, immutable"}
            if Path(path).parts[:1] == ("assets",)
            else NO_CACHE
        )
        return FileResponse(candidate, media_type=media_type, headers=cache)
    if "." in Path(path).name:
        return error_response(404, "not_found", f"no file /{path[:200]}")
    return _index(request)  # client-side routes load the app shell
