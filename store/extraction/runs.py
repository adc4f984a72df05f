"""An extraction run, written once for both fronts: a generator of steps (`Call` a store method, `Ask` the
model, `Sleep`), driven by `store.extraction.front` with a `SessionStore` or an `AsyncSessionStore`.

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

import hashlib
import json
import random
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

from store.conversation import canonical
from store.core import memories as m
from store.core.timeutil import iso
from store.extraction import consolidation as c
from store.extraction.limits import Limits
from store.extraction.models import ModelError, ModelOutputInvalid, ModelRefused, ModelReply, ModelRequest
from store.extraction.run_records import RUNS_KIND as RUNS_KIND
from store.extraction.run_records import digest_of, furthest_read
from store.extraction.strategies import MAX_TEXT, MEMORIES_SCHEMA, REFLECTION_INSTRUCTIONS, Strategy
from store.models import MessageRecord

RUNS_BYTES = 6000  # the JSON of the runs a session keeps (its newest; each strategy's newest always): ~15 runs
MAX_MESSAGE_CHARS = 4000  # of one message shown to the model

Status = Literal["succeeded", "failed", "refused"]
T = TypeVar("T")


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


@dataclass(frozen=True)
class Options:
    """What a call's runs share: the limits, what triggered them, the model's id, the least similarity that
    relates two memories (None: words only), and the store's strategies (when neither the call nor the owner
    names any)."""

    limits: Limits
    trigger: str
    model_id: str
    meaning: float | None = None
    fallback: tuple[str, ...] = ("facts", "preferences")


@dataclass(frozen=True)
class Call:
    """Call the store's public method `method` with these arguments; the step's answer is its result."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Ask:
    """Ask the model; the answer is a `ModelReply`, or a `ModelError` thrown in."""

    request: ModelRequest


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Now:
    """The store's clock; the answer is a datetime."""


Step = Call | Ask | Sleep | Now
Flow = Generator[Step, Any, Any]


def finished_up_to(runs: list[ExtractionRun], strategy: str) -> int:
    """The last seq a strategy is done with in a session (succeeded or refused runs), 0 before any."""
    mine = (run.model_dump(include={"session_id", "strategy", "status", "last_seq"}) for run in runs)
    return furthest_read(mine).get(strategy, ("", 0))[1]


def transcript(records: list[MessageRecord], max_chars: int) -> tuple[str, list[MessageRecord]]:
    """The messages as the model reads them ("[seq] role: text"), the first ones that fit in `max_chars` (at
    least one), and which those are. System messages and compaction summaries are left out of the text."""
    lines: list[str] = []
    used: list[MessageRecord] = []
    size = 0
    for record in records:
        view = canonical(record)
        words = []
        for part in view.parts:
            if part.type == "text" and part.text:
                words.append(part.text)
            elif part.type == "tool_call":
                words.append(f"(called the tool {part.name})")
            elif part.type == "tool_result" and part.content:
                words.append(f"(tool result: {part.content[:500]})")
        text = " ".join(words).strip()[:MAX_MESSAGE_CHARS]
        line = (
            f"[{record.seq}] {view.role}: {text}" if text and view.role != "system" and record.kind == "message" else ""
        )
        if used and size + len(line) > max_chars:
            break
        used.append(record)
        if line:
            lines.append(line)
            size += len(line) + 1
    return "\n".join(lines), used


def asked(request: ModelRequest, limits: Limits, tally: dict[str, Any], read: Callable[[dict[str, Any]], T]) -> Flow:
    """Ask `request` and `read` the answer (which raises ModelOutputInvalid for one it cannot use), retrying
    what may succeed the next time (see the module docstring); what `read` made of the answer, or the
    ModelError once out of attempts or budget. `tally` counts attempts, answers and tokens."""
    slept = 0.0
    for attempt in range(1, limits.max_attempts + 1):
        tally["attempts"] += 1
        try:
            reply: ModelReply = yield Ask(request)
        except ModelError as error:
            failure = error
            if isinstance(error, (ModelOutputInvalid, ModelRefused)):  # answered: its tokens were spent
                _count(tally, error.input_tokens, error.output_tokens)
        else:
            _count(tally, reply.input_tokens, reply.output_tokens)
            tally["model"] = reply.model_id or tally["model"]
            try:
                return read(reply.data)
            except ModelOutputInvalid as error:
                failure = error
        if not failure.transient or attempt == limits.max_attempts:
            raise failure
        if isinstance(failure, ModelOutputInvalid):
            continue  # asked again at once: a bad answer puts no load on the service to back off from
        pause = random.uniform(0.5, 1.0) * limits.backoff * 2 ** (attempt - 1)  # nosec B311: jitter
        if slept + pause > limits.max_backoff:
            raise failure
        slept += pause
        yield Sleep(pause)
    raise AssertionError("unreachable")  # pragma: no cover


