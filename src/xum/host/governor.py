"""The governor: one per process, shared by every session it hosts, sub-agents included.

Three things many agents must share (docs/governor.md):

* Requests to a provider: at most `maxConcurrent` in flight per provider (and per model where
  one is configured). Waiting requests are granted a slot workspace by workspace in turn
  (`FairLane`), so one busy workspace with many sub-agents cannot starve the others.
* Backoff: when a provider answers 429 or "overloaded" with a `Retry-After`, every session's
  requests to it wait until then, instead of each session finding out with its own 429.
  The answer also teaches the provider's real limit: its cap drops to the requests still in
  flight (those it is serving), and climbs back by one after each `LEARN_QUIET_S` without a
  429, up to the configured cap. So an account limit below the configured cap costs a few
  429s once, not a 429 storm on every pause's end.
* Sub-agents: at most `maxConcurrentSubagents` run at once in the process (beside the per-parent
  cap of `tasks.maxRunningChildren`).
* The fleet budget: USD per UTC day, over all projects and per project, from what the sessions
  report they spent (`xum.host.fleet_spend`). Once spent, a new turn is held, with a
  `governor-wait` event, until the budget is raised or the day ends; a running turn goes on.

Each workspace host gets a `WorkspaceGate`: the governor seen from that workspace, which says
in the workspace's own event stream why something waits (`governor-wait`, then
`governor-wait-end`). The llm layer reaches it through `xum.llm.gate.request_gate`; the
sub-agent manager gets it from the assembly.

The caps are read when the governor is made (the process starts); the budget is read from
config.json each time a turn is checked, so raising it lets held turns go.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from xum.core.errors import XumError
from xum.engine import events as E
from xum.host.fleet_spend import SpendBook, seconds_to_midnight
from xum.host.governor_config import GovernorSettings, parse_settings

log = logging.getLogger("xum.host")
Notify = Callable[[E.Event], None]
MAX_PAUSE_S = 60.0  # a longer Retry-After (a daily quota) fails the turn in the client instead
BUDGET_RECHECK_S = 30.0  # how often a held turn looks at the budget again (a raised limit)
LEARN_QUIET_S = 30.0  # a lowered cap is raised by one after this long without a 429
SPEND_GATHER_S = 0.5  # costs noted this close together go into the day's file in one write


class HeldTurnStopped(XumError):
    """A turn held for the fleet budget was stopped before it began: nothing ran."""

    code = "held_turn_stopped"


class FairLane:
    """A counting semaphore whose waiters are served one workspace at a time, in rotation."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}
        self._order: deque[str] = deque()  # workspaces with waiters, next to serve first

    def set_limit(self, limit: int) -> None:
        self.limit = limit
        self._grant()  # a raised limit lets waiters go at once

    def busy(self) -> bool:
        """A new request would have to wait."""
        return self.active >= self.limit or bool(self._order)

    async def take(self, who: str) -> None:
        if not self.busy():
            self.active += 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue = self._waiting.setdefault(who, deque())
        queue.append(future)
        if len(queue) == 1:
            self._order.append(who)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # granted just as it was cancelled: pass the slot on
            else:
                self._forget(who, future)
            raise

    def release(self) -> None:
        self.active -= 1
        self._grant()

    def _grant(self) -> None:
        while self.active < self.limit and self._order:
            who = self._order.popleft()
            queue = self._waiting[who]
            future = queue.popleft()
            if queue:
                self._order.append(who)  # its next request waits for the others' turn
            else:
                del self._waiting[who]
            if not future.done():
                self.active += 1
                future.set_result(None)

    def _forget(self, who: str, future: asyncio.Future[None]) -> None:
        queue = self._waiting.get(who)
        if queue is None:
            return
        with contextlib.suppress(ValueError):
            queue.remove(future)
        if not queue:
            del self._waiting[who]
            with contextlib.suppress(ValueError):
                self._order.remove(who)


class Permit:
    """Slots held in one or more lanes; `release` gives them back once."""

    def __init__(self, lanes: list[FairLane]) -> None:
        self._lanes = lanes

    def release(self) -> None:
        lanes, self._lanes = self._lanes, []
        for lane in lanes:
            lane.release()


