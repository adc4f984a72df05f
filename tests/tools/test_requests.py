"""The records that cross the backend boundary: one per public operation, frozen, keyword-only, and
typed with what the operation returns."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import pytest

from store import AsyncSessionStore, InvalidInput, SessionStore
from store.backend import Awaited, Echo
from store.memory import MemoryBackend
from store.requests import AppendMessages, CreateSession, GetSession, Request, operations


def result_type(cls: type[Request[Any]]) -> Any:
    """R of the `Request[R]` the record derives from."""
    for base in cls.__orig_bases__:  # type: ignore[attr-defined]
        origin = typing.get_origin(base)
        if isinstance(origin, type) and issubclass(origin, Request):
            return typing.get_args(base)[0]
    raise AssertionError(cls)


def test_each_record_is_typed_with_what_its_public_method_returns() -> None:
    for op, cls in operations().items():
        method = getattr(SessionStore, op)
        hints = typing.get_type_hints(method, vars(__import__(method.__module__, fromlist=["_"])))
        assert result_type(cls) == hints["return"], op


def test_records_are_frozen_and_keyword_only() -> None:
    request = GetSession(session_id="s-1", owner="alice")
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.session_id = "s-2"  # type: ignore[misc]
    with pytest.raises(TypeError):
        GetSession("s-1", "alice")  # type: ignore[call-arg]
    # two adjacent strings cannot be swapped by position: owner and session id are named at every call
    made = CreateSession(owner="alice", session_id="s-1", metadata={})
    assert (made.owner, made.session_id) == ("alice", "s-1")


def test_a_front_hands_its_backend_one_checked_record() -> None:
    store = SessionStore(backend=Echo())
    request = store.append_messages("s-1", [{"role": "user", "content": "hi"}], expected_seq=3, owner="alice")
    assert isinstance(request, AppendMessages)
    assert (request.session_id, request.owner, request.expected_seq, request.idempotency_key) == (
        "s-1",
        "alice",
        3,
        None,
    )
    assert request.messages[0].role == "user"
    with pytest.raises(InvalidInput):
        store.append_messages("", [{"role": "user", "content": "hi"}])


def test_each_front_takes_the_backend_kind_it_drives() -> None:
    with pytest.raises(InvalidInput, match="sync backend"):
        SessionStore(backend=Awaited(MemoryBackend()))
    async_store = AsyncSessionStore(backend=MemoryBackend())
    assert isinstance(async_store._backend, Awaited)
