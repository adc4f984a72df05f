"""The Strands adapter, driven by Strands' own Agent and RepositorySessionManager with a scripted model
(every backend)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from strands import Agent
from strands.session import RepositorySessionManager
from strands.types.exceptions import SessionException
from strands.types.session import Session, SessionAgent, SessionMessage, SessionType

from bench.strands_models import ScriptModel
from store.core.scoped_ids import scoped_id
from store.integrations.strands import (
    SessionStoreStorage,
    StrandsSessionRepository,
    agent_store_id,
    session_manager,
    session_store_id,
)
from tests.conftest import Backend, Harness


class ScriptedModel(ScriptModel):
    """Streams the next scripted reply and records the messages it was given."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.seen: list[list[dict[str, Any]]] = []

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        self.seen.append([dict(m) for m in messages])
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockDelta": {"delta": {"text": self.replies.pop(0)}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


def texts(messages: list[Any]) -> list[tuple[str, str]]:
    return [(m["role"], "".join(block.get("text", "") for block in m["content"])) for m in messages]


def test_a_new_agent_resumes_the_conversation(harness: Harness) -> None:
    first_model = ScriptedModel(["Hello Ada.", "Lisbon in May."])
    manager = RepositorySessionManager(
        session_id="trip-1", session_repository=StrandsSessionRepository(harness.store, owner="ada")
    )
    agent = Agent(model=first_model, session_manager=manager, callback_handler=None, agent_id="planner")
    agent("Hi, I am Ada.")
    agent.state.set("destination", "Lisbon")
    agent("Where should I go?")

    # another process: a new store object, repository, manager and agent with the same session id
    second_model = ScriptedModel(["You are Ada."])
    resumed = Agent(
        model=second_model,
        session_manager=session_manager("trip-1", harness.twin(), owner="ada"),
        callback_handler=None,
        agent_id="planner",
    )
    assert texts(resumed.messages) == texts(agent.messages)
    assert texts(resumed.messages) == [
        ("user", "Hi, I am Ada."),
        ("assistant", "Hello Ada."),
        ("user", "Where should I go?"),
        ("assistant", "Lisbon in May."),
    ]
    assert resumed.state.get("destination") == "Lisbon"
    resumed("What is my name?")
    assert texts(second_model.seen[0])[-1] == ("user", "What is my name?")
    assert len(second_model.seen[0]) == 5  # the whole conversation went to the model
    # one store message per Strands message, in the agent's own session
    records = harness.store.list_messages(agent_store_id("ada", "trip-1", "planner"), owner="ada").items
    assert [r.role for r in records] == ["user", "assistant"] * 3
    assert harness.store.get_session(scoped_id("ada", "trip-1")).metadata["framework"] == "strands"


