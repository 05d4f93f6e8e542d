"""The attention inbox: one list, across every workspace of the process, of what waits for a
person (docs/inbox.md).

Two sorts of item. What blocks an agent until someone answers: an approval request (`approval`)
and an `ask_user_question` or plan-mode question (`question`); both are views of the host's
pending maps (`xum.host.pending`), so they are answered through the same `answer` calls every
front-end uses, and leave when the request settles, whoever settled it. And what a person
should look at once: a plan proposed for approval (`plan`), a turn that ended while nobody was
reading (`turn-ended`: completed, failed, interrupted), a goal that stopped at its budget or turn
cap (`goal-stopped`), a session budget spent (`budget-spent`), an agent's `notify` call
(`notify`, docs/notifications.md). Those leave when the workspace is
read past them (`read`), when a new turn starts in it, or when dismissed. And what the process's
governor holds back (`held`: a provider's pause, the sub-agent cap, the fleet budget, a wait for
a request slot that lasts): that leaves when the wait ends (or when dismissed).

The inbox only keeps and announces items; `xum.host.inbox_feed` feeds it from the host's
listener calls. Watchers (`watch`) hear every addition and removal, in order, on the host's loop
and must not raise (a failure is logged). Everything here runs on the host's event loop.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from xum.engine import events as E
from xum.host.pending import Approvals, Questions
from xum.workspaces.safety.approvals import Decision

if TYPE_CHECKING:
    from xum.host.pending import PendingQuestion

log = logging.getLogger("xum.host.inbox")

InboxKind = Literal[
    "approval", "question", "plan", "turn-ended", "goal-stopped", "budget-spent", "notify", "held"
]
Change = Literal["added", "removed"]
# Items that block nothing: they leave when read, dismissed, or a new turn starts.
NOTICE_KINDS: frozenset[str] = frozenset(
    {"plan", "turn-ended", "goal-stopped", "budget-spent", "notify"}
)
PLAN_PREVIEW_CHARS = 20_000  # what an item carries of a plan (the plan route has the rest)
SUMMARY_CHARS = 200
# A wait for a request slot is routine (a busy fleet): an item only once it lasts this long.
HELD_CONCURRENCY_AFTER_S = 5.0
DECISIONS: dict[str, Decision] = {"once": "once", "always": "always", "deny": "deny"}


@dataclass(frozen=True)
class WorkspaceRef:
    """What an item says of its workspace."""

    name: str
    project: str  # the project's path
    parent_id: str | None = None  # a sub-agent's parent workspace


@dataclass(frozen=True)
class InboxItem:
    """Something a workspace waits on a person for, as the inbox lists it."""

    id: str
    kind: InboxKind
    workspace_id: str
    workspace: WorkspaceRef
    summary: str  # what it waits for, one line
    since: float  # when it arrived (seconds since the epoch)
    seq: int  # the workspace's last committed seq then: reading past it clears a notice
    actions: tuple[str, ...]  # what answers it (docs/inbox.md)
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "workspaceId": self.workspace_id,
            "workspaceName": self.workspace.name,
            "project": self.workspace.project,
            "parentId": self.workspace.parent_id,
            "summary": self.summary,
            "since": int(self.since * 1000),
            "seq": self.seq,
            "actions": list(self.actions),
            "detail": dict(self.detail),
        }


Watcher = Callable[[Change, InboxItem], None]


class InboxError(Exception):
    """An answer that does not fit the item (wrong kind, unknown action)."""


class Inbox:
    def __init__(
        self,
        questions: Questions,
        approvals: Approvals,
        *,
        describe: Callable[[str], WorkspaceRef | None] | None = None,
        read_seq: Callable[[str], int] = lambda _ws: 0,
    ) -> None:
        self.questions = questions
        self.approvals = approvals
        self.read_seq = read_seq
        self._describe = describe or _describe_from_registry
        self._refs: dict[str, WorkspaceRef] = {}
        self._items: dict[str, InboxItem] = {}
        # The same items by workspace: a status change (several per step of every running
        # workspace) looks at its own workspace's items, not at every item of the fleet.
        self._by_workspace: dict[str, dict[str, InboxItem]] = {}
        self._watchers: list[Watcher] = []
        self._numbers = itertools.count(1)
        # Per workspace: the last committed seq seen, the turn end waiting for its drive to end,
        # and whether this drive already left a notice (a plan, a goal stop) that says more.
        self._last_seq: dict[str, int] = {}
        self._ended: dict[str, E.TurnEnd] = {}
        self._noted: set[str] = set()
        self._compacting: set[str] = set()  # a compaction turn is no news for a person
        self.held_concurrency_after_s = HELD_CONCURRENCY_AFTER_S
        # Per workspace: the timer that turns a lasting wait for a request slot into an item.
        self._held_timers: dict[str, asyncio.TimerHandle] = {}

    # Reading ----------------------------------------------------------------------------

    def items(self) -> list[InboxItem]:
        """Every waiting item, oldest first."""
        return sorted(self._items.values(), key=lambda i: (i.since, i.id))

    def get(self, item_id: str) -> InboxItem | None:
        return self._items.get(item_id)

    def __len__(self) -> int:
        return len(self._items)

    def watch(self, watcher: Watcher) -> Callable[[], None]:
        """Call `watcher` on every addition and removal; returns the way to stop."""
        self._watchers.append(watcher)
        return lambda: self._watchers.remove(watcher) if watcher in self._watchers else None

    # Answering (through the host's own answer paths) -------------------------------------

    def approve(self, item_id: str, decision: str, reason: str | None = None) -> bool:
        """Answer an approval item: `once`, `always` or `deny` (a reason is told the model).
        False when it no longer waits."""
        item = self._items.get(item_id)
        if item is None:
            return False
        if item.kind != "approval":
            raise InboxError(f"item {item_id} is a {item.kind}, not an approval request")
        chosen = DECISIONS.get(decision)
        if chosen is None:
            raise InboxError(f"decision must be once, always or deny (got {decision!r})")
        if decision == "always" and "always" not in item.actions:
            raise InboxError("this request cannot be allowed always (it has no command prefix)")
        request_id = str(item.detail["request_id"])
        return self.approvals.answer(item.workspace_id, request_id, chosen, reason)

    def answer(self, item_id: str, answers: Mapping[str, str] | None) -> bool:
        """Answer a question item (answers keyed by question text; None dismisses it)."""
        item = self._items.get(item_id)
        if item is None:
            return False
        if item.kind != "question":
            raise InboxError(f"item {item_id} is a {item.kind}, not a question")
        question_id = str(item.detail["questionId"])
        return self.questions.answer(item.workspace_id, question_id, answers)

    def dismiss(self, item_id: str) -> bool:
        """Take a notice off the list (a question is dismissed as a chat message would; an
        approval must be answered)."""
        item = self._items.get(item_id)
        if item is None:
            return False
        if item.kind == "approval":
            raise InboxError("an approval request is answered, not dismissed: approve or deny it")
        if item.kind == "question":
            return self.answer(item_id, None)
        self._remove(item_id)
        return True

    # Feeding ----------------------------------------------------------------------------

    def pending_changed(self, workspace_id: str) -> None:
        """The workspace's pending questions or approvals changed: mirror them."""
        question = self.questions.pending(workspace_id)
        requests = self.approvals.requests_for(workspace_id)
        wanted: dict[str, Callable[[], InboxItem]] = {}
        for request in requests:
            wanted[f"a-{request.request_id}"] = _maker(self, workspace_id, request)
        if question is not None and not question.settled:
            wanted[f"q-{question.id}"] = _maker(self, workspace_id, question)
        for item in self._of(workspace_id):
            if item.kind in ("approval", "question") and item.id not in wanted:
                self._remove(item.id)
        for item_id, make in wanted.items():
            if item_id not in self._items:
                self._add(make())

    def event(self, workspace_id: str, event: E.Event) -> None:
        if isinstance(event, E.Committed) and isinstance(event.seq, int):
            self._last_seq[workspace_id] = max(self._last_seq.get(workspace_id, 0), event.seq)
        if isinstance(event, E.TurnStart) and event.kind == "compaction":
            self._compacting.add(workspace_id)
        elif isinstance(event, E.TurnStart):
            self._ended.pop(workspace_id, None)
            self._noted.discard(workspace_id)
            self._clear_notices(workspace_id)
        elif isinstance(event, E.TurnEnd) and workspace_id in self._compacting:
            self._compacting.discard(workspace_id)
        elif isinstance(event, E.TurnEnd):
            if event.reason == "budget":
                self._noted.add(workspace_id)
                self._notice(workspace_id, "budget-spent", "the session budget is spent", {})
            self._ended[workspace_id] = event
        elif isinstance(event, E.PlanProposed):
            self._noted.add(workspace_id)
            self._clear_notices(workspace_id, "plan")
            content = event.content
            detail = {
                "path": event.path,
                "content": content[:PLAN_PREVIEW_CHARS] if content is not None else None,
                "truncated": content is not None and len(content) > PLAN_PREVIEW_CHARS,
            }
            self._notice(workspace_id, "plan", "a plan is proposed for approval", detail)
        elif isinstance(event, E.GoalIncomplete):
            self._goal_stopped(workspace_id, event)
        elif isinstance(event, E.Notification):
            detail = {"callId": event.call_id, "title": event.title, "message": event.message}
            summary = f"{event.title}: {event.message}" if event.message else event.title
            self._notice(workspace_id, "notify", summary, detail)
        elif isinstance(event, E.GovernorWait):
            self._held(workspace_id, event)
        elif isinstance(event, E.GovernorWaitEnd):
            self._unheld(workspace_id)

    def drive_ended(self, workspace_id: str) -> None:
        """Nothing more runs in the workspace for now: its last turn end becomes an item
        (unless a plan or a goal stop already says more, or it was read already)."""
        end = self._ended.pop(workspace_id, None)
        noted = workspace_id in self._noted
        self._noted.discard(workspace_id)
        if end is None or (noted and end.reason != "error"):
            return
        if end.reason == "budget":
            return  # the budget-spent item says it
        ref = self._ref(workspace_id)
        if ref is not None and ref.parent_id is not None and end.reason != "error":
            return  # a sub-agent's finished turn goes to its parent, not to a person
        self._clear_notices(workspace_id, "turn-ended")
        summary, detail = _turn_end_summary(end)
        self._notice(workspace_id, "turn-ended", summary, detail)

    def read(self, workspace_id: str, seq: int) -> None:
        """The workspace was read up to `seq`: the notices it covers leave."""
        for item in self._of(workspace_id):
            if item.kind in NOTICE_KINDS and item.seq <= seq:
                self._remove(item.id)

    def forget(self, workspace_id: str) -> None:
        """A deleted workspace: its notices leave (its pending requests end with its host)."""
        self._clear_notices(workspace_id)
        self._unheld(workspace_id)
        self._refs.pop(workspace_id, None)
        self._last_seq.pop(workspace_id, None)
        self._ended.pop(workspace_id, None)
        self._noted.discard(workspace_id)
        self._compacting.discard(workspace_id)

    def workspaces_changed(self) -> None:
        self._refs.clear()  # a rename shows in the next item

    # Inside -----------------------------------------------------------------------------

    def _held(self, workspace_id: str, wait: E.GovernorWait) -> None:
        """The governor holds something of the workspace back (docs/governor.md). The
        announcer sends one wait at a time per workspace, a new reason replacing the last, so
        a workspace has at most one `held` item: the latest reason."""
        self._unheld(workspace_id)
        if wait.reason != "concurrency":
            self._add(self._held_item(workspace_id, wait))
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop to time the wait on: a slot wait alone is not worth an item
        self._held_timers[workspace_id] = loop.call_later(
            self.held_concurrency_after_s, self._held_late, workspace_id, wait
        )

    def _held_late(self, workspace_id: str, wait: E.GovernorWait) -> None:
        # A timer of the loop, outside the feed's guard: a failure is logged here.
        self._held_timers.pop(workspace_id, None)
        try:
            self._add(self._held_item(workspace_id, wait))
        except Exception:
            log.exception("the inbox failed to add a held workspace")

    def _held_item(self, workspace_id: str, wait: E.GovernorWait) -> InboxItem:
        detail: dict[str, Any] = {
            "reason": wait.reason,
            "message": wait.message,
            "since": int(wait.since * 1000),
            "retryAt": int(wait.retry_at * 1000) if wait.retry_at is not None else None,
            "provider": wait.provider,
            "model": wait.model,
        }
        summary = wait.message  # says what waits and what would change it
        item_id = f"h-{next(self._numbers)}-{workspace_id}"
        # Since the wait began, not since a lasting slot wait became an item.
        return self._item(
            item_id, "held", workspace_id, summary, ("dismiss",), detail, since=wait.since
        )

    def _unheld(self, workspace_id: str) -> None:
        timer = self._held_timers.pop(workspace_id, None)
        if timer is not None:
            timer.cancel()
        for item in [i for i in self._items.values() if i.workspace_id == workspace_id]:
            if item.kind == "held":
                self._remove(item.id)

    def _goal_stopped(self, workspace_id: str, event: E.GoalIncomplete) -> None:
        if event.reason == "session_budget":
            kind: InboxKind = "budget-spent"
            summary = f"the session budget is spent; goal incomplete: {event.objective}"
        elif event.reason in ("goal_budget", "goal_turns"):
            kind = "goal-stopped"
            limit = "budget" if event.reason == "goal_budget" else "turn cap"
            summary = f"goal stopped at its {limit}: {event.objective}"
        else:
            return  # an error or an interrupt: the turn's end says it
        self._noted.add(workspace_id)
        detail = {
            "goalId": event.goalId,
            "objective": event.objective,
            "reason": event.reason,
            "turns": event.turns,
            "spentCents": event.spentCents,
        }
        self._clear_notices(workspace_id, kind)
        self._notice(workspace_id, kind, summary, detail)

    def _notice(
        self, workspace_id: str, kind: InboxKind, summary: str, detail: Mapping[str, Any]
    ) -> None:
        seq = self._last_seq.get(workspace_id, 0)
        if seq and self.read_seq(workspace_id) >= seq:
            return  # someone was reading as it happened
        actions = ("open", "read") if kind == "plan" else ("read",)
        item_id = f"n-{next(self._numbers)}-{workspace_id}"
        self._add(self._item(item_id, kind, workspace_id, summary, actions, detail))

    def _item(
        self,
        item_id: str,
        kind: InboxKind,
        workspace_id: str,
        summary: str,
        actions: tuple[str, ...],
        detail: Mapping[str, Any],
        since: float | None = None,
    ) -> InboxItem:
        ref = self._ref(workspace_id) or WorkspaceRef(workspace_id, "")
        return InboxItem(
            id=item_id,
            kind=kind,
            workspace_id=workspace_id,
            workspace=ref,
            summary=_one_line(summary),
            since=time.time() if since is None else since,
            seq=self._last_seq.get(workspace_id, 0),
            actions=actions,
            detail=detail,
        )

    def _ref(self, workspace_id: str) -> WorkspaceRef | None:
        ref = self._refs.get(workspace_id)
        if ref is None:
            ref = self._describe(workspace_id)
            if ref is not None:
                self._refs[workspace_id] = ref
        return ref

    def _clear_notices(self, workspace_id: str, kind: str | None = None) -> None:
        for item in self._of(workspace_id):
            if item.kind in NOTICE_KINDS and (kind is None or item.kind == kind):
                self._remove(item.id)

    def _of(self, workspace_id: str) -> list[InboxItem]:
        """The workspace's items (a copy: the caller may remove them as it goes)."""
        return list(self._by_workspace.get(workspace_id, {}).values())

    def _add(self, item: InboxItem) -> None:
        replaced = self._items.get(item.id)
        if replaced is not None:
            self._unindex(replaced)
        self._items[item.id] = item
        self._by_workspace.setdefault(item.workspace_id, {})[item.id] = item
        self._tell("added", item)

    def _remove(self, item_id: str) -> None:
        item = self._items.pop(item_id, None)
        if item is not None:
            self._unindex(item)
            self._tell("removed", item)

    def _unindex(self, item: InboxItem) -> None:
        mine = self._by_workspace.get(item.workspace_id)
        if mine is not None:
            mine.pop(item.id, None)
            if not mine:
                del self._by_workspace[item.workspace_id]

    def _tell(self, change: Change, item: InboxItem) -> None:
        for watcher in list(self._watchers):
            try:
                watcher(change, item)
            except Exception:
                log.exception("an inbox watcher failed")


