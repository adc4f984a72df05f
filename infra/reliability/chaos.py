"""The contract workflows under injected faults (infra/reliability/faults.py), with a careful caller's retries, and
the verdict: every call either succeeded or raised a documented StoreError; no message is duplicated or
lost (appends carry idempotency keys; save_full is retried with expected_seq); no save_full is half
applied; the invariants hold; and after the reclaim step no unreferenced object is left.

    python -m infra.cli faults --rate 0.1 --sessions 5 --turns 10     (moto's server is started for it)"""

from __future__ import annotations

import base64
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from infra.reliability.faults import FaultInjector
from infra.reliability.invariants import check, reclaim_pending
from store import Conflict, SessionExists, SessionStore, StoreError, StoreUnavailable

T = TypeVar("T")
ATTEMPTS = 30


@dataclass
class Outcome:
    calls: int = 0
    errors: Counter[str] = field(default_factory=Counter)  # StoreErrors the caller saw (then retried)
    violations: list[str] = field(default_factory=list)
    injected: Counter[str] = field(default_factory=Counter)
    requests: int = 0

    @property
    def ok(self) -> bool:
        return not self.violations


class Caller:
    """Calls the store like a careful agent: a StoreError is retried (the same call, the same key)."""

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome

    def __call__(self, what: str, call: Callable[[], T]) -> T:
        for _ in range(ATTEMPTS):
            self.outcome.calls += 1
            try:
                return call()
            except (StoreUnavailable, Conflict) as exc:  # transient: retried as they are
                self.outcome.errors[type(exc).__name__] += 1
            except StoreError as exc:
                self.outcome.errors[type(exc).__name__] += 1
                raise
            except Exception as exc:  # the contract: nothing but StoreErrors
                self.outcome.violations.append(f"{what} raised {type(exc).__name__}: {exc}")
                raise
        raise RuntimeError(f"{what} did not succeed in {ATTEMPTS} attempts")


def workflow(store: SessionStore, call: Caller, sid: str, turns: int) -> list[str]:
    """One session's life; returns the contents it appended, in order (each must be stored once)."""
    try:
        call("create_session", lambda: store.create_session("chaos", session_id=sid, title=sid))
    except SessionExists:  # an earlier attempt created it and its answer was lost
        found = call("get_session", lambda: store.get_session(sid))
        if found is None or found.owner != "chaos":
            raise
    expected: list[str] = []
    big = base64.b64encode(os.urandom(450_000)).decode()  # spills to S3
    for turn in range(turns):
        content = f"{sid} turn {turn}"
        body = big + content if turn % 5 == 4 else content
        message = {"role": "user", "content": body, "usage": {"input_tokens": turn + 1, "cost": 0.001}}
        call("append_messages", partial(store.append_messages, sid, [message], idempotency_key=f"{sid}-{turn}"))
        expected.append(body)
        if turn % 3 == 2:
            reply = f"{sid} reply {turn}"
            save_full_once(store, call, sid, reply, {"turn": turn})
            expected.append(reply)
        if turn % 4 == 0:
            call("put_artifact", partial(store.put_artifact, sid, f"notes/{turn}.txt", content.encode()))
            call("append_trace_events", partial(store.append_trace_events, sid, "run-1", [{"turn": turn}]))
            call("save_checkpoint", partial(store.save_checkpoint, "session", sid, {"turn": turn}))
            call("save_state", partial(store.save_state, sid, {"turn": turn, "blob": big if turn % 8 == 0 else ""}))
    return expected


def save_full_once(store: SessionStore, call: Caller, sid: str, reply: str, state: Any) -> None:
    """save_full exactly once: retried with expected_seq; an attempt that landed although it reported an
    error is recognised by the transcript's end."""
    while True:
        last = call("get_session", lambda: store.get_session(sid))
        assert last is not None
        tail = call("last_messages", lambda: store.last_messages(sid, 1))
        if tail and tail[-1].content == reply:
            return  # an earlier attempt landed
        try:
            call.outcome.calls += 1
            store.save_full(sid, [{"role": "assistant", "content": reply}], state, expected_seq=last.last_seq)
            return
        except (StoreUnavailable, Conflict) as exc:  # then look again: it may have landed
            call.outcome.errors[type(exc).__name__] += 1


