"""Property: every public method of `SessionStore` and `AsyncSessionStore`, called with hostile values of
every kind in any of its arguments, either succeeds or raises a `StoreError` subclass, and a call that
raises has written nothing (hypothesis; on the memory backend, the sync DynamoDB backend and the async
one)."""

from __future__ import annotations

import inspect
import io
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import SessionStore, StoreError
from tests.conftest import Harness

NOT_CALLED = {"close", "health_check"}  # no arguments to be hostile with
METHODS = sorted(
    name
    for name, fn in inspect.getmembers(SessionStore, inspect.isfunction)
    if not name.startswith("_") and name not in NOT_CALLED
)
# DynamoDB's plans on moto: 0.2 s an example; over HTTP, the API function's own checks come first
EXAMPLES = {"memory": 1500, "async-memory": 500, "scoped": 500, "dynamodb": 150, "async": 150, "http": 150}


class Opaque:
    """An object of a type no argument takes."""


def _nest(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value]
    return value


texts = st.one_of(
    st.text(max_size=20),
    st.text(st.characters(codec="utf-16", categories=["Cs", "Cc", "Zl", "Cf"]), min_size=1, max_size=5),
    st.sampled_from(["", " ", "../x", "a/b", "\ud800", "x" * 5000, "%00", "${jndi:x}", "null", "0", "ü" * 200]),
    st.sampled_from(["http://[::1/x", "https://host/" + "0" * 32, "s3://b/k", "memory://uploads/x", "a" * 32]),
)
numbers = st.one_of(
    st.integers(),
    st.sampled_from([0, -1, 2**53 + 1, 10**40, -(10**40), 10**400]),
    st.floats(),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), 1e300, 1e-300, -0.0]),
    st.decimals(allow_nan=True),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    numbers,
    texts,
    st.binary(max_size=20),
    st.just(bytearray(b"x")),
    st.builds(Opaque),
    st.just(datetime(2024, 1, 1)),  # naive
    st.just(datetime(2024, 1, 1, tzinfo=UTC)),
    st.sampled_from([timedelta(0), timedelta(seconds=-1), timedelta(days=10**6)]),
    st.just({1, 2}),
    st.just(1 + 2j),
    st.just(io.BytesIO(b"stream")),
)
hostile = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.one_of(texts, st.integers(), st.none()), inner, max_size=4),
        st.builds(lambda v: {"role": "user", "content": v}, inner),
        st.builds(lambda v: [{"role": "user", "content": "x", "usage": v}], inner),
        st.builds(lambda v: [{"eventName": "REMOVE", "dynamodb": {"OldImage": v}}], inner),
    ),
    max_leaves=12,
) | st.builds(_nest, scalars, st.sampled_from([65, 300]))


def valid_arguments(store: Any, sid: str, mid: str) -> dict[str, Any]:
    """A value each parameter accepts (parameters with defaults keep them)."""
    return {
        "session_id": sid,
        "owner": "alice",
        "name": "a.txt",
        "messages": [{"role": "user", "content": "x"}],
        "state": {"k": 1},
        "interrupt": {"i": 1},
        "scope": "run",
        "key": "k1",
        "data": {"d": 1},
        "kind": "runs",
        "records": [1],
        "run_id": "r1",
        "events": [{"e": 1}],
        "runs": {"r1": [{"e": 1}]},
        "query": "x",
        "message_id": mid,
        "usage": {"input_tokens": 1},
        "upload": "0" * 32,
        "n": 2,
        "to_seq": 0,
        "branch": "b1",
        "namespace": ("preferences",),
        "value": {"text": "x"},
        "source": "s1",
        "text": "corrected",
        "enabled": True,
    }


class Exploding(io.RawIOBase):
    """A caller's stream whose read fails as no file does."""

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        raise RuntimeError("the caller's own bug")


def _chunks(values: list[Any]) -> Any:
    return iter(values)


