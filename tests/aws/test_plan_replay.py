"""A plan is a pure function of its context and the responses it receives (issue 37): the clock, time spent,
the deadline, backoff jitter and new ids reach it through `Context`, so a run recorded against moto replays
step for step, with the same result, from the recorded responses alone (no AWS)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from store import SessionStore, Settings
from store.aws.backend import PLANS, DynamoBackend, plan_of
from store.aws.calls import Learn, Step
from store.aws.driver import SyncDriver
from store.aws.plans.base import Context, Position
from store.requests import LastMessages
from tests.conftest import FakeClock, Harness


class Recording(SyncDriver):
    """The sync driver, keeping each step and what the plan received for it."""

    def __init__(self, clients: Any) -> None:
        super().__init__(clients, sleep=lambda _: None)
        self.log: list[tuple[Step, Any]] = []

    def _perform(self, step: Step) -> Any:
        outcome = super()._perform(step)
        self.log.append((step, outcome))
        return outcome


class Replay(SyncDriver):
    """Answers each step from a recording, after checking the plan asked for exactly the recorded step."""

    def __init__(self, log: list[tuple[Step, Any]]) -> None:
        super().__init__({}, sleep=lambda _: None)
        self.log, self.at = log, 0

    def _perform(self, step: Step) -> Any:
        wanted, outcome = self.log[self.at]
        assert step == wanted, f"step {self.at}: the plan asked for {step!r}, the recording has {wanted!r}"
        self.at += 1
        return outcome


def pure_store(dyn: Harness, start: datetime, driver: SyncDriver) -> SessionStore:
    """A store over `driver` whose plans' context is `pure_context`'s."""
    ctx = pure_context(dyn, start)
    return SessionStore(backend=DynamoBackend(ctx, driver), settings=ctx.settings)


def pure_context(dyn: Harness, start: datetime) -> Context:
    """A context whose every outside input is fixed: the settings' clock, monotonic time, no deadline, no
    jitter, ids from a counter."""
    assert dyn.tables is not None
    ids = (f"id{i}" for i in itertools.count())
    ticks = itertools.count()
    clock = FakeClock()
    clock.now = start
    settings = Settings(clock=clock)
    return Context(
        dyn.tables.sessions,
        dyn.tables.messages,
        settings,
        bucket=dyn.tables.bucket,
        monotonic=lambda: float(next(ticks)),
        deadline=lambda: None,
        jitter=lambda cap: cap / 2,
        new_id=lambda: next(ids),
    )


SCENARIOS: dict[str, Callable[[SessionStore], Any]] = {
    "append": lambda store: store.append_messages("s", [{"role": "user", "content": "hi"}] * 3),
    "fork": lambda store: store.fork_session("s", new_session_id="f"),
    "rewind": lambda store: store.rewind_session("s", 2, branch="b"),
    "save_state": lambda store: store.save_state("s", {"step": 1}),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_plan_replays_from_its_recorded_responses(dyn: Harness, name: str) -> None:
    """Record the call against moto, then replay it on a fresh context with the same inputs: the same
    steps in the same order, and the same result, with no AWS at all."""
    setup = dyn.store
    setup.create_session("alice", session_id="s")
    setup.append_messages("s", [{"role": "user", "content": f"m{i}"} for i in range(4)])
    start = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
    clients = {"dynamodb": dyn.store._backend.driver._clients["dynamodb"]}  # type: ignore[attr-defined]
    if dyn.s3 is not None:
        clients["s3"] = dyn.s3
    recording = Recording(clients)
    recorded = SCENARIOS[name](pure_store(dyn, start, recording))
    assert recording.log, "the call made requests"
    replay = Replay(recording.log)
    replayed = SCENARIOS[name](pure_store(dyn, start, replay))
    assert replay.at == len(recording.log), "the replay asked for every recorded step, and no more"
    assert replayed == recorded


def test_what_a_plan_learns_is_a_step_the_backend_keeps(dyn: Harness) -> None:
    """A plan reads the store's caches but never changes them: what it learns (a session's position) is a
    `Learn` step in its output, which the backend applies (`learned`); the plan alone leaves the context as
    it was, and a replay sees the same steps."""
    dyn.store.create_session("alice", session_id="s")
    dyn.store.append_messages("s", [{"role": "user", "content": "hi"}])
    ctx = pure_context(dyn, datetime(2026, 12, 4, 12, 0, tzinfo=UTC))
    driver = Recording({"dynamodb": dyn.store._backend.driver._clients["dynamodb"]})  # type: ignore[attr-defined]
    request = LastMessages(session_id="s", n=5)
    plan = PLANS[LastMessages](ctx, request)
    learned_steps: list[Learn] = []
    step = next(plan)
    while True:
        try:
            if isinstance(step, Learn):
                learned_steps.append(step)
                step = plan.send(None)
            else:
                step = plan.send(driver._perform(step))
        except StopIteration:
            break
    assert [(s.cache, s.key) for s in learned_steps] == [("positions", "s")]
    assert isinstance(learned_steps[0].value, Position) and learned_steps[0].value.last_seq == 1
    assert ctx.positions.get("s") is None, "the plan itself changed no cache"
    last = driver.run(plan_of(ctx, request))
    assert len(last) == 1 and ctx.positions.get("s") == learned_steps[0].value
