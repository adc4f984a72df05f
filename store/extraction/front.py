"""The public operations of memory extraction: run strategies over a session now (`extract_memories`), and read
the runs a session had (`list_extraction_runs`). The run itself is `store.extraction.runs` (written once, as
steps); this module checks the arguments and drives the steps with the store's own public methods, so a run
sees and writes exactly what any caller would (the owner's checks included)."""

from __future__ import annotations

import time
from typing import Any, cast

from store.core import memories as m
from store.core import validation as v
from store.core.steps import Stepper
from store.errors import InvalidInput
from store.extraction.models import ModelError, ModelRejected
from store.extraction.runs import (
    RUNS_KIND,
    Ask,
    Call,
    ExtractionRun,
    Flow,
    Sleep,
    extraction,
    message_extraction,
    stored_runs,
)
from store.extraction.strategies import strategies as chosen_strategies
from store.front.base import Domain

TRIGGERS = ("on_demand", "messages", "idle")
MAX_BATCH = 1000  # messages one extract_from_messages call takes


def chosen_model(given: Any, default: Any) -> Any:
    """The model a call uses: the one given, else the store's (`Settings.extraction_model`)."""
    model = given if given is not None else default
    if model is None:
        raise InvalidInput("no extraction model: give model=, or Settings(extraction_model=...)")
    if not callable(model) or not isinstance(getattr(model, "model_id", None), str):
        raise InvalidInput("the extraction model must be callable and have a model_id (store.extraction)")
    return model


MEANING = 0.5  # the least similarity that relates two memories with an embedder that names none


def meaning_of(settings: Any) -> float | None:
    """The least similarity in meaning that makes two memories related (consolidation's neighbours): the
    store's embedder's `match_threshold`, else MEANING; None without an embedder (words only)."""
    embedder = settings.embedder
    if embedder is None:
        return None
    named = getattr(embedder, "match_threshold", None)
    return float(named) if isinstance(named, (int, float)) and not isinstance(named, bool) else MEANING