def _count(tally: dict[str, Any], input_tokens: int, output_tokens: int) -> None:
    tally["model_calls"] += 1
    tally["input_tokens"] += input_tokens
    tally["output_tokens"] += output_tokens


def candidates(data: dict[str, Any], seqs: set[int], limit: int) -> list[c.Candidate]:
    """The memories of an answer of MEMORIES_SCHEMA's shape (a custom schema's other fields kept): at most
    `limit`, evidence kept to the seqs shown. An answer of another shape is ModelOutputInvalid."""
    given = data.get("memories")
    if not isinstance(given, list) or not all(isinstance(x, dict) for x in given):
        raise ModelOutputInvalid("the answer holds no list of memories")
    out: list[c.Candidate] = []
    for item in given[:limit]:
        text = item.get("text")
        if not isinstance(text, str) or len(text) > MAX_TEXT:
            raise ModelOutputInvalid("a memory's text is missing or too long")
        if not text.strip() or any(c.normalised(text) == c.normalised(o.text) for o in out):
            continue
        evidence = item.get("evidence") if isinstance(item.get("evidence"), list) else []
        kept = tuple(sorted({e for e in evidence if isinstance(e, int) and not isinstance(e, bool) and e in seqs}))
        extra = {k: v for k, v in item.items() if k not in ("text", "evidence")}
        out.append(c.Candidate(text.strip(), kept, extra))
    return out


def summary_text(data: dict[str, Any]) -> str:
    """The summary of an answer of SUMMARY_SCHEMA's shape."""
    text = data.get("summary")
    if not isinstance(text, str) or not text.strip() or len(text) > 4 * MAX_TEXT:
        raise ModelOutputInvalid("the answer holds no summary")
    return text.strip()


EPISODE_FIELDS = ("goal", "actions", "outcome", "text")


