"""Memory extraction's run records: the record of a run (`ExtractionRun`), the session records' kind that holds
them, how a run's id is made, what a session keeps of its runs, and what forgetting an owner leaves of them
(`forgotten`, registered as the store's `forget_reducers`).

A session's runs say which memories they wrote (namespaces and keys) and what they cost. `forget_owner` removes
an owner's memories and, with them, that history; what it keeps of each session is one line per strategy saying
how far that strategy had read (`forgotten`), so the messages that made the forgotten memories are not read again
by the next trigger. New messages are read as before (the owner's on/off choice, `set_extraction`, decides that)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from store.core.timeutil import iso

RUNS_KIND = "memory-extraction"  # the session's records (`load_records`) that hold its runs
FORGET_TRIGGER = "forget"  # the trigger of the line a forget leaves in place of a strategy's runs
MAX_FORGOTTEN = 50  # strategies a forget keeps the position of (the furthest read), whatever the records held
RUNS_BYTES = 6000  # the JSON of the runs a session keeps (its newest; each strategy's newest always): ~15 runs

Status = Literal["succeeded", "failed", "refused"]


class MemoryChange(BaseModel):
    """A memory a run wrote: its namespace and key, and what happened (`add`, `merge`, `supersede`,
    `rewrite` for a summary, `episode`)."""

    namespace: tuple[str, ...]
    key: str
    action: str


class ExtractionRun(BaseModel):
    """The record of one run (kept in the session's records, kind RUNS_KIND): which strategy, over which
    messages (`first_seq`..`last_seq`), how it ended (`status`, `error`: a code such as `throttled`,
    `refused`, `invalid_output`), what it cost (model calls, attempts, tokens) and what it wrote (`changes`;
    `unchanged` counts candidates that were already known)."""

    run_id: str
    session_id: str
    strategy: str
    trigger: str
    first_seq: int
    last_seq: int
    status: Status
    error: str | None = None
    model: str = ""
    model_calls: int = 0
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    changes: list[MemoryChange] = Field(default_factory=list)
    unchanged: int = 0
    started_at: datetime
    finished_at: datetime


class ExtractionRuns(BaseModel):
    """A session's extraction runs, oldest first (`accepted`: a run asked for is on its way, not in `items`)."""

    items: list[ExtractionRun]
    accepted: bool = False


def digest_of(source: str, strategy: str, first: Any, last: Any) -> str:
    """A run's id: the same source (a session, or a framework's batch), strategy and range, the same id."""
    return hashlib.blake2b(f"{source}\0{strategy}\0{first}\0{last}".encode(), digest_size=10).hexdigest()


def _reached(record: Any) -> tuple[str, str, int] | None:
    """(session, strategy, last seq) of a run record that finished its range (succeeded or refused), else None
    (a failed run, or anything that does not read as a run)."""
    if not isinstance(record, dict) or record.get("status") not in ("succeeded", "refused"):
        return None
    session, strategy, last = record.get("session_id"), record.get("strategy"), record.get("last_seq")
    if not isinstance(session, str) or not isinstance(strategy, str) or type(last) is not int or last < 1:
        return None
    return session, strategy, last


def furthest_read(records: Iterable[Any]) -> dict[str, tuple[str, int]]:
    """For each strategy with a run that finished its range (succeeded or refused; failed runs are read again),
    the furthest seq it read and the session of that run. Records that do not read as runs are ignored."""
    furthest: dict[str, tuple[str, int]] = {}
    for record in records:
        reached = _reached(record)
        if reached is not None and reached[2] > furthest.get(reached[1], ("", 0))[1]:
            furthest[reached[1]] = (reached[0], reached[2])
    return furthest


def forgotten(records: list[Any], now: datetime) -> list[dict[str, Any]]:
    """What a forget leaves of a session's run records: for each strategy that finished a range, one run
    (trigger `forget`) covering messages 1..the furthest it read, with no model, cost or changes; nothing of the
    runs' history. At most MAX_FORGOTTEN strategies (the furthest read). Applying it to its own result returns
    that result (a line keeps its time), so a second forget has nothing to write."""
    furthest = furthest_read(records if isinstance(records, list) else [])
    kept = sorted(furthest.items(), key=lambda kv: (-kv[1][1], kv[0]))[:MAX_FORGOTTEN]
    out: list[dict[str, Any]] = []
    for strategy, (session, last) in sorted(kept):
        run_id = digest_of(session, strategy, FORGET_TRIGGER, last)
        earlier = next((r for r in records if isinstance(r, dict) and r.get("run_id") == run_id), {})
        at = earlier.get("finished_at") if isinstance(earlier.get("finished_at"), str) else iso(now)
        out.append(
            {
                "run_id": run_id,
                "session_id": session,
                "strategy": strategy,
                "trigger": FORGET_TRIGGER,
                "first_seq": 1,
                "last_seq": last,
                "status": "succeeded",
                "error": None,
                "model": "",
                "model_calls": 0,
                "attempts": 0,
                "input_tokens": 0,
                "output_tokens": 0,
                "changes": [],
                "unchanged": 0,
                "started_at": at,
                "finished_at": at,
            }
        )
    return out


def finished_up_to(runs: list[ExtractionRun], strategy: str) -> int:
    """The last seq a strategy is done with in a session (succeeded or refused runs), 0 before any."""
    mine = (run.model_dump(include={"session_id", "strategy", "status", "last_seq"}) for run in runs)
    return furthest_read(mine).get(strategy, ("", 0))[1]


def stored_runs(records: list[Any]) -> list[ExtractionRun]:
    """The session's run records (one that does not read as a run, written by something else, is left out)."""
    out = []
    for record in records:
        try:
            out.append(ExtractionRun.model_validate(record))
        except ValueError:
            continue
    return out


def runs_to_keep(runs: list[ExtractionRun]) -> list[dict[str, Any]]:
    """What a session keeps of its runs (oldest first): the newest within RUNS_BYTES of JSON, and always each
    strategy's newest (where the next run of it starts), so the record stays one small item however many runs
    a session has had."""
    dumped = [r.model_dump(mode="json", exclude_defaults=True) for r in runs]
    newest = {r.strategy: i for i, r in enumerate(runs)}
    chosen: set[int] = set(newest.values())
    size = sum(len(json.dumps(dumped[i])) for i in chosen)
    for i in range(len(runs) - 1, -1, -1):
        if i in chosen:
            continue
        size += len(json.dumps(dumped[i]))
        if size > RUNS_BYTES:
            break
        chosen.add(i)
    return [dumped[i] for i in sorted(chosen)]
