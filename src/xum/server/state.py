"""The server's configuration and the live objects its routes share."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from starlette.requests import HTTPConnection

from xum.server.auth import BrowserSessions, is_loopback_host
from xum.server.hosting import server_hosts
from xum.server.hub import Hub
from xum.server.outbox import DEFAULT_CAPACITY
from xum.server.readmarks import ReadMarks

STATIC_DIR = Path(__file__).resolve().parent / "static"


@dataclass
class ServerConfig:
    host: str = "localhost"
    port: int = 3000
    token: str | None = None  # None: --no-auth
    allow_http_origin: bool = False
    ssh_host: str | None = None
    static_dir: Path = STATIC_DIR
    outbox_capacity: int = DEFAULT_CAPACITY
    idle_close_s: float = 600.0
    idle_check_s: float = 3600.0  # idle compaction: how often to look for idle workspaces
    maintenance_interval_s: float = 1.0
    add_projects: list[str] = field(default_factory=list)

    @property
    def loopback_only(self) -> bool:
        return is_loopback_host(self.host)


class ServerState:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.token = config.token
        self.browser_sessions = BrowserSessions(config.token) if config.token else None
        self.hub = Hub(config.outbox_capacity)
        self.read_marks = ReadMarks()
        self.hub.read_seq = self.read_marks.get
        self.hosts = server_hosts(
            self.hub,
            idle_close_s=config.idle_close_s,
            idle_check_s=config.idle_check_s,
            read_seq=self.read_marks.get,
        )
        self.started_pid = os.getpid()


def get_state(conn: HTTPConnection) -> ServerState:
    state = conn.app.state.xum
    assert isinstance(state, ServerState)
    return state
