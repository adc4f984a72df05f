"""Property tests of the body codec and of id/name validation (hypothesis)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import InvalidInput, PayloadTooLarge, SessionStore
from store.core import codec, validation

# JSON as the store accepts it: finite floats, any unicode (surrogates cannot be encoded as UTF-8)
text = st.text(st.characters(exclude_categories=["Cs"]), max_size=50)
scalars = (
    st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.floats(allow_nan=False, allow_infinity=False) | text
)
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(text, inner, max_size=5), max_leaves=40
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_any_json_value_round_trips_exactly(value: Any) -> None:
    kind, payload = codec.encode(value)
    back = codec.decode(kind, payload)
    assert json.dumps(back, sort_keys=True) == json.dumps(value, sort_keys=True)
    assert kind == (
        codec.CODEC_ZLIB if len(codec.dumps(value).encode()) >= codec.COMPRESS_THRESHOLD else codec.CODEC_JSON
    )


@given(st.integers(0, codec.MAX_DEPTH))
def test_nesting_up_to_the_limit_round_trips(depth: int) -> None:
    assert codec.decode(*codec.encode(_nest(depth))) == _nest(depth)


def test_nesting_beyond_the_limit_is_refused() -> None:
    with pytest.raises(InvalidInput):
        codec.encode(_nest(codec.MAX_DEPTH + 1))


def _nest(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def test_empty_and_limit_size_payloads() -> None:
    empties: list[Any] = ["", [], {}, None, 0]
    for value in empties:
        assert codec.decode(*codec.encode(value)) == value
    import os

    limit = 10_000
    fits = os.urandom(limit // 2).hex()[: limit - 2]  # a JSON string of exactly `limit` bytes, incompressible
    assert len(codec.dumps(fits).encode()) == limit
    kind, payload = codec.encode(fits, limit=len(codec.encode(fits)[1]))
    assert codec.decode(kind, payload) == fits
    with pytest.raises(PayloadTooLarge):
        codec.encode(fits, limit=len(payload) - 1)


@settings(max_examples=200)
@given(json_values)
def test_the_store_returns_what_it_was_given(value: Any) -> None:
    store = SessionStore.memory()
    sid = store.create_session("alice").id
    store.save_state(sid, value)
    stored = store.load_state(sid)
    assert stored is not None and json.dumps(stored.state, sort_keys=True) == json.dumps(value, sort_keys=True)
    record = store.append_messages(sid, [{"role": "user", "content": value}])[0]
    assert json.dumps(store.get_message(sid, record.id).content, sort_keys=True) == json.dumps(value, sort_keys=True)


hostile = st.one_of(
    st.just(""),
    st.text(min_size=129),
    st.text().map(lambda s: "../" + s),
    st.text().map(lambda s: s + "\x00"),
    st.sampled_from(["a/b", "a\\b", " a", "a b", "\u202ea", "ｆｕｌｌ", "a\nb", "#", "S#x", ".", "-a", ":a"]),
)


@settings(max_examples=300)
@given(hostile)
def test_hostile_ids_are_refused(value: str) -> None:
    if validation.ID_PATTERN.fullmatch(value):
        return  # (hypothesis can build a valid id from the sampled shapes; those are not hostile)
    with pytest.raises(InvalidInput):
        validation.ident(value, "session_id")


names = st.one_of(
    st.text(max_size=5).map(lambda s: f"{s}/../x"),
    st.text(max_size=5).map(lambda s: f"/{s}"),
    st.text(max_size=5).map(lambda s: f"{s}//x"),
    st.text(min_size=1, max_size=5).map(lambda s: f"{s}\x07"),
    st.text(min_size=1, max_size=3).map(lambda s: s * 600),
    st.sampled_from(["", ".", "..", "a/.", "a\\..\\b", "\u2028", "\ufeffname"]),
)


@settings(max_examples=300)
@given(names)
def test_hostile_artifact_names_are_refused_and_nothing_is_written(name: str) -> None:
    store = SessionStore.memory()
    sid = store.create_session("alice").id
    with pytest.raises(InvalidInput):
        store.put_artifact(sid, name, b"x")
    assert store.list_artifacts(sid) == []
