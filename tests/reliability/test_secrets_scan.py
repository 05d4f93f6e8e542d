"""Secrets never leak: a session that uses a project secret and a provider key, then a search of
every artifact for their values.

The server runs in-process with the fake LLM; the provider key is in providers.jsonc, the
project secret is set over the API. The project is trusted and its hooks print the secret
(`tool_pre` on stderr while it runs, `tool_post` in its output, then fails so its output goes to
the hook log); the agent's command prints it, tries to read providers.jsonc and prints the
provider-key variable; a background command prints it too. Afterwards every file under
`$XUM_ROOT` (session logs, partials, manifests, hook and init logs, spill files, scratch) except
the two files that hold the values on purpose, every WebSocket message, every REST answer the UI
reads, the server's log records and the bodies of the requests the model received are searched
for both values: zero hits.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.gitrepo import make_repo
from tests.integration.server_support import (
    AUTH,
    MODEL,
    WS_URL,
    create_workspace,
    is_event,
    receive_until,
    server_client,
)
from xum.core.paths import xum_root
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(120)

PROVIDER_KEY = "sk-ant-PROVIDERKEY-7f3a9c1e5b"
PROJECT_SECRET = "proj-SECRETVALUE-4d8e2a6f0b"
VALUES = (PROVIDER_KEY, PROJECT_SECRET)
# The two files that hold the values on purpose (mode 0600, hidden from commands).
HOLDERS = ("providers.jsonc", "secrets.json")


def hook(repo: Path, name: str, body: str) -> None:
    path = repo / ".xum" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(0o755)


def hits(where: str, text: str) -> list[str]:
    return [f"{where}: {value[:12]}..." for value in VALUES if value in text]


def test_no_artifact_holds_a_secret(
    fake_llm: FakeLLM, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    root = xum_root()
    root.mkdir(parents=True, exist_ok=True)
    (root / "providers.jsonc").write_text(
        orjson.dumps({"anthropic": {"apiKey": PROVIDER_KEY, "baseUrl": fake_llm.url}}).decode()
    )
    os.chmod(root / "providers.jsonc", 0o600)
    repo = make_repo(tmp_path / "repo")
    hook(repo, "tool_pre", 'echo "pre sees $API_TOKEN" >&2\nexit 0\n')
    hook(repo, "tool_post", 'echo "post sees $API_TOKEN"\nexit 3\n')
    script = (
        'echo "token=$API_TOKEN"; printf %s "$API_TOKEN" | base64 >/dev/null; '
        f'cat {root}/providers.jsonc; echo "key=${{ANTHROPIC_API_KEY:-none}}"; seq 1 20000'
    )
    fake_llm.script(
        fakellm.reply(
            fakellm.ToolCall("bash", {"script": script, "display_name": "uses the secret"}),
            fakellm.ToolCall(
                "bash",
                {
                    "script": 'echo "bg=$API_TOKEN"',
                    "display_name": "background",
                    "run_in_background": True,
                },
            ),
        ),
        fakellm.text("Used it."),
    )
    found: list[str] = []
    with server_client() as client:
        client.post("/api/projects", json={"path": str(repo)}, headers=AUTH)
        assert client.post(
            "/api/projects/trust", json={"path": str(repo), "trusted": True}, headers=AUTH
        ).is_success
        put = client.put(
            "/api/projects/secrets",
            json={"path": str(repo), "name": "API_TOKEN", "value": PROJECT_SECRET},
            headers=AUTH,
        )
        assert put.is_success, put.text
        workspace = create_workspace(client, repo, model=MODEL)
        wid = workspace["id"]
        messages: list[dict[str, Any]] = []
        with client.websocket_connect(WS_URL, headers=AUTH) as ws:
            ws.receive_json()
            ws.send_json({"type": "subscribe", "workspaceId": wid, "afterSeq": 0})
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "use it"}, headers=AUTH)
            messages = receive_until(ws, is_event("turn-end"))
        results = [m["event"] for m in messages if is_event("tool-result")(m)]
        assert "token=[secret:API_TOKEN]" in results[0]["output"]  # it ran, masked
        assert "key=none" in results[0]["output"]  # xum's own key is not in the environment
        found += hits("websocket", orjson.dumps(messages).decode())
        for path in (
            "/api/workspaces",
            f"/api/workspaces/{wid}/history",
            "/api/settings/providers",
            "/api/settings/safety",
            f"/api/projects/secrets?path={repo}",
            f"/api/workspaces/{wid}/approvals",
            "/api/server/info",
        ):
            answer = client.get(path, headers=AUTH)
            assert answer.status_code == 200, (path, answer.text)
            found += hits(f"GET {path}", answer.text)
    for request in fake_llm.requests:  # the model sees masked tool output only
        found += [h for h in hits("model request", request.body.decode("utf-8", "replace"))
                  if PROJECT_SECRET[:12] in h]  # fmt: skip
    found += hits("server log", caplog.text)
    scanned = 0
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.name not in HOLDERS:
            scanned += 1
            found += hits(str(path.relative_to(root)), path.read_bytes().decode("utf-8", "replace"))
    assert scanned > 5, "nothing was written?"
    assert (root / "logs").exists()  # the failing tool_post left its (masked) log
    assert found == []