def episode_of(data: dict[str, Any]) -> dict[str, Any]:
    """The episode of an answer of EPISODE_SCHEMA's shape, as a memory's fields."""
    episode = data.get("episode")
    if not isinstance(episode, dict) or not all(isinstance(episode.get(f), str) for f in EPISODE_FIELDS):
        raise ModelOutputInvalid("the answer holds no episode")
    if not episode["text"].strip() or any(len(episode[f]) > MAX_TEXT for f in EPISODE_FIELDS):
        raise ModelOutputInvalid("the episode's text is empty or too long")
    return {f: episode[f].strip() for f in EPISODE_FIELDS}


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

    def flow(self, conversation: str, at: str) -> Flow:
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
        found = yield from asked(
            request, self.limits, self.tally, lambda d: candidates(d, self.seqs, self.limits.max_memories)
        )
        decided, values, unchanged = yield from self.decide(found, self.target, self.strategy.consolidate)
        changes = yield from self.write(decided, values, self.target, at)
        return changes, unchanged

    def decide(self, found: list[c.Candidate], target: tuple[str, ...], consolidate: bool) -> Flow:
        """Each candidate against the memories in `target` (asking the model only what the store cannot
        decide): (decisions, the current values of the memories they may change, candidates already known)."""
        name = self.strategy.name
        unchanged = 0
        pending: list[c.Candidate] = []
        near: list[list[tuple[str, str]]] = []
        values: dict[str, dict[str, Any]] = {}
        for candidate in found:
            if (yield Call("get_memory", (self.owner, target, c.key_of(name, candidate.text)))) is not None:
                unchanged += 1  # the same fact, already kept: decided without a model
                continue
            hits = []
            if consolidate:
                mode = "keyword" if self.meaning is None else "semantic"
                page = yield Call(
                    "search_memories",
                    (self.owner, target),
                    {"query": candidate.text, "limit": self.limits.neighbours, "mode": mode},
                )
                hits = [h for h in page.items if h.namespace == target and c.related(candidate, h, self.meaning)]
            if c.identical(candidate, [h.value for h in hits]):
                unchanged += 1
                continue
            values.update({h.key: h.value for h in hits})
            pending.append(candidate)
            near.append([(h.key, h.value["text"]) for h in hits])
        asking = [i for i, n in enumerate(near) if n]
        decided = [c.Decision(x, "add", c.key_of(name, x.text), x.text) for x in pending]
        if asking:
            subset = [pending[i] for i in asking]
            request = c.question(subset, [near[i] for i in asking], self.limits.max_output_tokens)
            shown = [near[i] for i in asking]
            answered = yield from asked(request, self.limits, self.tally, lambda d: c.decisions(name, subset, shown, d))
            for i, d in zip(asking, answered, strict=True):
                decided[i] = d
        unchanged += sum(1 for d in decided if d.action == "none")
        return decided, values, unchanged

    def write(
        self, decided: list[c.Decision], values: dict[str, dict[str, Any]], target: tuple[str, ...], at: str
    ) -> Flow:
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
            yield Call("put_memory", (self.owner, target, d.key, value), {"index": ["text"]})
            changes.append(MemoryChange(namespace=target, key=d.key, action=d.action))
        return changes

    def summary(self, conversation: str, at: str) -> Flow:
        previous = yield Call("get_memory", (self.owner, self.target, "summary"))
        so_far = previous.value.get("text", "") if previous is not None else ""
        request = ModelRequest(
            self.strategy.instructions,
            f"<summary>\n{so_far}\n</summary>\n<conversation>\n{conversation}\n</conversation>",
            self.strategy.schema,
            "record_summary",
            self.limits.max_output_tokens,
        )
        text = yield from asked(request, self.limits, self.tally, summary_text)
        source = self.source((), at)
        if previous is None:
            value: dict[str, Any] = {"text": text, "strategy": self.strategy.name, "source": source}
            value["history"] = []
        else:
            value = c.updated(previous.value, text, source, "rewrite", at)
        yield Call("put_memory", (self.owner, self.target, "summary", value), {"index": ["text"]})
        return [MemoryChange(namespace=self.target, key="summary", action="rewrite")], 0

    def episode(self, conversation: str, at: str) -> Flow:
        request = ModelRequest(
            self.strategy.instructions,
            f"<conversation>\n{conversation}\n</conversation>",
            self.strategy.schema,
            "record_episode",
            self.limits.max_output_tokens,
        )
        value: dict[str, Any] = yield from asked(request, self.limits, self.tally, episode_of)
        key = f"episode-{self.records[0].seq}-{self.records[-1].seq}"
        value.update(strategy=self.strategy.name, source=self.source((), at), history=[])
        changes = [MemoryChange(namespace=self.target, key=key, action="episode")]
        unchanged = 0
        if self.strategy.reflect:
            page = yield Call("search_memories", (self.owner, self.target), {"query": value["text"], "limit": 4})
            earlier = [h.value["text"] for h in page.items if h.key != key and isinstance(h.value.get("text"), str)]
            episodes = "\n".join(f"- {t}" for t in [*earlier, value["text"]])
            request = ModelRequest(
                REFLECTION_INSTRUCTIONS,
                f"<episodes>\n{episodes}\n</episodes>",
                MEMORIES_SCHEMA,
                "record_lessons",
                self.limits.max_output_tokens,
            )
            found = yield from asked(
                request, self.limits, self.tally, lambda d: candidates(d, set(), self.limits.max_memories)
            )
            reflections = m.namespace((*self.within, *self.strategy.reflections_target(self.owner, self.session_id)))
            decided, values, unchanged = yield from self.decide(found, reflections, True)
            yield Call("put_memory", (self.owner, self.target, key, value), {"index": ["text"]})
            more = yield from self.write(decided, values, reflections, at)
            return changes + more, unchanged
        yield Call("put_memory", (self.owner, self.target, key, value), {"index": ["text"]})
        return changes, unchanged


def stored_runs(records: list[Any]) -> list[ExtractionRun]:
    """The session's run records (one that does not read as a run, written by something else, is left out)."""
    out = []
    for record in records:
        try:
            out.append(ExtractionRun.model_validate(record))
        except ValueError:
            continue
    return out


