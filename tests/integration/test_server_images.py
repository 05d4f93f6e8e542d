"""Images through the server: upload (raw bytes, bounded), send with a message, serve back to
the transcript (only that workspace's blobs, by hash, with the sniffed type and nosniff)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from tests.gitrepo import make_repo
from tests.integration.server_support import (
    AUTH,
    create_workspace,
    idle,
    server_client,
    use_fake_llm,
    wait_for,
)
from tests.support.images import SVG, png
from xum.core.images import MAX_IMAGE_BYTES
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

PICTURE = png(6, 3)


def upload(client: Any, wid: str, data: bytes, name: str = "shot.png") -> Any:
    return client.post(
        f"/api/workspaces/{wid}/images",
        params={"name": name},
        content=data,
        headers={**AUTH, "Content-Type": "application/octet-stream"},
    )


def test_an_uploaded_image_goes_with_the_message_and_is_served_back(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(fakellm.text("A small red picture."))
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        other = create_workspace(client, repo)["id"]
        res = upload(client, wid, PICTURE)
        assert res.status_code == 201, res.text
        ref = res.json()
        assert (ref["media_type"], ref["width"], ref["height"]) == ("image/png", 6, 3)
        sent = client.post(
            f"/api/workspaces/{wid}/messages",
            json={"text": "what is it?", "images": [{"sha256": ref["sha256"], "name": "shot.png"}]},
            headers=AUTH,
        )
        assert sent.status_code == 202, sent.text
        wait_for(lambda: bool(fake_llm.requests) and idle(client, wid))
        blocks = fake_llm.requests[0].json["messages"][0]["content"]
        assert blocks[1]["source"]["data"] == base64.b64encode(PICTURE).decode()

        history = client.get(f"/api/workspaces/{wid}/history", headers=AUTH).json()["events"]
        (said,) = [e for e in history if e["type"] == "user-message"]
        assert said["images"][0]["sha256"] == ref["sha256"]

        served = client.get(f"/api/workspaces/{wid}/images/{ref['sha256']}", headers=AUTH)
        assert served.status_code == 200
        assert served.content == PICTURE
        assert served.headers["content-type"] == "image/png"
        assert served.headers["x-content-type-options"] == "nosniff"
        # Only that workspace's blobs, only by hash.
        assert (
            client.get(f"/api/workspaces/{other}/images/{ref['sha256']}", headers=AUTH).status_code
            == 404
        )
        assert client.get(
            f"/api/workspaces/{wid}/images/..%2f..%2fconfig.json", headers=AUTH
        ).status_code in (404, 422)
        command = client.post(
            f"/api/workspaces/{wid}/messages",
            json={"text": "/model sonnet", "images": [{"sha256": ref["sha256"]}]},
            headers=AUTH,
        )
        assert command.status_code == 422
        assert "chat command" in command.json()["error"]["message"]
        missing = client.post(
            f"/api/workspaces/{other}/messages",
            json={"text": "x", "images": [{"sha256": ref["sha256"]}]},
            headers=AUTH,
        )
        assert missing.status_code == 422


def test_uploads_are_bounded_and_checked(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        svg = upload(client, wid, SVG, "x.svg")
        assert svg.status_code == 422
        assert "not a PNG, JPEG, GIF or WebP" in svg.json()["error"]["message"]
        big = upload(client, wid, png(padding=MAX_IMAGE_BYTES))
        assert big.status_code == 413
        # An upload has its own bound: larger than the server's 1 MiB for other requests.
        screenshot = upload(client, wid, png(padding=3 * 1024 * 1024))
        assert screenshot.status_code == 201, screenshot.text
        # The larger bound is only for uploads: a message body keeps the server's 1 MiB.
        huge = client.post(
            f"/api/workspaces/{wid}/messages",
            content=b'{"text": "' + b"x" * (2 * 1024 * 1024) + b'"}',
            headers={**AUTH, "Content-Type": "application/json"},
        )
        assert huge.status_code == 413