class Extraction(Domain):
    """Memory extraction on demand, and the record of its runs."""

    def _extraction_flow(
        self,
        session_id: str,
        *,
        strategies: Any = None,
        owner: str | None = None,
        model: Any = None,
        trigger: str = "on_demand",
    ) -> tuple[Any, Flow]:
        """`extract_memories`'s arguments checked: (the model, the run's steps)."""
        if trigger not in TRIGGERS:
            raise InvalidInput(f"trigger must be one of {', '.join(TRIGGERS)}")
        checked = v.ident(session_id, "session_id")
        who = v.optional_owner(owner)
        picked = None if strategies is None else chosen_strategies(strategies)
        used = chosen_model(model, self.settings.extraction_model)
        flow = extraction(
            checked,
            who,
            picked,
            self.settings.extraction_limits,
            trigger,
            used.model_id,
            meaning_of(self.settings),
            self.settings.extraction_strategies,
        )
        return used, flow

    def extract_memories(
        self,
        session_id: str,
        *,
        strategies: Any = None,
        owner: str | None = None,
        model: Any = None,
        trigger: str = "on_demand",
    ) -> list[ExtractionRun]:
        """Distil the session's messages that each strategy has not read yet into the owner's memories, now:
        one run per strategy that has new messages (`strategies`: built-in names or `Strategy`s; when None, the
        owner's choice (`set_extraction`), else `Settings.extraction_strategies`), with `model` or
        `Settings.extraction_model`. An owner who switched extraction off gets no run from a trigger, and
        InvalidInput when asking. A range already done returns its earlier
        run and writes nothing; a model that fails, refuses or answers badly gives a run with `status` "failed"
        or "refused" and writes no memory. Bounded by `Settings.extraction_limits`. SessionNotFound for a
        session that does not exist or is another owner's."""
        used, flow = self._extraction_flow(session_id, strategies=strategies, owner=owner, model=model, trigger=trigger)
        result: list[ExtractionRun] = drive(self, used, flow)
        return result

    def _messages_flow(
        self,
        owner: str,
        messages: Any,
        *,
        source: str,
        namespace: Any = (),
        sequence_numbers: Any = None,
        strategies: Any = None,
        model: Any = None,
        trigger: str = "on_demand",
    ) -> tuple[Any, Flow]:
        """`extract_from_messages`'s arguments checked: (the model, the run's steps)."""
        if trigger not in TRIGGERS:
            raise InvalidInput(f"trigger must be one of {', '.join(TRIGGERS)}")
        if not isinstance(messages, (list, tuple)) or len(messages) > MAX_BATCH:
            raise InvalidInput(f"messages must be a list of at most {MAX_BATCH} messages")
        numbers = None
        if sequence_numbers is not None:
            numbers = list(sequence_numbers) if isinstance(sequence_numbers, (list, tuple)) else None
            if (
                numbers is None
                or len(numbers) != len(messages)
                or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers)
            ):
                raise InvalidInput("sequence_numbers must give each message a number of its own (0 or more)")
        within = m.namespace(namespace, "namespace", allow_empty=True)
        picked = None if strategies is None else chosen_strategies(strategies)
        used = chosen_model(model, self.settings.extraction_model)
        flow = message_extraction(
            v.owner(owner),
            list(messages),
            v.ident(source, "source"),
            within,
            numbers,
            picked,
            self.settings.extraction_limits,
            trigger,
            used.model_id,
            meaning_of(self.settings),
            self.settings.extraction_strategies,
        )
        return used, flow

    def extract_from_messages(
        self,
        owner: str,
        messages: list[dict[str, Any]],
        *,
        source: str,
        namespace: tuple[str, ...] | list[str] = (),
        sequence_numbers: list[int] | None = None,
        strategies: Any = None,
        model: Any = None,
        trigger: str = "on_demand",
    ) -> list[ExtractionRun]:
        """Distil a framework's messages that no session of this store holds (Strands' `add_messages`, ADK's
        events) into `owner`'s memories, each strategy's namespace under `namespace`: the runs. `source` names
        the conversation (an id: the framework's session); a batch handed again within `idempotency_ttl` (the
        same owner, source, strategy and text) returns its earlier run and writes nothing. Otherwise as
        `extract_memories`."""
        used, flow = self._messages_flow(
            owner,
            messages,
            source=source,
            namespace=namespace,
            sequence_numbers=sequence_numbers,
            strategies=strategies,
            model=model,
            trigger=trigger,
        )
        result: list[ExtractionRun] = drive(self, used, flow)
        return result

    def list_extraction_runs(self, session_id: str, *, owner: str | None = None) -> list[ExtractionRun]:
        """The session's extraction runs, oldest first (kept: the newest within about 6 KB of JSON, and each
        strategy's newest)."""
        return stored_runs(cast(Any, self).load_records(session_id, RUNS_KIND, owner=owner))


def drive(store: Any, model: Any, flow: Flow) -> Any:
    """Run `flow`'s steps with `store`'s methods and `model`, synchronously (`store.core.steps.Stepper`): its
    result."""
    stepper = Stepper(flow)
    while not stepper.done:
        step = stepper.current
        try:
            if isinstance(step, Call):
                outcome: Any = getattr(store, step.method)(*step.args, **step.kwargs)
            elif isinstance(step, Ask):
                outcome = asked(model, step.request)
            elif isinstance(step, Sleep):
                time.sleep(step.seconds)
                outcome = None
            else:
                outcome = store.settings.clock()
        except Exception as exc:  # handed to the flow, which decides (a model's failure) or passes it on
            outcome = exc
        stepper.advance(outcome)
    return stepper.result


def asked(model: Any, request: Any) -> Any:
    """`model`'s reply to `request`; whatever a caller's model raises that is not a ModelError is ModelRejected."""
    try:
        return model(request)
    except ModelError:
        raise
    except Exception as exc:
        raise ModelRejected(f"the model failed: {type(exc).__name__}") from None


async def drive_async(store: Any, model: Any, flow: Flow) -> Any:
    """`drive` for an `AsyncSessionStore`: its methods awaited, the model asked in a worker thread (a model's
    client blocks), sleeps on the loop."""
    import asyncio

    stepper = Stepper(flow)
    while not stepper.done:
        step = stepper.current
        try:
            if isinstance(step, Call):
                outcome: Any = await getattr(store, step.method)(*step.args, **step.kwargs)
            elif isinstance(step, Ask):
                outcome = await asyncio.to_thread(asked, model, step.request)
            elif isinstance(step, Sleep):
                await asyncio.sleep(step.seconds)
                outcome = None
            else:
                outcome = store.settings.clock()
        except Exception as exc:
            outcome = exc
        stepper.advance(outcome)
    return stepper.result
