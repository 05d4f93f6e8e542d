"""Real third-party ACP agents pointed at xum's fake LLM, for tests and benchmarks.

The agents are npm packages pinned in tools/external-agents/package.json and installed there by
`make external-agents` (nothing is fetched when they run). Each `*_definition` function writes
the files one agent needs into a directory of the caller's (a temp dir) and returns an
external-agent definition in the format of config.json's `externalAgents` (docs/external-agents.md):
`command` (the absolute path of the installed program), `args`, `env`, `label`, `models`.

Every definition isolates the agent from the machine: its own HOME and XDG directories under the
given directory, a dummy API key, the model server's loopback URL, and every switch the agent
has for updates, telemetry, sharing and downloads turned off.

    with fakellm.FakeLLM() as llm:
        definition = opencode_definition(llm.base_url(), tmp_path / "opencode")
        # spawn definition["command"] *definition["args"] with definition["env"] added
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections import deque
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, cast

from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.core import ClientSideConnection
from acp.schema import CreateTerminalResponse, EnvVariable, Implementation, InitializeResponse

from xum.testing.acpeditor import EditorCapabilities, TestEditor
from xum.testing.fakellm import RecordedRequest, Reply, reply

if TYPE_CHECKING:
    import asyncio

    from acp.interfaces import Client

# The checkout's tools/external-agents (src/xum/testing/ -> the repository root). An installed
# xum has no such folder: XUM_EXTERNAL_AGENTS_DIR names another installation.
_CHECKOUT_DIR = Path(__file__).resolve().parents[3] / "tools" / "external-agents"

OPENCODE_VERSION = "1.18.33"  # as pinned in tools/external-agents/package.json
OPENCODE_MODEL = "fake-model"
CLAUDE_CODE_MODEL = "claude-sonnet-4-5"
CODEX_MODEL = "gpt-5.4"
GEMINI_MODEL = "gemini-2.5-pro"
DUMMY_KEY = "sk-fake-not-a-real-key"
# One ACP message is one line; an agent's tool list or a tool's output passes the asyncio
# default of 64 KiB, which would end the connection.
LINE_LIMIT = 16 * 1024 * 1024


class AgentDefinition(TypedDict):
    """One entry of config.json's `externalAgents` (the keys these helpers fill)."""

    command: str
    args: list[str]
    env: dict[str, str]
    label: str
    models: list[str]


def agents_dir() -> Path:
    """Where the pinned agents are installed (their package.json and node_modules)."""
    override = os.environ.get("XUM_EXTERNAL_AGENTS_DIR")
    return Path(override) if override else _CHECKOUT_DIR


def installed_program(name: str) -> Path:
    """The absolute path of an installed agent's program (`opencode`, `claude-code-acp`)."""
    return agents_dir() / "node_modules" / ".bin" / name


PROGRAMS = ("opencode", "claude-code-acp", "codex-acp", "gemini")


def missing_reason() -> str | None:
    """Why the real agents cannot run here (a sentence to skip with), or None when they can."""
    for name in PROGRAMS:
        program = installed_program(name)
        if not os.access(program, os.X_OK):
            return (
                f"the external agents are not installed ({program} is missing): "
                "run `make external-agents`"
            )
    return None


def server_root(base_url: str) -> str:
    """`http://127.0.0.1:PORT` from the fake's `http://127.0.0.1:PORT/v1` (either is accepted)."""
    url = base_url.rstrip("/")
    return url.removesuffix("/v1")


def isolated_home(workdir: Path) -> dict[str, str]:
    """HOME and the XDG directories under `workdir`, created: the agent's state, caches and
    logs stay there and nothing of the user's own set-up is read."""
    env = {"HOME": str(workdir / "home")}
    for var, sub in (
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_STATE_HOME", "state"),
    ):
        env[var] = str(workdir / "home" / sub)
    for path in env.values():
        Path(path).mkdir(parents=True, exist_ok=True)
    return env


