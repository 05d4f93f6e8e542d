"""What a compaction says: the instructions the `compact` agent gets, the lead-ins the next
context starts with, the history written out as a transcript, and fitting an overlong history
into one summarization request.

The engine runs the pass (`xum.engine.compaction`); this module only builds text, so the
wording lives in one place and tests can read it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from xum.context.workspace import LiveContext, builtin_agents
from xum.core.images import ImagePart
from xum.core.messages import Message, text_message

COMPACT_AGENT = "compact"

DEFAULT_WORDS = 2000
WORDS_PER_TOKEN = 0.75  # the usual ratio for English prose; `-t` is a token count

COMPACTION_LEAD = (
    "This conversation was compacted to save context. What follows is a summary of everything "
    "before this point, written for you to continue the work from:\n\n"
)
REPLY_LEAD = (
    "The conversation restarts from this earlier reply of yours, which now stands for "
    "everything said before it:\n\n"
)
PLAN_LEAD = "The conversation restarts from this plan{where}, which now stands for everything said before it:\n\n"
TRIMMED_NOTE = (
    "[The start of this conversation is left out here: all of it did not fit in one request. "
    "Summarize what follows.]"
)


def compact_system(live: LiveContext) -> str:
    """The system prompt of a summarization pass: the `compact` agent's instructions alone (the
    built-in ones, a project's or the user's `compact.md` on top of them). A context without
    agent definitions (a fixed prompt) gets the built-in agent."""
    section = live.sections.get("agent")
    if live.agent.id == COMPACT_AGENT and section:
        return section
    from xum.context.agents import SCOPE_BUILTIN, merge_chain
    from xum.context.system_prompt import agent_block

    builtin = merge_chain([builtin_agents().by_scope[SCOPE_BUILTIN][COMPACT_AGENT]])
    return agent_block(builtin, subagent=False, trusted=True)


def target_words(max_tokens: int | None) -> int:
    """The word target of the summary: about 2000 words, or what `-t <tokens>` leaves room for."""
    if max_tokens is None:
        return DEFAULT_WORDS
    return max(50, int(max_tokens * WORDS_PER_TOKEN) // 10 * 10)


def instructions(words: int) -> str:
    """The user message that ends a summarization request."""
    return (
        "Write a summary of the conversation above for an assistant who will take over the "
        f"work with nothing but this summary to go on. Aim for about {words} words.\n\n"
        "Cover:\n"
        "- what the user wants overall, and the task in progress now\n"
        "- the decisions taken, and why\n"
        "- where the work stands: what is done and what is half done\n"
        "- the technical facts needed to go on: file paths, names of functions, settings and "
        "commands\n"
        "- the errors met and how they were resolved\n"
        "- anything unresolved or blocking\n\n"
        "Leave out suggestions for next steps, pleasantries and repetition. Write densely and "
        "factually: every sentence should carry context the next assistant needs."
    )


def _image_note(part: ImagePart) -> str:
    return f"[image {part.get('name') or part['sha256'][:12]} ({part['media_type']})]"


def as_transcript(messages: Sequence[Message]) -> list[Message]:
    """`messages` as plain user and assistant text, for a summarization request that declares
    no tools: tool calls and their results are written out as text (a provider refuses tool
    blocks without the tools declared, and declaring them would cost the window their schemas),
    reasoning is left out (it is the model's own, often signed for one provider only).
    Consecutive messages of one role are merged, so the roles alternate."""
    out: list[Message] = []
    for message in messages:
        role = message["role"]
        pieces: list[str] = []
        for part in message["content"]:
            if part["type"] == "text":
                if part["text"]:
                    pieces.append(part["text"])
            elif part["type"] == "tool_call":
                pieces.append(f"[tool call {part['name']} ({part['id']}): {part['arguments']}]")
            elif part["type"] == "web_search":
                pieces.append(f"[web search: {part['query']}]")
            elif part["type"] == "tool_result":
                failed = " (failed)" if part.get("is_error") else ""
                pieces.append(
                    f"[tool result of {part['name']} ({part['call_id']}){failed}:\n"
                    f"{part['output']}\n]"
                )
                pieces.extend(_image_note(i) for i in part.get("images") or [])
            elif part["type"] == "image":
                # The summary is text: it can say an image was there, not what it showed.
                pieces.append(_image_note(part))
        if not pieces:
            continue  # reasoning alone, or an empty message
        speaker: Literal["user", "assistant"] = "assistant" if role == "assistant" else "user"
        text = "\n\n".join(pieces)
        if out and out[-1]["role"] == speaker:
            last = out[-1]["content"][0]
            if last["type"] == "text":
                last["text"] += "\n\n" + text
                continue
        out.append(text_message(speaker, text))
    return out


def plan_lead(path: str | None) -> str:
    return PLAN_LEAD.format(where=f" (from {path})" if path else "")


def fit_history(
    messages: Sequence[Message], budget: int, measure: Callable[[object], int]
) -> list[Message]:
    """`messages`, or its newest part that fits in `budget` tokens (as `measure` counts them)
    behind a note saying the start is left out. The cut never separates a tool call from its
    results: the kept part starts at a user or an assistant message (a long tool loop has a
    single user message, so the cut must be possible inside it). Returns [] when not even the
    last message fits."""
    total = sum(measure(m) for m in messages)
    if total <= budget:
        return list(messages)
    note = text_message("user", TRIMMED_NOTE)
    budget -= measure(note)
    start = 0
    while start < len(messages) and total > budget:
        total -= measure(messages[start])
        start += 1
        while start < len(messages) and messages[start]["role"] == "tool":
            total -= measure(messages[start])
            start += 1
    if start >= len(messages):
        return []
    return [note, *messages[start:]]