def run(store: SessionStore, faults: FaultInjector, sessions: int, turns: int, prefix: str) -> Outcome:
    """The workflows of `sessions` sessions, each `turns` turns long, under `faults`."""
    outcome = Outcome()
    call = Caller(outcome)
    stored: dict[str, list[str]] = {}
    for n in range(sessions):
        sid = f"{prefix}-{n}"
        stored[sid] = workflow(store, call, sid, turns)
    faults.detach()  # check with a reliable connection
    for sid, expected in stored.items():
        got = [m.content for m in store.list_messages(sid).items]
        if got != expected:
            dupes = [c[:40] for c, k in Counter(got).items() if k > 1]
            missing = len([c for c in expected if c not in got])
            outcome.violations.append(
                f"{sid}: {len(got)} messages stored, {len(expected)} sent; duplicated {dupes[:3]}, missing {missing}"
            )
    outcome.injected, outcome.requests = faults.injected, faults.requests
    return outcome


def verdict(outcome: Outcome, dynamodb: Any, s3: Any, store: SessionStore, tables: Any, streams: Any) -> list[str]:
    """Everything that is wrong: the run's violations, broken invariants, and objects that the reclaim
    step left unreferenced."""
    problems = list(outcome.violations)
    report = check(dynamodb, s3, tables.sessions, tables.messages, tables.bucket)
    # objects released but not yet reclaimed are expected until the reclaim step has run
    problems += [p for p in report.problems if not p.startswith("unreferenced object")]
    reclaim_pending(dynamodb, tables.sessions, store, streams)
    after = check(dynamodb, s3, tables.sessions, tables.messages, tables.bucket)
    problems += [p for p in after.problems if p not in problems]
    if after.pending:
        problems.append(f"{len(after.pending)} objects still awaiting reclaim after the reclaim step")
    return problems


def run_against(
    endpoint: str, rate: float, sessions: int, turns: int, seed: int, attempts: int = 2
) -> tuple[Outcome, list[str]]:
    """The workflows on fresh tables at `endpoint` (moto's server) under `rate` faults; the outcome and
    the verdict. The SDK makes `attempts` attempts per request (2, so that faults also reach the store
    and its callers)."""
    from botocore.config import Config

    from infra.local.aws import create_tables, local_client
    from store.session_store import retry_config, s3_config

    sdk = Config(retries={"mode": "standard", "max_attempts": attempts})
    dynamodb = local_client(endpoint_url=endpoint, config=retry_config(sdk))
    s3 = local_client("s3", endpoint_url=endpoint, config=s3_config(sdk, path_style=True))
    plain_s3 = local_client("s3", endpoint_url=endpoint, config=s3_config(path_style=True))
    plain = local_client(endpoint_url=endpoint)
    tables = create_tables(plain, prefix=f"chaos{seed}-{int(rate * 100)}", s3=plain_s3)
    store = SessionStore(tables.sessions, tables.messages, bucket=tables.bucket, client=dynamodb, s3_client=s3)
    faults = FaultInjector(rate, seed=seed)
    faults.attach(dynamodb)
    faults.attach(s3)
    outcome = run(store, faults, sessions, turns, f"chaos{seed}")
    streams = local_client("dynamodbstreams", endpoint_url=endpoint)
    return outcome, verdict(outcome, plain, plain_s3, store, tables, streams)


def main(rate: float, sessions: int, turns: int, seed: int) -> int:
    """`python -m infra.cli faults`: run the workflows against a fresh moto server and print the verdict."""
    from infra.local.aws import moto_server

    with moto_server() as endpoint:
        outcome, problems = run_against(endpoint, rate, sessions, turns, seed)
    print(f"fault rate {rate:.0%}: {outcome.requests} requests, injected {dict(outcome.injected)}")
    print(f"{outcome.calls} calls; StoreErrors seen and retried: {dict(outcome.errors)}")
    for problem in problems:
        print(f"  PROBLEM: {problem}")
    print("no problem" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0