class Governor:
    def __init__(
        self,
        settings: GovernorSettings | None = None,
        *,
        book: SpendBook | None = None,
        read_settings: Callable[[], GovernorSettings] | None = None,
        budget_recheck_s: float = BUDGET_RECHECK_S,
        learn_quiet_s: float = LEARN_QUIET_S,
    ) -> None:
        self.settings = settings or GovernorSettings()
        self.book = book or SpendBook()
        # The budget is read anew on each check (config.json may have changed).
        self._read_settings = read_settings or _settings_from_config
        self.budget_recheck_s = budget_recheck_s
        self.learn_quiet_s = learn_quiet_s
        self._lanes: dict[tuple[str, str], FairLane] = {}
        self._paused_until: dict[str, float] = {}  # provider -> loop time
        self._limited_at: dict[str, float] = {}  # provider -> loop time of its last 429
        self.subagents = FairLane(self.settings.max_subagents)
        self._unsaved: dict[str, float] = {}  # project -> USD noted but not yet in the file
        self._saving: asyncio.Task[None] | None = None
        self._save_now = asyncio.Event()  # set by `aclose`: write at once, do not gather more
        self._spend_changed = asyncio.Event()
        # Counters for tests and benchmarks.
        self.rate_limited = 0
        self.peak_in_flight: dict[str, int] = {}

    @classmethod
    def from_config(cls) -> Governor:
        return cls(_settings_from_config())

    def gate_for(self, workspace_id: str, notify: Notify) -> WorkspaceGate:
        return WorkspaceGate(self, workspace_id, notify)

    def lane(self, provider: str, model: str = "") -> FairLane:
        """The provider's lane (`model` empty) or a model's own, made on first use."""
        lane = self._lanes.get((provider, model))
        if lane is None:
            cap = self.settings.model_cap(provider, model) if model else None
            limit = cap if cap is not None else self.settings.provider_cap(provider)
            lane = self._lanes[(provider, model)] = FairLane(limit)
        return lane

    # Backoff ------------------------------------------------------------------------------

    def pause(self, provider: str, retry_after_s: float | None) -> None:
        """A request to `provider` was refused for load (its slot is given back already)."""
        self.rate_limited += 1
        now = asyncio.get_running_loop().time()
        lane = self.lane(provider)
        # The requests still in flight are what the provider serves now: no more than that.
        lane.set_limit(max(1, min(lane.limit, lane.active)))
        self._limited_at[provider] = now
        if retry_after_s is None or retry_after_s <= 0:
            return  # no hint: the session's own backoff applies
        until = now + min(retry_after_s, MAX_PAUSE_S)
        self._paused_until[provider] = max(self._paused_until.get(provider, 0.0), until)

    def relearn(self, provider: str) -> None:
        """Raise a lowered cap by one once the provider has gone `LEARN_QUIET_S` without a
        429 (the account's limit may have been raised, or the 429 was someone else's load)."""
        limited_at = self._limited_at.get(provider)
        if limited_at is None:
            return
        now = asyncio.get_running_loop().time()
        if now - limited_at < self.learn_quiet_s:
            return
        lane = self.lane(provider)
        configured = self.settings.provider_cap(provider)
        if lane.limit < configured:
            lane.set_limit(lane.limit + 1)
            self._limited_at[provider] = now
        else:
            del self._limited_at[provider]

    def paused_for(self, provider: str) -> float:
        """Seconds until requests to `provider` may go again (0: now)."""
        until = self._paused_until.get(provider, 0.0)
        return max(0.0, until - asyncio.get_running_loop().time())

    # Spending -----------------------------------------------------------------------------

    def note_cost(self, project: str, usd: float) -> None:
        """A reply or compaction of `project` cost `usd`: counted in memory now, written to
        the day's file in the background, together with the costs noted in the next
        `SPEND_GATHER_S` (a fleet notes one per step: one locked write of the file each would
        be a thread hop, a lock and a rename per step in a server)."""
        if usd <= 0:
            return
        self._unsaved[project] = self._unsaved.get(project, 0.0) + usd
        if self._saving is None or self._saving.done():
            self._saving = asyncio.ensure_future(self._save_gathered())

    async def _save_gathered(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._save_now.wait(), SPEND_GATHER_S)
        await self._save()

    async def _save(self) -> None:
        while self._unsaved:
            batch, self._unsaved = self._unsaved, {}
            try:
                await asyncio.to_thread(self.book.add, batch)
            except Exception as exc:  # a full disk, a lock held too long: the next cost retries
                for project, usd in batch.items():
                    self._unsaved[project] = self._unsaved.get(project, 0.0) + usd
                log.warning("could not record the fleet's spending: %s", exc)
                break
        self._spend_changed.set()

    async def budget_problem(self, project: str) -> str | None:
        """Why a new turn of `project` may not start now (None: it may)."""
        settings = await asyncio.to_thread(self._read_settings)
        if not settings.has_budget:
            return None
        spend = await asyncio.to_thread(self.book.read)
        total = spend.total + sum(self._unsaved.values())
        own = spend.projects.get(project, 0.0) + self._unsaved.get(project, 0.0)
        limit = settings.usd_per_day
        if limit is not None and total >= limit:
            return (
                f"the fleet budget of ${limit:.2f} a day is spent (${total:.2f} today); new "
                "turns wait until the UTC day ends, or until governor.budget.usdPerDay in "
                "config.json is raised"
            )
        limit = settings.usd_per_project_per_day
        if limit is not None and own >= limit:
            return (
                f"this project's budget of ${limit:.2f} a day is spent (${own:.2f} today); "
                "new turns wait until the UTC day ends, or until "
                "governor.budget.usdPerProjectPerDay in config.json is raised"
            )
        return None

    async def wait_spend_change(self, timeout_s: float, stop: asyncio.Event) -> None:
        """Until the spending changes, `stop` is set or `timeout_s` passes."""
        self._spend_changed.clear()
        waiters = {
            asyncio.ensure_future(self._spend_changed.wait()),
            asyncio.ensure_future(stop.wait()),
        }
        try:
            await asyncio.wait(waiters, timeout=timeout_s, return_when="FIRST_COMPLETED")
        finally:
            for waiter in waiters:
                waiter.cancel()

    async def aclose(self) -> None:
        """Write what is still unsaved."""
        self._save_now.set()
        if self._saving is not None and not self._saving.done():
            with contextlib.suppress(Exception):
                await self._saving
        if self._unsaved:
            with contextlib.suppress(Exception):
                await self._save()


