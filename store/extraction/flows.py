"""What an extraction call runs, as steps: each strategy over a session's messages it has not read
(`extract_session`), or over a framework's batch of messages no session holds (`extract_batch`); and which
strategies those are (`strategies_for`: the call's, the owner's choice, or the store's)."""

from __future__ import annotations

import hashlib
from typing import Any

from store.calls import CALLS
from store.core.steps import ask
from store.errors import InvalidInput, SessionNotFound
from store.extraction.choice import CHOICE_KIND, choice_of
from store.extraction.run_records import RUNS_KIND, ExtractionRun, digest_of, finished_up_to, runs_to_keep, stored_runs
from store.extraction.runs import Options, Run, perform
from store.extraction.steps import Flow, now
from store.extraction.strategies import Strategy, strategies
from store.extraction.transcripts import as_records, transcript
from store.models import MessageRecord


def extract_session(
    session_id: str, owner: str | None, chosen: tuple[Strategy, ...] | None, options: Options
) -> Flow[list[ExtractionRun]]:
    """Run each strategy once over the session's messages it has not done yet (a strategy with none is left
    out): the runs, new or (for a range already done) the earlier record. SessionNotFound for a session that
    does not exist or is another owner's."""
    session = yield from ask(CALLS.get_session, session_id, owner=owner)
    if session is None:
        raise SessionNotFound(session_id)
    picked = yield from strategies_for(session.owner, chosen, options.fallback, options.trigger)
    limits = options.limits
    runs = stored_runs((yield from ask(CALLS.load_records, session_id, RUNS_KIND, owner=owner)))
    out: list[ExtractionRun] = []
    fresh = False
    for strategy in picked:
        after = finished_up_to(runs, strategy.name)
        page = yield from ask(CALLS.list_messages, session_id, after_seq=after, limit=limits.max_messages, owner=owner)
        if not page.items:
            continue
        conversation, used = transcript(page.items, limits.max_prompt_chars)
        run = Run(session.owner, session_id, strategy, used, limits, options.model_id, meaning=options.meaning)
        done = next((r for r in runs if r.run_id == run.run_id and r.status == "succeeded"), None)
        if done is not None:
            out.append(done)
            continue
        record = yield from perform(run, conversation, options.trigger)
        runs = [*(r for r in runs if r.run_id != record.run_id), record]
        out.append(record)
        fresh = True
    if fresh:  # one write for the call's new runs
        yield from ask(CALLS.save_records, session_id, RUNS_KIND, runs_to_keep(runs), owner=owner)
    return out


CHECKPOINT_SCOPE = "workflow"  # where a batch's runs are remembered (no session holds them)


def extract_batch(
    owner: str,
    messages: list[Any],
    source: str,
    within: tuple[str, ...],
    numbers: list[int] | None,
    chosen: tuple[Strategy, ...] | None,
    options: Options,
) -> Flow[list[ExtractionRun]]:
    """Each strategy over a framework's batch of messages (no session of the store's: Strands' `add_messages`,
    ADK's events), its memories under `within` (the framework's namespace): the runs. A batch handed again
    (the same source, strategy and text) is found done in a checkpoint kept for `idempotency_ttl`, and writes
    nothing; one longer than a run takes is read in several runs."""
    picked = yield from strategies_for(owner, chosen, options.fallback, options.trigger)
    limits = options.limits
    records = as_records(messages, source, numbers, (yield from now()))
    out: list[ExtractionRun] = []
    windows: dict[int, list[MessageRecord]] = {}  # by position, so a grown conversation's earlier windows
    for message in records:  # read the same (and are found done): only its last one is read again
        windows.setdefault(max(message.seq - 1, 0) // limits.max_messages, []).append(message)
    for strategy in picked:
        for window in windows.values():
            left = window
            while left:
                conversation, used = transcript(left[: limits.max_messages], limits.max_prompt_chars)
                left = left[len(used) :]
                text = hashlib.blake2b(conversation.encode(), digest_size=16).hexdigest()
                run = Run(
                    owner,
                    source,
                    strategy,
                    used,
                    limits,
                    options.model_id,
                    within=within,
                    meaning=options.meaning,
                    run_id=digest_of(f"{owner}\0{source}", strategy.name, text, len(used)),
                )
                key = f"extraction:{run.run_id}"
                done = yield from ask(CALLS.load_checkpoint, CHECKPOINT_SCOPE, key)
                earlier = stored_runs([done.data]) if done is not None else []
                if earlier and earlier[0].status == "succeeded":
                    out.append(earlier[0])
                    continue
                made = yield from perform(run, conversation, options.trigger)
                yield from ask(CALLS.save_checkpoint, CHECKPOINT_SCOPE, key, made.model_dump(mode="json"))
                out.append(made)
    return out


def strategies_for(
    owner: str, chosen: tuple[Strategy, ...] | None, fallback: tuple[str, ...], trigger: str
) -> Flow[tuple[Strategy, ...]]:
    """The strategies a run uses: the call's, else the owner's choice (`set_extraction`), else `fallback` (the
    store's); none when the owner switched extraction off (a run asked for on demand is then refused)."""
    choice = choice_of((yield from ask(CALLS.load_owner_records, owner, CHOICE_KIND)))
    if not choice.enabled:
        if trigger == "on_demand":
            raise InvalidInput("memory extraction is switched off for this owner (set_extraction)")
        return ()
    if chosen is not None:
        return chosen
    return strategies(list(choice.strategies or fallback))