def test_repository_contract(harness: Harness) -> None:
    repo = StrandsSessionRepository(harness.store, owner="bob")
    assert repo.read_session("s-1") is None
    repo.create_session(Session(session_id="s-1", session_type=SessionType.AGENT))
    assert repo.read_session("s-1").session_type == SessionType.AGENT
    with pytest.raises(SessionException):
        repo.create_session(Session(session_id="s-1", session_type=SessionType.AGENT))

    assert repo.read_agent("s-1", "a") is None
    repo.create_agent("s-1", SessionAgent(agent_id="a", state={"k": 1}, conversation_manager_state={}))
    created = repo.read_agent("s-1", "a")
    assert created.state == {"k": 1}
    repo.update_agent("s-1", SessionAgent(agent_id="a", state={"k": 2}, conversation_manager_state={"x": 1}))
    updated = repo.read_agent("s-1", "a")
    assert updated.state == {"k": 2} and updated.created_at == created.created_at
    with pytest.raises(SessionException):
        repo.update_agent("s-1", SessionAgent(agent_id="ghost", state={}, conversation_manager_state={}))

    image = {"image": {"format": "png", "source": {"bytes": b"\x89PNG\x00\xff"}}}
    sent = []
    for i in range(5):
        content: list[Any] = [{"text": f"m{i}"}] + ([image] if i == 2 else [])
        sent.append(SessionMessage({"role": "user", "content": content}, i))
        repo.create_message("s-1", "a", sent[-1])
    # a retried create (its response lost) is stored once; a message out of order is refused
    repo.create_message("s-1", "a", sent[4])
    with pytest.raises(SessionException):
        repo.create_message("s-1", "a", SessionMessage({"role": "user", "content": [{"text": "gap"}]}, 9))
    listed = repo.list_messages("s-1", "a")
    assert [m.message_id for m in listed] == [0, 1, 2, 3, 4]
    assert listed[2].message["content"][1]["image"]["source"]["bytes"] == b"\x89PNG\x00\xff"  # bytes survive
    assert [m.message_id for m in repo.list_messages("s-1", "a", limit=2, offset=1)] == [1, 2]
    assert repo.read_message("s-1", "a", 3).message["content"] == [{"text": "m3"}]
    assert repo.read_message("s-1", "a", 7) is None

    redacted = SessionMessage({"role": "user", "content": [{"text": "m1"}]}, 1)
    redacted.redact_message = {"role": "user", "content": [{"text": "[redacted]"}]}
    repo.update_message("s-1", "a", redacted)
    assert repo.read_message("s-1", "a", 1).to_message()["content"] == [{"text": "[redacted]"}]
    assert repo.list_messages("s-1", "a")[1].redact_message is not None
    with pytest.raises(SessionException):
        repo.update_message("s-1", "a", SessionMessage({"role": "user", "content": []}, 42))

    class Orchestrator:
        id = "graph-1"

        def __init__(self, state: dict[str, Any]) -> None:
            self.state = state

        def serialize_state(self) -> dict[str, Any]:
            return self.state

    assert repo.read_multi_agent("s-1", "graph-1") is None
    with pytest.raises(SessionException):
        repo.update_multi_agent("s-1", Orchestrator({}))  # type: ignore[arg-type]
    repo.create_multi_agent("s-1", Orchestrator({"status": "running", "node": "a"}))  # type: ignore[arg-type]
    repo.update_multi_agent("s-1", Orchestrator({"status": "done"}))  # type: ignore[arg-type]
    assert repo.read_multi_agent("s-1", "graph-1") == {"status": "done"}

    # another owner sees nothing; deleting the session removes its agents' sessions too
    assert StrandsSessionRepository(harness.store, owner="mallory").read_session("s-1") is None
    repo.delete_session("s-1")
    assert repo.read_session("s-1") is None
    assert repo.read_agent("s-1", "a") is None
    assert harness.store.get_session(agent_store_id("bob", "s-1", "a")) is None


def test_ids_that_are_not_store_ids_are_mapped_stably(harness: Harness) -> None:
    repo = StrandsSessionRepository(harness.store)
    odd = "user@example.com/chat #1 " + "x" * 200
    repo.create_session(Session(session_id=odd, session_type=SessionType.AGENT))
    repo.create_agent(odd, SessionAgent(agent_id="agent with spaces", state={}, conversation_manager_state={}))
    repo.create_message(odd, "agent with spaces", SessionMessage({"role": "user", "content": [{"text": "hi"}]}, 0))
    assert repo.read_session(odd).session_id == odd
    assert [m.message["content"] for m in repo.list_messages(odd, "agent with spaces")] == [[{"text": "hi"}]]


# ---------------------------------------------------------------- the unified Storage contract


