"""A large, realistic session log, written through the real store API (so it is valid: every
frame checksummed, the manifest published), for `bench_biglog` and the tests of opening one.

The shape follows a long agent session: thousands of turns of a user message and steps of an
assistant reply with one or two tool calls and their results (mostly short, some multi-KB file
reads and command outputs, a few tens of KB), `task` calls whose results are a sub-agent's
report, a `request_header` and a `context_frozen` frame (system prompt + tool specs) at the start
of each context segment, and several compactions, the last one close to the end, so that most
of the history lies before the last boundary.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from xum.store import frame_types as ev
from xum.store.sessionlog import LOG_NAME, SessionLog

_WORDS = [
    "the",
    "function",
    "returns",
    "value",
    "when",
    "module",
    "test",
    "error",
    "file",
    "path",
    "line",
    "import",
    "class",
    "self",
    "config",
    "request",
    "response",
    "session",
    "frame",
    "tool",
    "call",
    "result",
    "output",
    "agent",
    "model",
    "token",
    "cache",
    "def",
    "return",
    "if",
    "else",
    "for",
    "in",
    "while",
    "try",
    "except",
    "raise",
    "assert",
    "None",
    "True",
    "False",
    "await",
    "async",
]


class _Text:
    """Slices of one pre-made block of words: realistic JSON strings at no cost per call."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.block = " ".join(rng.choice(_WORDS) for _ in range(400_000))

    def __call__(self, size: int) -> str:
        start = self.rng.randrange(0, len(self.block) - size - 1)
        return self.block[start : start + size]


def _tool_specs(text: _Text) -> list[dict[str, Any]]:
    names = ("bash", "file_read", "file_edit_replace_string", "file_write", "grep", "glob")
    names += ("todo_write", "todo_read", "web_fetch", "task", "ask_user", "goal_update")
    return [
        {
            "name": name,
            "description": text(900),
            "parameters": {
                "type": "object",
                "properties": {"arg": {"type": "string", "description": text(200)}},
            },
        }
        for name in names
    ]


def _frozen(text: _Text, reason: str) -> tuple[str, dict[str, Any]]:
    return ev.CONTEXT_FROZEN, {
        "reason": reason,
        "agent": "build",
        "mode": "default",
        "model": "anthropic/claude-sonnet",
        "system": text(9_000),
        "tools": _tool_specs(text),
        "tool_identity": "bench",
        "digests": {},
        "system_sha256": "0" * 64,
        "tools_sha256": "1" * 64,
    }


def _output_size(rng: random.Random) -> int:
    roll = rng.random()
    if roll < 0.02:
        return rng.randint(20_000, 60_000)  # a whole file or a long build log
    if roll < 0.25:
        return rng.randint(1_500, 8_000)
    return rng.randint(40, 600)


class _Session:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.text = _Text(self.rng)
        self.turn = 0

    def turn_frames(self) -> list[tuple[str, dict[str, Any]]]:
        rng, text = self.rng, self.text
        self.turn += 1
        turn_id = f"turn-{self.turn}"
        user = {"role": "user", "content": [{"type": "text", "text": text(rng.randint(40, 900))}]}
        out: list[tuple[str, dict[str, Any]]] = [
            (ev.TURN_START, {"turn_id": turn_id, "model": "anthropic/claude-sonnet"}),
            (ev.USER_MESSAGE, {"message": user}),
        ]
        for step in range(rng.randint(1, 8)):
            calls = []
            for n in range(1 if rng.random() < 0.8 else 2):
                name = "task" if rng.random() < 0.03 else rng.choice(("bash", "file_read", "grep"))
                calls.append((f"call-{self.turn}-{step}-{n}", name))
            out.append((ev.STEP_START, {"turn_id": turn_id, "step": step}))
            content: list[dict[str, Any]] = [{"type": "text", "text": text(rng.randint(20, 400))}]
            content += [
                {"type": "tool_call", "id": cid, "name": name, "arguments": text(80)}
                for cid, name in calls
            ]
            out.append(
                (
                    ev.ASSISTANT_MESSAGE,
                    {
                        "message": {"role": "assistant", "content": content},
                        "usage": {"input_tokens": 30_000, "output_tokens": 200},
                        "finish_reason": "tool_calls",
                        "model": "anthropic/claude-sonnet",
                        "cost_usd": 0.0123,
                        "step": step,
                    },
                )
            )
            for cid, name in calls:
                size = rng.randint(2_000, 6_000) if name == "task" else _output_size(rng)
                message = ev.tool_result_message(cid, name, text(size), is_error=False)
                meta = {"workspace_id": f"sub-{self.turn}-{step}"} if name == "task" else {}
                out.append((ev.TOOL_RESULT, {"message": message, "meta": meta, "duration_s": 0.4}))
        reply = {"role": "assistant", "content": [{"type": "text", "text": text(300)}]}
        out.append(
            (
                ev.ASSISTANT_MESSAGE,
                {
                    "message": reply,
                    "usage": {"input_tokens": 30_000, "output_tokens": 100},
                    "finish_reason": "end_turn",
                    "model": "anthropic/claude-sonnet",
                    "cost_usd": 0.011,
                    "step": 9,
                },
            )
        )
        out.append((ev.TURN_END, {"turn_id": turn_id, "reason": "completed"}))
        return out

    def compaction_frames(self, through_seq: int) -> list[tuple[str, dict[str, Any]]]:
        self.turn += 1
        turn_id = f"turn-{self.turn}"
        return [
            (ev.TURN_START, {"turn_id": turn_id, "kind": "compaction"}),
            (
                ev.COMPACTION,
                {
                    "summary": "Summary of the conversation so far: " + self.text(6_000),
                    "through_seq": through_seq,
                    "trigger": "auto",
                    "model": "anthropic/claude-sonnet",
                    "usage": {"input_tokens": 150_000, "output_tokens": 2_000},
                    "cost_usd": 0.5,
                },
            ),
            (ev.TURN_END, {"turn_id": turn_id, "reason": "completed"}),
            _frozen(self.text, "compaction"),
        ]


def write_big_log(
    directory: Path,
    target_bytes: int = 100_000_000,
    compactions: int = 6,
    seed: int = 24,
    batch_turns: int = 40,
) -> Path:
    """Write a session log of about `target_bytes` into `directory` (a session directory);
        compactions are spread evenly, the last one at about 95% of the bytes; turns are appended
    `batch_turns` at a time (one published batch). Returns the log."""
    session = _Session(seed)
    log = SessionLog(directory, purpose="bench")
    path = directory / LOG_NAME
    marks = [target_bytes * (k + 1) // (compactions + 1) for k in range(compactions)]
    marks[-1] = target_bytes * 95 // 100
    with log.writing("bench"):
        log.append_many([ev.unchecked(*_frozen(session.text, "start"))])
        size = 0
        while size < target_bytes:
            batch: list[tuple[str, dict[str, Any]]] = []
            for _ in range(batch_turns):
                batch += session.turn_frames()
            if marks and size >= marks[0]:
                marks.pop(0)
                batch += session.compaction_frames(log.last_seq + len(batch))
            log.append_many([ev.unchecked(kind, data) for kind, data in batch])
            size = path.stat().st_size
    log.close()
    return path