def extraction(session_id: str, owner: str | None, chosen: tuple[Strategy, ...] | None, options: Options) -> Flow:
    """Run each strategy once over the session's messages it has not done yet (a strategy with none is left
    out): the runs, new or (for a range already done) the earlier record. SessionNotFound for a session that
    does not exist or is another owner's."""
    from store.errors import SessionNotFound

    session = yield Call("get_session", (session_id,), {"owner": owner})
    if session is None:
        raise SessionNotFound(session_id)
    picked = yield from owners_strategies(session.owner, chosen, options.fallback, options.trigger)
    limits = options.limits
    runs = stored_runs((yield Call("load_records", (session_id, RUNS_KIND), {"owner": owner})))
    out: list[ExtractionRun] = []
    fresh = False
    for strategy in picked:
        after = finished_up_to(runs, strategy.name)
        page = yield Call(
            "list_messages", (session_id,), {"after_seq": after, "limit": limits.max_messages, "owner": owner}
        )
        if not page.items:
            continue
        conversation, used = transcript(page.items, limits.max_prompt_chars)
        run = Run(session.owner, session_id, strategy, used, limits, options.model_id, meaning=options.meaning)
        done = next((r for r in runs if r.run_id == run.run_id and r.status == "succeeded"), None)
        if done is not None:
            out.append(done)
            continue
        record = yield from performed(run, conversation, options.trigger)
        runs = [*(r for r in runs if r.run_id != record.run_id), record]
        out.append(record)
        fresh = True
    if fresh:  # one write for the call's new runs
        yield Call("save_records", (session_id, RUNS_KIND, kept(runs)), {"owner": owner})
    return out


def kept(runs: list[ExtractionRun]) -> list[dict[str, Any]]:
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


def performed(run: Run, conversation: str, trigger: str) -> Flow:
    """`run` carried out over `conversation`: its record (a model's failure is the record's status, never
    raised; the store's errors are)."""
    started: datetime = yield Now()
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
    finished: datetime = yield Now()
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


def as_records(messages: list[Any], source: str, numbers: list[int] | None, now: datetime) -> list[MessageRecord]:
    """A framework's messages (dicts of its own shape, read as canonical messages) as records numbered by
    `numbers` (1, 2, 3, ... when None); one that is not a message is InvalidInput."""
    from store.errors import InvalidInput

    out = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise InvalidInput("each message must be a dict with a role")
        seq = numbers[i] if numbers is not None else i + 1
        fields = {k: v for k, v in message.items() if k not in ("id", "seq", "session_id", "created_at", "kind")}
        try:
            out.append(MessageRecord(**fields, id=f"m{seq}", seq=seq, session_id=source, created_at=now))
        except ValueError:
            raise InvalidInput("a message could not be read (its role must be a short string)") from None
    return out


CHECKPOINT_SCOPE = "workflow"  # where a batch's runs are remembered (no session holds them)


def message_extraction(
    owner: str,
    messages: list[Any],
    source: str,
    within: tuple[str, ...],
    numbers: list[int] | None,
    chosen: tuple[Strategy, ...] | None,
    options: Options,
) -> Flow:
    """Each strategy over a framework's batch of messages (no session of the store's: Strands' `add_messages`,
    ADK's events), its memories under `within` (the framework's namespace): the runs. A batch handed again
    (the same source, strategy and text) is found done in a checkpoint kept for `idempotency_ttl`, and writes
    nothing; one longer than a run takes is read in several runs."""
    picked = yield from owners_strategies(owner, chosen, options.fallback, options.trigger)
    limits = options.limits
    now: datetime = yield Now()
    records = as_records(messages, source, numbers, now)
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
                done = yield Call("load_checkpoint", (CHECKPOINT_SCOPE, key))
                if done is not None:
                    kept = stored_runs([done.data])
                    if kept and kept[0].status == "succeeded":
                        out.append(kept[0])
                        continue
                made = yield from performed(run, conversation, options.trigger)
                yield Call("save_checkpoint", (CHECKPOINT_SCOPE, key, made.model_dump(mode="json")))
                out.append(made)
    return out


def owners_strategies(owner: str, chosen: tuple[Strategy, ...] | None, fallback: tuple[str, ...], trigger: str) -> Flow:
    """The strategies a run uses: the call's, else the owner's choice (`set_extraction`), else `fallback` (the
    store's); none when the owner switched extraction off (a run asked for on demand is then refused)."""
    from store.errors import InvalidInput
    from store.extraction.strategies import strategies

    choice = yield Call("get_extraction", (owner,))
    if not choice.enabled:
        if trigger == "on_demand":
            raise InvalidInput("memory extraction is switched off for this owner (set_extraction)")
        return ()
    if chosen is not None:
        return chosen
    return strategies(list(choice.strategies or fallback))
