"""An extraction run, written once for both fronts: a generator of steps (`store.extraction.steps`: the store's
public operations, the model, sleeps), driven with a `SessionStore` or an `AsyncSessionStore`.

One run = one strategy over one range of one session's messages: those after the last range that strategy
finished (at most `Limits.max_messages`, and no more text than `Limits.max_prompt_chars`). Its id is a digest
of (session, strategy, first seq, last seq): a run whose id already succeeded is not run again (a retried stream
batch, a trigger fired twice), and every memory it writes has a deterministic key, so a run retried after a
crash writes the same memories again, not new ones.

Every model failure has one outcome: throttling, timeouts, an unavailable service and an invalid answer are
retried (`Limits.max_attempts` a question; after throttling, a timeout or an unavailable service with backoff,
`Limits.backoff` seconds doubling; an invalid answer at once); a refusal ends the
run as `refused` (its range is passed over: asking again would be refused again); anything else ends it as
`failed`, its range tried again by the next run. A run writes its memories only once every question is
answered, so a failed run has written nothing; its record says why (an error code, never content)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.calls import CALLS
from store.core import memories as m
from store.core.steps import ask
from store.core.timeutil import iso
from store.extraction import consolidation as c
from store.extraction.answers import candidates, episode_of, summary_text
from store.extraction.limits import Limits
from store.extraction.models import ModelError, ModelRequest
from store.extraction.retries import ask_with_retries
from store.extraction.run_records import ExtractionRun, MemoryChange, Status, digest_of
from store.extraction.steps import Flow, now
from store.extraction.strategies import DEFAULT, MEMORIES_SCHEMA, REFLECTION_INSTRUCTIONS, Strategy
from store.models import MemoryHit, MessageRecord

Outcome = tuple[list[MemoryChange], int]  # what a run wrote, and how many candidates were already known
Decided = tuple[list[c.Decision], dict[str, dict[str, Any]], int]  # decisions, values they change, known


@dataclass(frozen=True)
class Options:
    """What a call's runs share: the limits, what triggered them, the model's id, the least similarity that
    relates two memories (None: words only), and the store's strategies (when neither the call nor the owner
    names any)."""

    limits: Limits
    trigger: str
    model_id: str
    meaning: float | None = None
    fallback: tuple[str, ...] = tuple(s.name for s in DEFAULT)


class Run:
    """One strategy over one range of a session (see the module docstring)."""

    def __init__(
        self,
        owner: str,
        session_id: str,
        strategy: Strategy,
        records: list[MessageRecord],
        limits: Limits,
        model_id: str,
        *,
        within: tuple[str, ...] = (),
        run_id: str | None = None,
        meaning: float | None = None,
    ) -> None:
        self.owner, self.session_id, self.strategy, self.limits = owner, session_id, strategy, limits
        self.records = records
        self.seqs = {r.seq for r in records}
        self.target = m.namespace((*within, *strategy.target(owner, session_id)))
        self.within = within
        self.meaning = meaning  # the least similarity that makes a memory related (None: no embedder)
        self.tally: dict[str, Any] = {"attempts": 0, "model_calls": 0, "input_tokens": 0, "output_tokens": 0}
        self.tally["model"] = model_id
        self.run_id = run_id or digest_of(session_id, strategy.name, records[0].seq, records[-1].seq)

    def source(self, evidence: tuple[int, ...], at: str) -> dict[str, Any]:
        """A memory's provenance."""
        return {
            "session_id": self.session_id,
            "seqs": list(evidence) or [self.records[0].seq, self.records[-1].seq],
            "strategy": self.strategy.name,
            "model": self.tally["model"],
            "run_id": self.run_id,
            "extracted_at": at,
        }

    def flow(self, conversation: str, at: str) -> Flow[Outcome]:
        """The run's questions and writes; returns (changes, unchanged)."""
        kind = self.strategy.kind
        if kind == "summary":
            return (yield from self.summary(conversation, at))
        if kind == "episodes":
            return (yield from self.episode(conversation, at))
        request = ModelRequest(
            self.strategy.instructions,
            f"<conversation>\n{conversation}\n</conversation>",
            self.strategy.schema,
            f"record_{self.strategy.kind}",
            self.limits.max_output_tokens,
        )
        found = yield from ask_with_retries(
            request, self.limits, self.tally, lambda d: candidates(d, self.seqs, self.limits.max_memories)
        )
        decided, values, unchanged = yield from self.decide(found, self.target, self.strategy.consolidate)
        changes = yield from self.write(decided, values, self.target, at)
        return changes, unchanged

    def decide(self, found: list[c.ExtractedMemory], target: tuple[str, ...], consolidate: bool) -> Flow[Decided]:
        """Each candidate against the memories in `target` (asking the model only what the store cannot
        decide): (decisions, the current values of the memories they may change, candidates already known)."""
        unchanged = 0
        pending: list[c.ExtractedMemory] = []
        near: list[list[tuple[str, str]]] = []
        values: dict[str, dict[str, Any]] = {}
        for candidate in found:
            hits = yield from self._neighbours(candidate, target, consolidate)
            if hits is None:  # the same fact, already kept: decided without a model
                unchanged += 1
                continue
            values.update({h.key: h.value for h in hits})
            pending.append(candidate)
            near.append([(h.key, h.value["text"]) for h in hits])
        decided = yield from self._decisions(pending, near)
        unchanged += sum(1 for d in decided if d.action == "none")
        return decided, values, unchanged

    def _neighbours(
        self, candidate: c.ExtractedMemory, target: tuple[str, ...], consolidate: bool
    ) -> Flow[list[MemoryHit] | None]:
        """The memories in `target` related to `candidate` (none searched without `consolidate`), or None when
        it is already kept (under its own key, or word for word by a neighbour)."""
        if (
            yield from ask(CALLS.get_memory, self.owner, target, c.key_of(self.strategy.name, candidate.text))
        ) is not None:
            return None
        hits: list[MemoryHit] = []
        if consolidate:
            mode = "keyword" if self.meaning is None else "semantic"
            page = yield from ask(
                CALLS.search_memories, self.owner, target, query=candidate.text, limit=self.limits.neighbours, mode=mode
            )
            hits = [h for h in page.items if h.namespace == target and c.related(candidate, h, self.meaning)]
        return None if c.identical(candidate, [h.value for h in hits]) else hits

    def _decisions(self, pending: list[c.ExtractedMemory], near: list[list[tuple[str, str]]]) -> Flow[list[c.Decision]]:
        """`add` for each candidate with no neighbour; the model's decision for the others (one question)."""
        name = self.strategy.name
        decided = [c.Decision(x, "add", c.key_of(name, x.text), x.text) for x in pending]
        asking = [i for i, n in enumerate(near) if n]
        if asking:
            subset, shown = [pending[i] for i in asking], [near[i] for i in asking]
            request = c.question(subset, shown, self.limits.max_output_tokens)
            answered = yield from ask_with_retries(
                request, self.limits, self.tally, lambda d: c.decisions(name, subset, shown, d)
            )
            for i, d in zip(asking, answered, strict=True):
                decided[i] = d
        return decided

    def write(
        self, decided: list[c.Decision], values: dict[str, dict[str, Any]], target: tuple[str, ...], at: str
    ) -> Flow[list[MemoryChange]]:
        """Put what the decisions change, in order (two merges into one memory both land): the changes."""
        changes: list[MemoryChange] = []
        for d in decided:
            if d.action == "none":
                continue
            source = self.source(d.candidate.evidence, at)
            if d.action == "add":
                value = {**d.candidate.fields, "text": d.text, "strategy": self.strategy.name, "source": source}
                value["history"] = []
            else:
                value = c.updated(values[d.key], d.text, source, d.action, at)
            values[d.key] = value
            yield from ask(CALLS.put_memory, self.owner, target, d.key, value, index=["text"])
            changes.append(MemoryChange(namespace=target, key=d.key, action=d.action))
        return changes

    def summary(self, conversation: str, at: str) -> Flow[Outcome]:
        previous = yield from ask(CALLS.get_memory, self.owner, self.target, "summary")
        so_far = previous.value.get("text", "") if previous is not None else ""
        request = ModelRequest(
            self.strategy.instructions,
            f"<summary>\n{so_far}\n</summary>\n<conversation>\n{conversation}\n</conversation>",
            self.strategy.schema,
            "record_summary",
            self.limits.max_output_tokens,
        )
        text = yield from ask_with_retries(request, self.limits, self.tally, summary_text)
        source = self.source((), at)
        if previous is None:
            value: dict[str, Any] = {"text": text, "strategy": self.strategy.name, "source": source}
            value["history"] = []
        else:
            value = c.updated(previous.value, text, source, "rewrite", at)
        yield from ask(CALLS.put_memory, self.owner, self.target, "summary", value, index=["text"])
        return [MemoryChange(namespace=self.target, key="summary", action="rewrite")], 0

    def episode(self, conversation: str, at: str) -> Flow[Outcome]:
        request = ModelRequest(
            self.strategy.instructions,
            f"<conversation>\n{conversation}\n</conversation>",
            self.strategy.schema,
            "record_episode",
            self.limits.max_output_tokens,
        )
        value: dict[str, Any] = yield from ask_with_retries(request, self.limits, self.tally, episode_of)
        key = f"episode-{self.records[0].seq}-{self.records[-1].seq}"
        value.update(strategy=self.strategy.name, source=self.source((), at), history=[])
        changes = [MemoryChange(namespace=self.target, key=key, action="episode")]
        unchanged = 0
        if self.strategy.reflect:
            page = yield from ask(CALLS.search_memories, self.owner, self.target, query=value["text"], limit=4)
            earlier = [h.value["text"] for h in page.items if h.key != key and isinstance(h.value.get("text"), str)]
            episodes = "\n".join(f"- {t}" for t in [*earlier, value["text"]])
            request = ModelRequest(
                REFLECTION_INSTRUCTIONS,
                f"<episodes>\n{episodes}\n</episodes>",
                MEMORIES_SCHEMA,
                "record_lessons",
                self.limits.max_output_tokens,
            )
            found = yield from ask_with_retries(
                request, self.limits, self.tally, lambda d: candidates(d, set(), self.limits.max_memories)
            )
            reflections = m.namespace((*self.within, *self.strategy.reflections_target(self.owner, self.session_id)))
            decided, values, unchanged = yield from self.decide(found, reflections, True)
            yield from ask(CALLS.put_memory, self.owner, self.target, key, value, index=["text"])
            more = yield from self.write(decided, values, reflections, at)
            return changes + more, unchanged
        yield from ask(CALLS.put_memory, self.owner, self.target, key, value, index=["text"])
        return changes, unchanged


def perform(run: Run, conversation: str, trigger: str) -> Flow[ExtractionRun]:
    """`run` carried out over `conversation`: its record (a model's failure is the record's status, never
    raised; the store's errors are)."""
    started = yield from now()
    status: Status = "succeeded"
    error = None
    changes: list[MemoryChange] = []
    unchanged = 0
    if conversation.strip():  # only tool plumbing or system text: nothing to read, the range is done
        try:
            changes, unchanged = yield from run.flow(conversation, iso(started))
        except ModelError as failure:
            status = "refused" if failure.code == "refused" else "failed"
            error = failure.code
    finished = yield from now()
    return ExtractionRun(
        run_id=run.run_id,
        session_id=run.session_id,
        strategy=run.strategy.name,
        trigger=trigger,
        first_seq=run.records[0].seq,
        last_seq=run.records[-1].seq,
        status=status,
        error=error,
        model=run.tally["model"],
        model_calls=run.tally["model_calls"],
        attempts=run.tally["attempts"],
        input_tokens=run.tally["input_tokens"],
        output_tokens=run.tally["output_tokens"],
        changes=changes,
        unchanged=unchanged,
        started_at=started,
        finished_at=finished,
    )