def test_storage_through_the_snapshot_session_manager(backend: Backend) -> None:
    """Strands' SnapshotSessionManager on the store's Storage, with an Agent: a new agent resumes the
    conversation, immutable snapshots are listed, an earlier one is restored; deleting the session leaves
    nothing (on moto's server: the manager deletes keys concurrently)."""
    import asyncio

    from strands.session import SnapshotSessionManager

    store = backend.make()
    # the async store's clients live on the backend's loop; the manager calls storage from loops of its own
    storage = SessionStoreStorage(store, owner="ada", loop=backend.loop.loop if backend.loop else None)
    run = asyncio.run

    def manager() -> Any:
        return SnapshotSessionManager("trip-9", storage=storage, snapshot_trigger=lambda **_: True)

    agent = Agent(model=ScriptedModel(["Hello Ada.", "Lisbon."]), session_manager=manager(), callback_handler=None)
    agent("I am Ada.")
    agent("Where to?")
    resumed = Agent(model=ScriptedModel([]), session_manager=manager(), callback_handler=None)
    assert texts(resumed.messages) == [
        ("user", "I am Ada."),
        ("assistant", "Hello Ada."),
        ("user", "Where to?"),
        ("assistant", "Lisbon."),
    ]
    snapshots = run(resumed._session_manager.list_snapshot_ids(resumed))
    assert len(snapshots) == 2 and snapshots == sorted(snapshots)
    assert run(resumed._session_manager.restore_snapshot(resumed, snapshot_id=snapshots[0]))
    assert texts(resumed.messages) == [("user", "I am Ada."), ("assistant", "Hello Ada.")]
    # the snapshots are artifacts of the Strands session's own store session (in ada's namespace)
    sid = session_store_id("ada", "trip-9")
    names = [a.name for a in backend.call(store, "list_artifacts", sid, owner="ada")]
    assert "scopes/agent/default/snapshots/snapshot_latest.json" in names and len(names) == 3
    run(resumed._session_manager.delete_session())
    assert backend.call(store, "get_session", sid, owner="ada") is None
    assert run(storage.list("")) == []


def test_storage_keys_and_errors(backend: Backend) -> None:
    import asyncio

    from strands.types.exceptions import StorageError

    store = backend.make()
    home = backend.loop.loop if backend.loop else None
    storage = SessionStoreStorage(store, owner="ada", loop=home)
    other = SessionStoreStorage(store, owner="bob", loop=home)
    run = asyncio.run  # a loop of the test's own: calls reach the async store's loop through `loop`
    run(storage.write("session/s1/a//b.json", b"one"))
    run(storage.write("session/s1/a/b.json", b"two"))  # the same key: a new version
    run(storage.write("memory/facts.json", b"shared"))
    assert run(storage.read("session/s1/a/b.json")) == b"two" and run(storage.read("/memory/facts.json/")) == b"shared"
    assert run(storage.list("")) == ["memory/facts.json", "session/s1/a/b.json"]
    assert run(storage.list("session/s1/")) == ["session/s1/a/b.json"]
    assert run(other.read("session/s1/a/b.json")) is None and run(other.list("")) == []
    versions = backend.call(store, "list_artifact_versions", session_store_id("ada", "s1"), "a/b.json", owner="ada")
    assert [v.version for v in versions] == [1, 2]
    for bad in ("", "../x", "a\\b", "session/s1/../../x"):
        with pytest.raises(StorageError):
            run(storage.write(bad, b"x"))
    assert run(storage.read("session/s1/missing")) is None
    run(storage.delete("session/s1/missing"))  # a no-op
    hits = run(storage.search("facts"))
    assert [h.key for h in hits] == ["memory/facts.json"]


def test_storage_keys_expire_with_the_retention(backend: Backend) -> None:
    """A storage session made with `retention` expires then (and its keys with it); one without does not."""
    import asyncio
    from datetime import timedelta

    store = backend.make()
    home = backend.loop.loop if backend.loop else None
    asyncio.run(
        SessionStoreStorage(store, owner="ada", retention=timedelta(days=2), loop=home).write("session/t/k", b"x")
    )
    asyncio.run(SessionStoreStorage(store, owner="ada", loop=home).write("session/u/k", b"y"))
    kept = backend.call(store, "get_session", session_store_id("ada", "t"), owner="ada")
    forever = backend.call(store, "get_session", session_store_id("ada", "u"), owner="ada")
    assert kept.expires_at is not None and timedelta(days=2) <= kept.expires_at - kept.created_at < timedelta(
        days=2, seconds=2
    )
    assert forever.expires_at is None


# ---------------------------------------------------------------- against Strands' own FileSessionManager