ids = st.one_of(
    st.sampled_from(["a" * 128, "a" * 129, "-x", ".x", "x y", "x/y", "x#y", "١٢٣", "x\u200b", "S#x", "HEAD"]),
    st.text(max_size=130),
)
SPECIFIC: dict[str, st.SearchStrategy[Any]] = {
    "upload": st.sampled_from(
        ["http://[::1/x", "http://[::1]/" + "0" * 32, "https://h/" + "0" * 32 + "?x#y", "0" * 31, "0" * 33, "G" * 32]
    )
    | st.builds(lambda t: "https://bucket/" + t, texts),
    "records": st.lists(
        st.fixed_dictionaries(
            {
                "eventName": st.sampled_from(["REMOVE", "MODIFY", 5, None]),
                "dynamodb": st.one_of(
                    hostile,
                    st.builds(lambda image: {"OldImage": image}, st.dictionaries(texts, hostile, max_size=3)),
                    st.just({"OldImage": {"pk": {"S": "U#x"}, "sk": {"S": "UPLOAD"}, "objects": {"L": ["k"]}}}),
                    st.just({"OldImage": {"pk": {"S": "S#x"}, "sk": {"S": "HEAD"}, "id": {"N": 5}}}),
                ),
                "userIdentity": st.one_of(st.none(), st.just({"type": "Service"}), hostile),
            }
        ),
        max_size=3,
    ),
    "runs": st.one_of(
        st.dictionaries(ids, st.lists(hostile, max_size=2), max_size=3),
        st.dictionaries(st.sampled_from(["r1", "r2"]), hostile, max_size=2),
        st.builds(lambda n: {f"r{i}": [{"e": i}] for i in range(n)}, st.integers(min_value=95, max_value=99)),
        hostile,
    ),
    "usage": st.dictionaries(
        st.sampled_from(["input_tokens", "output_tokens", "cost", "cache_read_tokens", "extra"]), numbers, max_size=3
    ),
    "messages": st.lists(
        st.dictionaries(
            st.sampled_from(["role", "content", "id", "name", "tool_call_id", "usage", "metadata"]), hostile
        ),
        max_size=3,
    ),
    "data": st.one_of(
        st.builds(Exploding),
        st.builds(_chunks, st.lists(st.one_of(st.binary(max_size=5), texts, numbers), max_size=3)),
        texts,
        st.integers(),
    ),
    "metadata": st.dictionaries(st.one_of(texts, st.integers()), hostile, max_size=3),
    "expires_in": numbers | st.sampled_from([timedelta(seconds=3601), timedelta(0)]),
    "ttl": numbers,
    "retention": numbers,
    "sha256": st.one_of(texts, st.just("0" * 63), st.just("Z" * 64)),
    "size": numbers,
    "max_size": numbers,
    "cursor": st.one_of(texts, st.just("eyJrIjoibWVzc2FnZXMifQ"), st.just("e30")),
}
for _name in ("session_id", "message_id", "key", "kind", "run_id", "idempotency_key", "new_session_id", "branch"):
    SPECIFIC[_name] = ids
SPECIFIC["keep_as"] = ids
for _name in ("at_seq", "to_seq"):
    SPECIFIC[_name] = numbers
for _name in ("owner", "name", "title", "model", "query", "content_type", "method", "scope"):
    SPECIFIC[_name] = texts


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A method and which of its parameters get a hostile value (at least one): half of the time one made
    for that parameter (a malformed URL for an upload, a broken stream for data), else anything at all."""
    method = draw(st.sampled_from(METHODS))
    params = [p for p in inspect.signature(getattr(SessionStore, method)).parameters.values() if p.name != "self"]
    chosen = draw(st.lists(st.sampled_from(params), min_size=1, max_size=min(3, len(params)), unique=True))
    return method, {p.name: draw(SPECIFIC.get(p.name, hostile) | hostile) for p in chosen}


def invoke(store: Any, method: str, valid: dict[str, Any], bad: dict[str, Any]) -> Any:
    params = inspect.signature(getattr(SessionStore, method)).parameters
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for p in params.values():
        if p.name == "self":
            continue
        if p.name in bad:
            value = bad[p.name]
        elif p.default is inspect.Parameter.empty:
            value = valid[p.name] if method != "put_artifact" or p.name != "data" else b"bytes"
        else:
            continue
        if p.kind is inspect.Parameter.KEYWORD_ONLY:
            kwargs[p.name] = value
        else:
            args.append(value)
    result = getattr(store, method)(*args, **kwargs)
    if hasattr(result, "__exit__"):
        with result:
            pass
    return result


def test_every_public_method_is_covered() -> None:
    assert {"append_messages", "confirm_artifact_upload", "reclaim", "presign_artifact_upload", "supports"} <= set(
        METHODS
    )
    assert {"fork_session", "rewind_session", "restore_branch", "delete_branch", "list_branches"} <= set(METHODS)
    assert {"put_memory", "search_memories", "list_namespaces", "forget_owner"} <= set(METHODS)
    assert {"extract_memories", "extract_from_messages", "list_extraction_runs", "set_extraction"} <= set(METHODS)
    assert "correct_memory" in METHODS
    assert {"save_owner_records", "load_owner_records"} <= set(METHODS)
    assert len(METHODS) == 69


@pytest.mark.slow
def test_hostile_values_raise_only_store_errors_and_write_nothing(harness: Harness) -> None:
    store = harness.store
    sid = store.create_session("alice").id
    mid = store.append_messages(sid, [{"role": "user", "content": "x"}])[0].id
    valid = valid_arguments(store, sid, mid)
    kind = harness.kind

    @settings(
        max_examples=EXAMPLES[kind],
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    @given(calls())
    def check(call: tuple[str, dict[str, Any]]) -> None:
        method, bad = call
        before, memories_before = harness.snapshot(), harness.memories()
        try:
            invoke(store, method, valid, bad)
        except StoreError:
            assert harness.snapshot() == before, f"{method} raised but wrote"
            assert harness.memories() == memories_before, f"{method} raised but wrote a memory"
        # anything else propagates: hypothesis reports it with the smallest arguments that raise it

    check()
