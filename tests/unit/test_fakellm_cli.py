"""`python -m xum.testing.fakellm`: a separate process serving a JSON script."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx


def test_cli_serves_a_script_until_sigterm(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": [{"text": "from the cli"}], "models": ["cli-model"]}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "xum.testing.fakellm", "--script", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        with httpx.Client(base_url=url + "/v1") as client:
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            data = client.post("/chat/completions", json=body).json()
            assert data["choices"][0]["message"]["content"] == "from the cli"
            assert client.get("/models").json()["data"][0]["id"] == "cli-model"
            empty = client.post("/chat/completions", json=body)
            assert empty.status_code == 500
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_rejects_a_bad_script(tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text(json.dumps({"replies": [{"txt": "typo"}]}))
    done = subprocess.run(
        [sys.executable, "-m", "xum.testing.fakellm", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert done.returncode == 2
    assert "unknown key(s) 'txt'" in done.stderr
    assert done.stdout == ""


def test_cli_listens_on_the_port_it_is_given(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port that is free right now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": [{"text": "on my port"}]}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "xum.testing.fakellm", "--script", str(script), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == f"http://127.0.0.1:{port}"
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        reply = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body).json()
        assert reply["choices"][0]["message"]["content"] == "on my port"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