def _repository_script(repo: Any) -> list[Any]:
    """The SessionRepository calls Strands makes, with given times and tracking ids, and what came back."""

    def message(i: int, text: str, **extra: Any) -> SessionMessage:
        body: Any = {"role": "user" if i % 2 == 0 else "assistant", "content": [{"text": text}], **extra}
        return SessionMessage(body, i, created_at=f"2026-01-0{i + 1}T00:00:00+00:00", updated_at="2026-02-01T00:00:00")

    seen: list[Any] = []
    given = Session("s-9", SessionType.AGENT, created_at="2025-12-24T10:00:00+00:00", updated_at="2025-12-25T11:00:00")
    seen.append(repo.create_session(given).to_dict())
    seen.append(repo.read_session("s-9").to_dict())
    agent = SessionAgent("a", {"k": 1}, {}, created_at="2025-12-24T10:00:01", updated_at="2025-12-24T10:00:02")
    repo.create_agent("s-9", agent)
    seen.append(repo.read_agent("s-9", "a").to_dict())
    later = SessionAgent("a", {"k": 2}, {"removed": 1}, created_at="2030-01-01T00:00:00", updated_at="2026-03-01")
    repo.update_agent("s-9", later)
    seen.append(repo.read_agent("s-9", "a").to_dict())
    for i in range(4):
        repo.create_message("s-9", "a", message(i, f"m{i}", tracking_id=f"track-{i}"))
    seen.append([m.to_dict() for m in repo.list_messages("s-9", "a")])
    seen.append([m.to_dict() for m in repo.list_messages("s-9", "a", limit=2, offset=1)])
    seen.append(repo.read_message("s-9", "a", 2).to_dict())
    seen.append(repo.read_message("s-9", "a", 9))
    redacted = message(1, "m1", tracking_id="track-1")
    redacted.redact_message = {"role": "assistant", "content": [{"text": "[redacted]"}]}
    redacted.created_at, redacted.updated_at = "2031-01-01T00:00:00", "2026-04-01T00:00:00+00:00"
    repo.update_message("s-9", "a", redacted)
    seen.append(repo.read_message("s-9", "a", 1).to_dict())
    failing: list[Callable[[], Any]] = [
        lambda: repo.create_session(Session("s-9", SessionType.AGENT)),
        lambda: repo.update_agent("s-9", SessionAgent("ghost", {}, {})),
        lambda: repo.update_message("s-9", "a", SessionMessage({"role": "user", "content": []}, 42)),
        lambda: repo.delete_session("never-made"),
    ]
    for fails in failing:
        with pytest.raises(SessionException):
            fails()
        seen.append("SessionException")
    repo.delete_session("s-9")
    seen += [repo.read_session("s-9"), repo.read_agent("s-9", "a")]
    with pytest.raises(SessionException):
        repo.delete_session("s-9")  # deleting it again: it does not exist
    return seen


def test_behaves_as_strands_file_session_manager(harness: Harness, tmp_path: Any) -> None:
    from strands.session import FileSessionManager

    reference = _repository_script(FileSessionManager("probe", storage_dir=str(tmp_path)))
    ours = _repository_script(StrandsSessionRepository(harness.store, owner="ada"))
    assert ours == reference
    assert reference[4][3]["message"]["tracking_id"] == "track-3"  # the script checks what it means to
    assert reference[1]["created_at"] == "2025-12-24T10:00:00+00:00"


def test_tracking_ids_survive_a_resumed_agent(harness: Harness) -> None:
    agent = Agent(
        model=ScriptedModel(["Hello."]), session_manager=session_manager("t-1", harness.store), callback_handler=None
    )
    agent("Hi")
    tracked = [m.get("tracking_id") for m in agent.messages]
    assert len(tracked) == 2 and all(tracked)
    resumed = Agent(
        model=ScriptedModel([]), session_manager=session_manager("t-1", harness.twin()), callback_handler=None
    )
    assert [m.get("tracking_id") for m in resumed.messages] == tracked


# ---------------------------------------------------------------- a turn in one transaction


def test_a_batched_turn_is_one_transaction_and_resumes(dyn: Harness) -> None:
    assert dyn.requests is not None
    manager = session_manager("b-1", dyn.store, owner="ada", flush_every=16)
    agent = Agent(model=ScriptedModel(["Hello Ada.", "Lisbon."]), session_manager=manager, callback_handler=None)
    agent("I am Ada.")
    agent.state.set("city", "Lisbon")
    dyn.requests.clear()
    agent("Where to?")
    assert dyn.requests.names == ["TransactWriteItems"]  # two messages and the agent's state, together
    resumed = Agent(
        model=ScriptedModel([]), session_manager=session_manager("b-1", dyn.twin(), owner="ada"), callback_handler=None
    )
    assert texts(resumed.messages) == texts(agent.messages) and len(resumed.messages) == 4
    assert resumed.state.get("city") == "Lisbon"
    assert [m.get("tracking_id") for m in resumed.messages] == [m.get("tracking_id") for m in agent.messages]


