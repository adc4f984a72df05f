"""Tenant boundaries: two owners use the same session id, over HTTP and through every adapter, without
seeing or blocking each other, and no answer tells one owner which ids another has."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from functions.api import context
from store import SessionStore
from store.core.scoped_ids import MAX_LOCAL_ID, owner_tag, scoped_id, unscoped_id
from store.core.validation import ID_PATTERN
from tests.api_client import call
from tests.conftest import Harness

# the API's handlers (and the adapters) over the store under test, as the API function runs: over a sync
# library store (memory or DynamoDB), whose one id space the API divides among owners
pytestmark = pytest.mark.backends("memory", "dynamodb")


@pytest.fixture
def api(harness: Harness) -> Iterator[Harness]:
    context.use_store(harness.store)
    yield harness
    context.use_store(None)


def test_scoped_ids() -> None:
    alice, bob = scoped_id("alice", "chat-42"), scoped_id("bob", "chat-42")
    assert alice != bob and alice.endswith(".chat-42") and alice.startswith(owner_tag("alice"))
    assert unscoped_id("alice", alice) == "chat-42" and unscoped_id("bob", alice) is None
    assert unscoped_id("alice", "chat-42") is None
    longest = scoped_id("auth0|5f1c-an-owner@example.com", "x" * MAX_LOCAL_ID)
    assert ID_PATTERN.fullmatch(longest) and len(longest) <= 128
    for odd in ("x" * (MAX_LOCAL_ID + 1), "user@example.com/chat #1", "", "naïve"):
        stored = scoped_id("alice", odd)
        assert ID_PATTERN.fullmatch(stored) and stored == scoped_id("alice", odd)  # valid and stable
        assert unscoped_id("alice", stored) is None and stored != scoped_id("bob", odd)


def test_two_owners_share_an_id_over_http(api: Harness) -> None:
    made = {}
    for owner in ("alice", "bob"):
        reply = call("POST", "/sessions", owner=owner, json_body={"session_id": "chat-42", "title": f"{owner}'s"})
        assert reply.status == 201, reply.body
        made[owner] = reply.json()
        assert made[owner]["id"] == "chat-42"
    assert call("POST", "/sessions", owner="alice", json_body={"session_id": "chat-42"}).json()["code"] == (
        "session_exists"
    )
    call(
        "POST", "/sessions/chat-42/messages", owner="alice", json_body={"messages": [{"role": "user", "content": "a"}]}
    )
    for owner in ("alice", "bob"):
        got = call("GET", "/sessions/chat-42", owner=owner).json()
        assert (got["id"], got["title"], got["owner"]) == ("chat-42", f"{owner}'s", owner)
        listed = call("GET", "/sessions", owner=owner).json()["items"]
        assert [(s["id"], s["owner"]) for s in listed] == [("chat-42", owner)]
    assert [m["session_id"] for m in call("GET", "/sessions/chat-42/messages", owner="alice").json()["items"]] == [
        "chat-42"
    ]
    assert call("GET", "/sessions/chat-42/messages", owner="bob").json()["items"] == []
    hits = call("GET", "/search", owner="alice", query={"q": "alice"}).json()["items"]
    assert [h["session_id"] for h in hits] == ["chat-42"]
    # checkpoints: the session scope follows the session; run keys are per owner, not first come first served
    for owner in ("alice", "bob"):
        assert call("PUT", "/checkpoints/session/chat-42", owner=owner, json_body={"data": owner}).status == 200
        reply = call("PUT", "/checkpoints/run/step-1", owner=owner, json_body={"data": owner})
        assert reply.status == 200 and reply.json()["key"] == "step-1"
    for owner in ("alice", "bob"):
        session_checkpoint = call("GET", "/checkpoints/session/chat-42", owner=owner).json()
        assert (session_checkpoint["key"], session_checkpoint["data"]) == ("chat-42", owner)
        assert call("GET", "/checkpoints/run/step-1", owner=owner).json()["data"] == owner
    too_long = "x" * (MAX_LOCAL_ID + 1)
    assert call("POST", "/sessions", owner="alice", json_body={"session_id": too_long}).json()["code"] == (
        "invalid_input"
    )
    # an absent id reads the same whether or not another owner has it, and names only the caller's id
    for path in ("/sessions/chat-42/state", "/sessions/nobody-has-this/state"):
        reply = call("GET", path, owner="carol")
        assert reply.status == 404 and reply.json()["code"] == "session_not_found"
        assert owner_tag("carol") not in reply.json()["message"] and owner_tag("alice") not in reply.body.decode()


def test_what_the_library_writes_for_an_owner_the_owner_finds_over_http(api: Harness) -> None:
    """One id model (docs/decisions.md): a session the library made for an owner, under the id it returned
    (its own, or one the caller chose), is listed, read, written, searched, forked and deleted over HTTP
    under that id, with no flag; another owner's is absent under any name."""
    made = api.store.create_session("alice", title="Trip planning")  # the README's own example
    chosen = api.store.create_session("alice", session_id="made-by-the-library")
    api.store.append_messages(made.id, [{"role": "user", "content": "Lisbon in May?"}])
    call("POST", "/sessions", owner="alice", json_body={"session_id": "made-over-http"})
    listed = {s["id"] for s in call("GET", "/sessions", owner="alice").json()["items"]}
    assert listed == {made.id, "made-by-the-library", "made-over-http"}
    assert call("GET", f"/sessions/{made.id}", owner="alice").json()["title"] == "Trip planning"
    posted = call(
        "POST",
        f"/sessions/{chosen.id}/messages",
        owner="alice",
        json_body={"messages": [{"role": "user", "content": "hi"}]},
    )
    assert posted.status == 201 and posted.json()["items"][0]["session_id"] == chosen.id
    assert [h["session_id"] for h in call("GET", "/search", owner="alice", query={"q": "lisbon"}).json()["items"]] == [
        made.id
    ]
    fork = call("POST", f"/sessions/{made.id}/fork", owner="alice", json_body={"session_id": "trip-fork"}).json()
    assert fork["metadata"]["forked_from"]["session_id"] == made.id
    for other in ("GET", "DELETE"):
        assert call(other, f"/sessions/{made.id}", owner="bob").status in (404, 204)
    assert api.store.get_session(made.id) is not None  # bob's delete found nothing of his
    assert call("GET", "/sessions", owner="bob").json()["items"] == []
    # a name the owner already has is taken, whichever way it was made
    taken = call("POST", "/sessions", owner="alice", json_body={"session_id": "made-by-the-library"})
    assert taken.status == 409 and "made-by-the-library" in taken.json()["message"]
    assert call("DELETE", f"/sessions/{chosen.id}", owner="alice").status == 204
    assert api.store.get_session(chosen.id) is None
    assert len(api.store.list_sessions("alice").items) == 3  # the library sees the same sessions


