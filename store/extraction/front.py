"""The public operations of memory extraction: run strategies over a session now (`extract_memories`), read
the runs a session had (`list_extraction_runs`), correct what was extracted (`correct_memory`). The run itself
is `store.extraction.runs` (written once, as steps); this module checks the arguments and drives the steps with
the store's own public methods, so a run sees and writes exactly what any caller would (the owner's checks
included)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar, Concatenate, ParamSpec, TypeVar, cast

from store.core import memories as m
from store.core import validation as v
from store.core.forgetting import ForgetReducers
from store.embeddings import match_threshold
from store.errors import InvalidInput
from store.extraction.choice import CHOICE_KIND, ExtractionChoice, choice_of, choice_records, new_choice
from store.extraction.corrections import correction
from store.extraction.flows import extract_batch, extract_session
from store.extraction.run_records import RUNS_KIND, ExtractionRun, forgotten, stored_runs
from store.extraction.runs import Options
from store.extraction.steps import Flow, drive
from store.extraction.strategies import Strategy
from store.extraction.strategies import strategies as chosen_strategies
from store.front.base import Domain
from store.models import MemoryItem

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


S = TypeVar("S")
P = ParamSpec("P")
Built = tuple[Any, Flow[list[ExtractionRun]]]  # (the model a call uses, the call's steps)


def flowed(build: Callable[Concatenate[S, P], Built]) -> Callable[Concatenate[S, P], list[ExtractionRun]]:
    """A method that checks its arguments and returns (model, steps), as one that runs the steps with the store
    and returns the runs. The checks stay reachable (`__wrapped__`): `AsyncSessionStore` builds the same steps
    with them and awaits them (`drive_async`)."""

    @functools.wraps(build)
    def run(self: S, /, *args: P.args, **kwargs: P.kwargs) -> list[ExtractionRun]:
        model, flow = build(self, *args, **kwargs)
        result: list[ExtractionRun] = drive(self, model, flow)
        return result

    return run


class Extraction(Domain):
    """Memory extraction on demand, the record of its runs, and the owner's choice. A forget leaves of a
    session's runs how far each strategy read (`forget_reducers`)."""

    forget_reducers: ClassVar[ForgetReducers] = {RUNS_KIND: forgotten}

    @flowed
    def extract_memories(
        self,
        session_id: str,
        *,
        strategies: Any = None,
        owner: str | None = None,
        model: Any = None,
        trigger: str = "on_demand",
    ) -> Built:
        """Distil the session's messages that each strategy has not read yet into the owner's memories, now:
        one run per strategy that has new messages (`strategies`: built-in names or `Strategy`s; when None, the
        owner's choice (`set_extraction`), else `Settings.extraction_strategies`), with `model` or
        `Settings.extraction_model`. An owner who switched extraction off gets no run from a trigger, and
        InvalidInput when asking. A range already done returns its earlier run and writes nothing; a model
        that fails, refuses or answers badly gives a run with `status` "failed" or "refused" and writes no
        memory. Bounded by `Settings.extraction_limits`. SessionNotFound for a session that does not exist or
        is another owner's. Returns the runs."""
        checked = v.ident(session_id, "session_id")
        who = v.optional_owner(owner)
        picked, used = self._chosen(strategies, model, trigger)
        return used, extract_session(checked, who, picked, self._options(used, trigger))

    @flowed
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
    ) -> Built:
        """Distil a framework's messages that no session of this store holds (Strands' `add_messages`, ADK's
        events) into `owner`'s memories, each strategy's namespace under `namespace`: the runs. `source` names
        the conversation (an id: the framework's session); a batch handed again within `idempotency_ttl` (the
        same owner, source, strategy and text) returns its earlier run and writes nothing. Otherwise as
        `extract_memories`."""
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
        who, source_id = v.owner(owner), v.ident(source, "source")
        picked, used = self._chosen(strategies, model, trigger)
        steps = extract_batch(who, list(messages), source_id, within, numbers, picked, self._options(used, trigger))
        return used, steps

    def _chosen(self, strategies: Any, model: Any, trigger: str) -> tuple[tuple[Strategy, ...] | None, Any]:
        """The strategies a call names (None: the owner's, else the store's) and the model it uses."""
        if trigger not in TRIGGERS:
            raise InvalidInput(f"trigger must be one of {', '.join(TRIGGERS)}")
        picked = None if strategies is None else chosen_strategies(strategies)
        return picked, chosen_model(model, self.settings.extraction_model)

    def _options(self, model: Any, trigger: str) -> Options:
        settings = self.settings
        return Options(
            settings.extraction_limits,
            trigger,
            model.model_id,
            match_threshold(settings.embedder),
            settings.extraction_strategies,
        )

    def correct_memory(self, owner: str, namespace: tuple[str, ...] | list[str], key: str, text: str) -> MemoryItem:
        """The owner's correction of a memory's `text` (an extracted one, or any with a text): the text it had
        is kept first in its `history` (change `corrected`, newest first, at most 20), its provenance (`source`)
        and other fields as they were, only `text` indexed. The same text again writes nothing. MemoryNotFound
        when the owner has no such memory; InvalidInput for a bad argument, before anything is read. A get and
        a put (the last writer wins, as with `put_memory`). Returns the memory."""
        corrected: MemoryItem = drive(self, None, correction(owner, namespace, key, text))
        return corrected

    def set_extraction(
        self, owner: str, *, enabled: bool = True, strategies: list[str] | None = None
    ) -> ExtractionChoice:
        """Keep the owner's choice about memory extraction: off (`enabled=False`: no trigger extracts their
        sessions, and asking for it is refused), or on with the built-in `strategies` that run when a call
        names none (None: the deployment's). It outlives `forget_owner`: an opt-out stays one. One write (the
        owner's records of kind CHOICE_KIND)."""
        who = v.owner(owner)
        choice = new_choice(enabled, strategies, self.settings.clock())
        cast(Any, self).save_owner_records(who, CHOICE_KIND, choice_records(choice))
        return choice

    def get_extraction(self, owner: str) -> ExtractionChoice:
        """The owner's choice about memory extraction (on, with the deployment's strategies, until set). One
        read."""
        return choice_of(cast(Any, self).load_owner_records(v.owner(owner), CHOICE_KIND))

    def list_extraction_runs(self, session_id: str, *, owner: str | None = None) -> list[ExtractionRun]:
        """The session's extraction runs, oldest first (kept: the newest within about 6 KB of JSON, and each
        strategy's newest)."""
        return stored_runs(cast(Any, self).load_records(session_id, RUNS_KIND, owner=owner))