@pytest.mark.parametrize("durability", ["turn", "message"])
def test_the_default_writes_a_turn_at_once_and_any_agent_resumes_in_two_requests(dyn: Harness, durability: str) -> None:
    from strands.agent.conversation_manager import SlidingWindowConversationManager

    assert dyn.requests is not None
    extra: dict[str, Any] = {} if durability == "turn" else {"durability": durability}
    window = SlidingWindowConversationManager(window_size=4)
    agent = Agent(
        model=ScriptedModel([f"answer {i}" for i in range(5)]),
        session_manager=session_manager("r-1", dyn.store, owner="ada", **extra),
        conversation_manager=window,
        callback_handler=None,
    )
    for i in range(4):
        agent(f"question {i}")
    dyn.requests.clear()
    agent("question 4")
    if durability == "turn":  # the default: the turn's two messages and the agent's record in one transaction
        assert dyn.requests.names == ["TransactWriteItems"]
    else:
        assert dyn.requests.count("TransactWriteItems") >= 3
    removed = window.removed_message_count
    assert removed >= 6  # the window has trimmed: a resume starts after what it removed
    dyn.requests.clear()
    resumed = Agent(
        model=ScriptedModel([]),
        session_manager=session_manager("r-1", dyn.twin(), owner="ada", **extra),
        conversation_manager=SlidingWindowConversationManager(window_size=4),
        callback_handler=None,
    )
    # the head and state in one request, the window's messages in one Query
    assert dyn.requests.names == ["TransactGetItems", "Query"]
    assert texts(resumed.messages) == texts(agent.messages)
    full = dyn.store.list_messages(scoped_id("ada", "r-1"), owner="ada").items
    assert len(full) == 10 and [m.seq for m in full] == list(range(1, 11))  # nothing lost to the window
    if durability == "turn":  # what the resume read serves the first turn's write too: no read before it
        resumed.model = ScriptedModel(["answer 5"])
        dyn.requests.clear()
        resumed("question 5")
        assert dyn.requests.names == ["TransactWriteItems"]


def test_a_turn_that_raises_is_still_written_when_its_invocation_ends(dyn: Harness) -> None:
    class Crash(Exception):
        pass

    class CrashingModel(ScriptedModel):
        async def stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            raise Crash()
            yield {}  # pragma: no cover  (an async generator)

    agent = Agent(
        model=ScriptedModel(["first answer"]),
        session_manager=session_manager("crash-1", dyn.store, owner="ada"),
        callback_handler=None,
    )
    agent("first question")
    reader = dyn.twin()
    assert len(reader.list_messages(scoped_id("ada", "crash-1"), owner="ada").items) == 2
    crashing = Agent(
        model=CrashingModel([]),
        session_manager=session_manager("crash-1", dyn.store, owner="ada"),
        callback_handler=None,
    )
    with pytest.raises(Crash):
        crashing("second question")
    resumed = Agent(
        model=ScriptedModel([]), session_manager=session_manager("crash-1", reader, owner="ada"), callback_handler=None
    )
    # a turn that raised still ends its invocation in Strands: what it made (the question) is written then, as
    # Strands' snapshot manager saves it; only a process that dies mid-turn loses the turn (held in memory)
    assert texts(resumed.messages) == [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question"),
    ]