def opencode_config(base_url: str, model: str = OPENCODE_MODEL) -> dict[str, object]:
    """opencode's config file: one OpenAI-compatible provider (`fake`) at the model server,
    its model as both the model and the small model (titles, summaries), no updates, no
    sharing, and shell commands and edits asking for permission (so a client sees requests)."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake LLM",
                "options": {"baseURL": server_root(base_url) + "/v1", "apiKey": DUMMY_KEY},
                "models": {model: {"name": model}},
            }
        },
        "model": f"fake/{model}",
        "small_model": f"fake/{model}",
        "autoupdate": False,
        "share": "disabled",
        "permission": {"bash": "ask", "edit": "ask"},
    }


def _seed_opencode_plugin_dir(config_dir: Path) -> None:
    """At start opencode runs `npm install @opencode-ai/plugin` (from registry.npmjs.org) in
    its global config directory, for the user's own plugins, unless that directory already has
    a node_modules folder and a package-lock.json listing the package. No test plugin needs it:
    a lock that lists it, over an empty node_modules, keeps opencode off the network."""
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "node_modules").mkdir(exist_ok=True)
    deps = {"@opencode-ai/plugin": OPENCODE_VERSION}
    (config_dir / "package.json").write_text(json.dumps({"dependencies": deps}) + "\n")
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": deps}}}
    (config_dir / "package-lock.json").write_text(json.dumps(lock) + "\n")


def opencode_definition(
    base_url: str, workdir: Path, model: str = OPENCODE_MODEL
) -> AgentDefinition:
    """`opencode acp` against the model server at `base_url`; writes its config into
    `workdir` (created) and returns the definition."""
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "opencode.json"
    config.write_text(json.dumps(opencode_config(base_url, model), indent=2) + "\n")
    env = isolated_home(workdir)
    _seed_opencode_plugin_dir(Path(env["XDG_CONFIG_HOME"]) / "opencode")
    env.update(
        {
            "OPENCODE_CONFIG": str(config),
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        }
    )
    return {
        "command": str(installed_program("opencode")),
        "args": ["acp"],
        "env": env,
        "label": "opencode",
        "models": [f"fake/{model}"],
    }


def claude_code_definition(
    base_url: str, workdir: Path, model: str = CLAUDE_CODE_MODEL
) -> AgentDefinition:
    """Claude Code through `claude-code-acp` against the model server at `base_url` (it speaks
    Anthropic Messages); `workdir` (created) holds its HOME."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = isolated_home(workdir)
    env.update(
        {
            "ANTHROPIC_BASE_URL": server_root(base_url),
            "ANTHROPIC_API_KEY": DUMMY_KEY,
            "ANTHROPIC_MODEL": model,
            "ANTHROPIC_SMALL_FAST_MODEL": model,
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            # Without it Claude Code asks api.anthropic.com at start whether the account has
            # "fast mode" (a GET to /api/claude_code_penguin_mode), whatever the base URL.
            "CLAUDE_CODE_DISABLE_FAST_MODE": "1",
            # As root with IS_SANDBOX set (some containers set it), claude-code-acp 0.16.2 offers
            # "bypass permissions" and the Claude Code it starts refuses to run as root with it:
            # every session/new fails. Empty, the adapter takes it as unset.
            "IS_SANDBOX": "",
        }
    )
    return {
        "command": str(installed_program("claude-code-acp")),
        "args": [],
        "env": env,
        "label": "Claude Code",
        "models": [model],
    }


def codex_config(base_url: str, model: str = CODEX_MODEL) -> str:
    """Codex's `config.toml`: one model provider (`fake`) speaking OpenAI Responses at the model
    server, its key read from `FAKE_API_KEY`; no update check, no analytics or feedback. xum
    runs the agent inside its own sandbox, where Codex's bubblewrap cannot start (a user
    namespace inside xum's: "setting up uid map: Operation not permitted"), so Codex runs its
    commands without a sandbox of its own and xum's is the boundary."""
    root = server_root(base_url)
    return (
        f"model = {json.dumps(model)}\n"
        'model_provider = "fake"\n'
        'approval_policy = "on-request"\n'
        'sandbox_mode = "danger-full-access"\n'
        "check_for_update_on_startup = false\n"
        "\n"
        "[model_providers.fake]\n"
        'name = "Fake LLM"\n'
        f"base_url = {json.dumps(root + '/v1')}\n"
        'wire_api = "responses"\n'
        'env_key = "FAKE_API_KEY"\n'
        "\n"
        "[analytics]\n"
        "enabled = false\n"
        "\n"
        "[feedback]\n"
        "enabled = false\n"
    )


