"""An MCP server's `timeoutSecs` saved through the settings API keeps the number's form: a whole
number of seconds is written as an integer (`30`, not `30.0`), a fraction as written."""

from __future__ import annotations

from tests.integration.server_support import AUTH, server_client
from xum.core.jsonc import parse_jsonc
from xum.workspaces.mcp.paths import global_path


def test_a_whole_number_timeout_is_written_as_an_integer() -> None:
    with server_client() as client:
        for name, timeout in (("whole", 30), ("whole-float", 45.0), ("fraction", 2.5)):
            body = {"name": name, "command": "some-mcp", "timeoutSecs": timeout}
            res = client.put("/api/settings/mcp/servers", json=body, headers=AUTH)
            assert res.status_code == 200, res.text
    text = global_path().read_text()
    assert "30.0" not in text and "45.0" not in text and "2.5" in text
    servers = parse_jsonc(text, path=str(global_path()))["servers"]
    assert servers["whole"]["timeoutSecs"] == 30 and isinstance(
        servers["whole"]["timeoutSecs"], int
    )
    assert servers["whole-float"]["timeoutSecs"] == 45
    assert servers["fraction"]["timeoutSecs"] == 2.5