def test_held_messages_are_read_back_flushed_every_n_and_lost_only_if_never_flushed(harness: Harness) -> None:
    from store.integrations.strands_batching import BatchedStrandsSessionRepository

    repo = BatchedStrandsSessionRepository(harness.store, owner="ada", flush_every=3)
    plain = StrandsSessionRepository(harness.twin(), owner="ada")  # another process reading
    repo.create_session(Session(session_id="h", session_type=SessionType.AGENT))
    repo.create_agent("h", SessionAgent(agent_id="a", state={"n": 0}, conversation_manager_state={}))

    def message(i: int) -> SessionMessage:
        return SessionMessage({"role": "user", "content": [{"text": f"m{i}"}]}, i)

    for i in range(2):
        repo.create_message("h", "a", message(i))
    repo.update_agent("h", SessionAgent(agent_id="a", state={"n": 2}, conversation_manager_state={}))
    assert [m.message_id for m in repo.list_messages("h", "a")] == [0, 1]  # held, read back
    assert repo.read_agent("h", "a").state == {"n": 2}
    assert plain.list_messages("h", "a") == [] and plain.read_agent("h", "a").state == {"n": 0}
    redacted = message(1)
    redacted.redact_message = {"role": "user", "content": [{"text": "[gone]"}]}
    repo.update_message("h", "a", redacted)  # a held message is redacted in place
    repo.create_message("h", "a", message(2))  # the third: written
    assert [m.to_message()["content"][0]["text"] for m in plain.list_messages("h", "a")] == ["m0", "[gone]", "m2"]
    assert plain.read_agent("h", "a").state == {"n": 2}
    with pytest.raises(SessionException):
        repo.create_message("h", "a", message(7))  # not the next message: nothing is held
    repo.create_message("h", "a", message(3))
    # the process dies before the flush: message 3 is lost, nothing else; a new writer goes on from 3
    fresh = BatchedStrandsSessionRepository(harness.twin(), owner="ada", flush_every=3)
    assert [m.message_id for m in fresh.list_messages("h", "a")] == [0, 1, 2]
    fresh.create_message("h", "a", message(3))
    fresh.flush()
    # the first writer's held message 3 now conflicts: refused, and nothing of it is written
    with pytest.raises(SessionException, match="moved meanwhile"):
        repo.flush()
    assert [m.message["content"] for m in plain.list_messages("h", "a")][3] == [{"text": "m3"}]
    assert len(plain.list_messages("h", "a")) == 4
    for bad in (0, 98, True, "4"):
        with pytest.raises(ValueError):
            BatchedStrandsSessionRepository(harness.store, flush_every=bad)  # type: ignore[arg-type]


def test_a_storage_namespace_behaves_as_strands_own(backend: Backend) -> None:
    """`namespace(prefix)` as Strands' `InMemoryStorage` gives it: keys relative to the prefix, nested
    views, list and search seeing only the view's keys and scoring them without the prefix; a key under
    `session/<id>/` still lives in that Strands session (deleted with it)."""
    import asyncio

    from strands.storage import InMemoryStorage
    from strands.storage.storage import _resolve_namespace

    store = backend.make()
    home = backend.loop.loop if backend.loop else None
    ours = SessionStoreStorage(store, owner="ada", loop=home)

    async def script(storage: Any) -> list[Any]:
        sessions = storage.namespace("session")
        one = sessions.namespace("s1")
        await one.write("notes/plan.md", b"lisbon weather plan")
        await one.write("snapshot.json", b"{}")
        await sessions.write("s2/notes/other.md", b"porto")
        await storage.write("memory/session-facts.md", b"session words")
        seen: list[Any] = [await one.list(), await one.list("notes"), await sessions.list(), await storage.list()]
        seen.append(await one.read("notes/plan.md"))
        seen.append(await storage.read("session/s1/notes/plan.md"))
        seen.append([(h.key, round(h.score, 6)) for h in await one.search("plan")])
        seen.append([h.key for h in await sessions.search("session")])  # the prefix's word matches nothing
        seen.append(_resolve_namespace(one, "x") is one)
        await one.delete("snapshot.json")
        seen.append(await one.list())
        return seen

    reference = asyncio.run(script(InMemoryStorage()))
    assert asyncio.run(script(ours)) == reference
    assert reference[0] == ["notes/plan.md", "snapshot.json"]
    # the namespaced keys of s1 are artifacts of the Strands session s1: its deletion takes them
    sid = session_store_id("ada", "s1")
    assert [a.name for a in backend.call(store, "list_artifacts", sid, owner="ada")] == ["notes/plan.md"]
    backend.call(store, "delete_session", sid, owner="ada")
    assert asyncio.run(ours.namespace("session/s1").list()) == []