class WorkspaceGate:
    """The governor as one workspace sees it: waits are announced in its event stream."""

    def __init__(self, governor: Governor, workspace_id: str, notify: Notify) -> None:
        self.governor = governor
        self.workspace_id = workspace_id
        self.notify = notify

    # xum.llm.gate.RequestGate ------------------------------------------------------------

    async def acquire(self, provider: str, model: str) -> Permit:
        gov = self.governor
        lanes = [gov.lane(provider)]
        if gov.settings.model_cap(provider, model) is not None:
            lanes.insert(0, gov.lane(provider, model))  # the narrower lane first
        gov.relearn(provider)
        waiting = _Announcer(self.notify)
        try:
            while True:
                pause = gov.paused_for(provider)
                if pause > 0:
                    waiting.announce(
                        "backoff",
                        f"{provider} asked to slow down (rate limit or overload): every "
                        f"session waits {pause:.0f} s before its next request",
                        provider=provider,
                        model=model,
                        retry_at=time.time() + pause,
                    )
                    await asyncio.sleep(pause)
                    continue
                held: list[FairLane] = []
                try:
                    for lane in lanes:
                        if lane.busy():
                            waiting.announce(
                                "concurrency",
                                f"{lane.active} requests to {provider} are in flight, the "
                                f"most allowed at once ({lane.limit}); this one waits its turn",
                                provider=provider,
                                model=model,
                            )
                        await lane.take(self.workspace_id)
                        held.append(lane)
                except BaseException:
                    Permit(held).release()
                    raise
                if gov.paused_for(provider) > 0:  # a 429 came while this one was queued
                    Permit(held).release()
                    continue
                in_flight = lanes[-1].active
                gov.peak_in_flight[provider] = max(gov.peak_in_flight.get(provider, 0), in_flight)
                return Permit(held)
        finally:
            waiting.end()

    def report_rate_limited(self, provider: str, model: str, retry_after_s: float | None) -> None:
        self.governor.pause(provider, retry_after_s)

    # Sub-agents (xum.workspaces.subagents.manager) ---------------------------------------

    async def acquire_subagent(self, child_id: str) -> Permit:
        lane = self.governor.subagents
        waiting = _Announcer(self.notify)
        try:
            if lane.busy():
                waiting.announce(
                    "subagents",
                    f"{lane.active} sub-agents are running in this process, the most allowed "
                    f"at once (governor.maxConcurrentSubagents = {lane.limit}); sub-agent "
                    f"{child_id} waits its turn",
                )
            await lane.take(self.workspace_id)
            return Permit([lane])
        finally:
            waiting.end()

    # The fleet budget (xum.host.workspace_host, before each new turn) ----------------------

    async def hold_for_budget(
        self, project: str, on_hold: Callable[[], None], stop: asyncio.Event
    ) -> bool:
        """True once a new turn of `project` may start; while the budget is spent, say so
        (once) and wait for the spend or the config to change, or the day to end. False when
        `stop` is set meanwhile (the user stopped the held turn)."""
        waiting = _Announcer(self.notify)
        try:
            while (problem := await self.governor.budget_problem(project)) is not None:
                if stop.is_set():
                    return False
                if not waiting.announced:
                    waiting.announce(
                        "budget", problem, retry_at=time.time() + seconds_to_midnight()
                    )
                    on_hold()
                await self.governor.wait_spend_change(
                    min(self.governor.budget_recheck_s, seconds_to_midnight()), stop
                )
            return True
        finally:
            waiting.end()


class _Announcer:
    """Sends `governor-wait` when a wait begins (again when its reason changes) and one
    `governor-wait-end` when it is over."""

    def __init__(self, notify: Notify) -> None:
        self.notify = notify
        self.reason: str | None = None
        self.started = 0.0

    @property
    def announced(self) -> bool:
        return self.reason is not None

    def announce(self, reason: str, message: str, **where: Any) -> None:
        if reason == self.reason:
            return
        if self.reason is None:
            self.started = time.monotonic()
        self.reason = reason
        self.notify(E.GovernorWait(reason=reason, message=message, since=time.time(), **where))

    def end(self) -> None:
        if self.reason is not None:
            waited = round(time.monotonic() - self.started, 3)
            self.notify(E.GovernorWaitEnd(reason=self.reason, waited_s=waited))
            self.reason = None


def _settings_from_config() -> GovernorSettings:
    from xum.store.config import read_config

    return parse_settings(read_config())