def _maker(
    inbox: Inbox, workspace_id: str, waiting: E.ApprovalRequest | PendingQuestion
) -> Callable[[], InboxItem]:
    """How to make the item of a pending request, only when it is new."""
    if isinstance(waiting, E.ApprovalRequest):
        request = waiting

        def approval() -> InboxItem:
            actions = ("once", "always", "deny") if request.prefix else ("once", "deny")
            summary = f"approve {request.tool}: {request.subject}"
            detail = request.to_dict()
            detail.pop("type", None)
            return inbox._item(
                f"a-{request.request_id}", "approval", workspace_id, summary, actions, detail
            )

        return approval
    question = waiting

    def ask() -> InboxItem:
        texts = [q.question for q in question.questions]
        summary = "question: " + (texts[0] if texts else "")
        if len(texts) > 1:
            summary += f" (+{len(texts) - 1} more)"
        detail = {"questionId": question.id, "questions": _questions_json(question.questions)}
        return inbox._item(
            f"q-{question.id}", "question", workspace_id, summary, ("answer", "dismiss"), detail
        )

    return ask


def _questions_json(questions: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        {
            "question": q.question,
            "header": q.header,
            "multiSelect": q.multi_select,
            "options": [{"label": o.label, "description": o.description} for o in q.options],
        }
        for q in questions
    ]


def _turn_end_summary(end: E.TurnEnd) -> tuple[str, dict[str, Any]]:
    detail: dict[str, Any] = {"reason": end.reason, "turnId": end.turn_id}
    if end.reason == "error":
        error = end.error or {}
        detail["error"] = dict(error)
        return f"the turn failed: {error.get('message') or 'an error'}", detail
    if end.reason == "interrupted":
        return "the turn was interrupted", detail
    if end.reason in ("max_steps", "doom_loop"):
        return f"the turn stopped ({end.reason.replace('_', ' ')})", detail
    return "the turn is done", detail


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"


def _describe_from_registry(workspace_id: str) -> WorkspaceRef | None:
    from xum.store import registry

    record = registry.get_workspace(workspace_id)
    if record is None:
        return None
    return WorkspaceRef(record.name, record.project_path, record.parent_id)