def test_the_storage_module_imports_first() -> None:
    """`store.integrations.strands_storage` imports on its own, before `store.integrations.strands`."""
    import subprocess  # nosec B404: this interpreter, a fixed command
    import sys

    code = (
        "import store.integrations.strands_storage as s; import store.integrations.strands as r; "
        "assert r.SessionStoreStorage is s.SessionStoreStorage"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)  # nosec B603
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_default_agent_is_the_session_the_user_named_and_older_layouts_still_read(harness: Harness) -> None:
    """A new Strands session keeps its default agent's conversation in the session the user named; a session
    written before that layout (no `strands_layout`: the agent in `<session>:agent:default`) still resumes."""
    store = harness.store
    agent = Agent(model=ScriptedModel(["Hello."]), session_manager=session_manager("named", store, owner="ada"))
    agent("Hi")
    named = session_store_id("ada", "named")
    assert [m.role for m in store.list_messages(named, owner="ada").items] == ["user", "assistant"]
    assert store.get_session(agent_store_id("ada", "named", "default"), owner="ada") is None
    # as an earlier release wrote it: the main session without the layout, the agent in a session of its own
    old = session_store_id("ada", "old")
    store.create_session("ada", session_id=old, title="old", metadata={"framework": "strands", "session_type": "AGENT"})
    Agent(model=ScriptedModel(["Noted."]), session_manager=session_manager("old", store, owner="ada"))("earlier")
    child = agent_store_id("ada", "old", "default")
    assert len(store.list_messages(child, owner="ada").items) == 2
    model = ScriptedModel(["Welcome back."])
    resumed = Agent(model=model, session_manager=session_manager("old", store, owner="ada"))
    resumed("Again")
    assert texts(model.seen[0])[0] == ("user", "earlier")
    assert [m.role for m in store.list_messages(child, owner="ada").items] == ["user", "assistant"] * 2
    assert store.list_messages(old, owner="ada").items == []


def test_the_latest_snapshot_is_one_write_and_one_read(dyn: Harness) -> None:
    """Strands' SnapshotSessionManager overwrites `snapshot_latest.json` on every invocation: SessionStoreStorage
    keeps it as a record of the session (1 transaction a write; 2 requests more the first time a process writes
    that key) and reads it in 1 request; its artifact of that name, empty, is what `list` finds."""
    import asyncio

    from strands.session import SnapshotSessionManager

    assert dyn.requests is not None
    storage = SessionStoreStorage(dyn.store, owner="ada")
    manager = SnapshotSessionManager("snap-1", storage=storage)
    agent = Agent(
        model=ScriptedModel([f"answer {i}" for i in range(4)]), session_manager=manager, callback_handler=None
    )
    agent("first")
    dyn.requests.clear()
    agent("second")
    assert dyn.requests.names == ["TransactWriteItems"]
    dyn.requests.clear()
    resumed = Agent(
        model=ScriptedModel([]),
        session_manager=SnapshotSessionManager("snap-1", storage=SessionStoreStorage(dyn.twin(), owner="ada")),
        callback_handler=None,
    )
    assert dyn.requests.names == ["BatchGetItem"]
    assert texts(resumed.messages) == texts(agent.messages) and len(resumed.messages) == 4
    key = "session/snap-1/scopes/agent/default/snapshots/snapshot_latest.json"
    assert asyncio.run(storage.list("session/snap-1/")) == [key]
    sid = session_store_id("ada", "snap-1")
    (listed,) = dyn.store.list_artifacts(sid, owner="ada")
    assert listed.size == 0 and asyncio.run(storage.read(key)) == asyncio.run(storage.read(key)) != b""
    asyncio.run(storage.delete(key))
    assert asyncio.run(storage.read(key)) is None and dyn.store.get_session(sid, owner="ada") is None


def test_a_durability_the_adapter_does_not_know_is_refused_before_anything_is_written(dyn: Harness) -> None:
    assert dyn.requests is not None
    dyn.requests.clear()
    for bad in ("per-message", "", None, 1):
        with pytest.raises(ValueError, match="durability"):
            session_manager("d-1", dyn.store, owner="ada", durability=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="flush_every"):
        session_manager("d-1", dyn.store, owner="ada", durability="message", flush_every=4)
    assert dyn.requests.names == []