def test_an_adapter_session_is_the_owners_http_session(api: Harness) -> None:
    from store.integrations.openai_agents import OpenAIAgentsSession

    asyncio.run(OpenAIAgentsSession("chat-9", api.store, owner="alice").add_items([{"role": "user", "content": "hi"}]))
    items = call("GET", "/sessions/chat-9/messages", owner="alice").json()["items"]
    assert [(m["session_id"], m["content"]) for m in items] == [("chat-9", {"role": "user", "content": "hi"})]
    assert call("GET", "/sessions/chat-9/messages", owner="bob").status == 404


def test_two_owners_share_an_id_through_the_openai_adapter(store: SessionStore) -> None:
    from store.integrations.openai_agents import OpenAIAgentsSession

    for owner in ("alice", "bob"):
        asyncio.run(OpenAIAgentsSession("chat-1", store, owner=owner).add_items([{"role": "user", "content": owner}]))
    for owner in ("alice", "bob"):
        assert asyncio.run(OpenAIAgentsSession("chat-1", store, owner=owner).get_items()) == [
            {"role": "user", "content": owner}
        ]


def test_two_owners_share_an_id_through_the_strands_adapter(store: SessionStore) -> None:
    from strands.types.session import Session, SessionAgent, SessionMessage, SessionType

    from store.integrations.strands import StrandsSessionRepository

    for owner in ("alice", "bob"):
        repo = StrandsSessionRepository(store, owner=owner)
        repo.create_session(Session(session_id="chat-1", session_type=SessionType.AGENT))  # no "already exists"
        repo.create_agent("chat-1", SessionAgent(agent_id="a", state={"who": owner}, conversation_manager_state={}))
        repo.create_message("chat-1", "a", SessionMessage({"role": "user", "content": [{"text": owner}]}, 0))
    for owner in ("alice", "bob"):
        repo = StrandsSessionRepository(store, owner=owner)
        assert repo.read_agent("chat-1", "a").state == {"who": owner}
        assert [m.message["content"] for m in repo.list_messages("chat-1", "a")] == [[{"text": owner}]]
    StrandsSessionRepository(store, owner="bob").delete_session("chat-1")
    assert StrandsSessionRepository(store, owner="alice").read_agent("chat-1", "a") is not None


def test_two_users_share_an_id_through_the_adk_adapter(store: SessionStore) -> None:
    from store.integrations.adk import StoreSessionService

    service = StoreSessionService(store)

    async def scenario() -> None:
        for user in ("alice", "bob"):
            made = await service.create_session(app_name="app", user_id=user, session_id="chat-1", state={"u": user})
            assert made.id == "chat-1"
        for user in ("alice", "bob"):
            got = await service.get_session(app_name="app", user_id=user, session_id="chat-1")
            assert got is not None and got.state["u"] == user

    asyncio.run(scenario())


def test_an_adk_session_is_its_users_http_session(api: Harness) -> None:
    from store.integrations.adk import StoreSessionService

    service = StoreSessionService(api.store)
    asyncio.run(service.create_session(app_name="travel", user_id="alice", session_id="trip-1", state={"k": 1}))
    got = call("GET", "/sessions/trip-1", owner="alice")  # under the id the user chose
    assert got.status == 200 and got.json()["metadata"]["adk_session"] == "trip-1", got.body
    assert call("GET", "/sessions/trip-1/state", owner="alice").json()["state"] == {"k": 1}
    assert call("GET", "/sessions/trip-1", owner="bob").status == 404