def codex_definition(base_url: str, workdir: Path, model: str = CODEX_MODEL) -> AgentDefinition:
    """Codex through `codex-acp` against the model server at `base_url` (OpenAI Responses);
    `workdir` (created) holds its HOME and its CODEX_HOME with `config.toml`."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = isolated_home(workdir)
    codex_home = workdir / "codex"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(codex_config(base_url, model))
    # Codex's bubblewrap sandbox refuses to start when CODEX_HOME lies under the temporary
    # directory, and a test's workdir is under /tmp: its TMPDIR is a folder of its own beside.
    tmp = workdir / "tmp"
    tmp.mkdir(exist_ok=True)
    env.update({"CODEX_HOME": str(codex_home), "FAKE_API_KEY": DUMMY_KEY, "TMPDIR": str(tmp)})
    return {
        "command": str(installed_program("codex-acp")),
        "args": [],
        "env": env,
        "label": "Codex",
        "models": [model],
    }


def gemini_settings(model: str = GEMINI_MODEL) -> dict[str, object]:
    """Gemini CLI's `~/.gemini/settings.json` (the nested format of 0.61): no usage statistics,
    telemetry or update checks, the API key as the way in, and the model to use."""
    return {
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "model": {"name": model},
    }


def gemini_definition(base_url: str, workdir: Path, model: str = GEMINI_MODEL) -> AgentDefinition:
    """Gemini CLI (`gemini --acp`) against the model server at `base_url` (it speaks the Gemini
    API); `workdir` (created) holds its HOME with `.gemini/settings.json`."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = isolated_home(workdir)
    settings = Path(env["HOME"]) / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(gemini_settings(model), indent=2) + "\n")
    env.update(
        {
            "GOOGLE_GEMINI_BASE_URL": server_root(base_url),
            "GEMINI_API_KEY": DUMMY_KEY,
            "GEMINI_MODEL": model,
            # Without it the CLI starts itself again in a child process (for a larger heap).
            "GEMINI_CLI_NO_RELAUNCH": "1",
        }
    )
    return {
        "command": str(installed_program("gemini")),
        "args": ["--acp"],
        "env": env,
        "label": "Gemini CLI",
        "models": [model],
    }


def is_turn_request(request: RecordedRequest) -> bool:
    """Whether a model request is the agent's own turn (it offers the agent's tools), as
    opposed to a side request: opencode titles a session, Claude Code asks small questions of
    its own, both without tools and at moments a script cannot foresee."""
    body = request.json
    return isinstance(body, dict) and bool(body.get("tools"))


class AgentModel:
    """A fake LLM responder for a real agent (`llm.set_responder(AgentModel(...))`): the
    agent's turn requests take the scripted replies in order, its side requests all get
    `side` (a short plain answer). With the queue empty a turn request gets None, which falls
    through to the fake's default reply or its "no reply left" error."""

    def __init__(self, *replies: Reply, side: Reply | None = None) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Reply] = deque(replies)
        self.side = side if side is not None else reply("Scripted side answer")
        self.turn_requests: list[RecordedRequest] = []

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    @property
    def replies_left(self) -> int:
        with self._lock:
            return len(self._queue)

    def __call__(self, request: RecordedRequest) -> Reply | None:
        if not is_turn_request(request):
            return self.side
        with self._lock:
            self.turn_requests.append(request)
            return self._queue.popleft() if self._queue else None


class AgentClient(TestEditor):
    """acpeditor's TestEditor as the client of a real agent. The one difference: Claude Code
    sends `terminal/create` with a whole shell command line in `command` and no `args` (as
    editors run it: through a shell), so a command without arguments runs under `sh -c`."""

    __test__ = False

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: object,
    ) -> CreateTerminalResponse:
        if not args:
            command, args = "/bin/sh", ["-c", command]
        return await super().create_terminal(
            session_id, command, args, env, cwd, output_byte_limit, **kwargs
        )


@contextlib.asynccontextmanager
async def spawn(
    definition: AgentDefinition,
    client: TestEditor,
    cwd: Path,
    *,
    stderr: Path,
    capabilities: EditorCapabilities | None = None,
) -> AsyncIterator[tuple[ClientSideConnection, asyncio.subprocess.Process, InitializeResponse]]:
    """Start the agent of `definition` in `cwd` with `client` answering its requests (the
    minimal client: the SDK's connection and acpeditor's TestEditor), initialize it, and yield
    (connection, process, the initialize response). The agent's environment is the SDK's short
    list (PATH, HOME, USER, SHELL, TERM, LOGNAME) with the definition's `env` over it: nothing
    else of this process's environment (keys included) reaches it. Its stderr goes to the file
    `stderr`. Leaving closes its stdin and, for agents that stay (Claude Code), ends it."""
    caps = (capabilities or EditorCapabilities(read=True, write=True, terminal=True)).to_acp()
    with open(stderr, "ab") as err:
        spawned = spawn_agent_process(
            cast("Client", client),
            definition["command"],
            *definition["args"],
            env=definition["env"],
            cwd=cwd,
            transport_kwargs={"stderr": err, "limit": LINE_LIMIT},
        )
        async with spawned as (conn, process):
            init = await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=caps,
                client_info=Implementation(name="xum-direct-client", version="1"),
            )
            yield conn, process, init


def process_tree_rss(pid: int) -> int:
    """The resident memory, in bytes, of `pid` and every process below it (an agent's node
    or bun process and what it started); 0 for a process that is gone."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            status = (entry / "status").read_text()
        except OSError:  # the process ended between listing and reading
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                rss[int(entry.name)] = int(line.split()[1]) * 1024
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        total += rss.get(current, 0)
        todo.extend(children.get(current, []))
    return total
