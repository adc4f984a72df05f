"""What a layer above the store asks `forget_owner` to do to its own session records: for a kind of records
(`save_records`' kind), a pure function giving what a forget leaves of a session's records of that kind. The
store applies it to each of the owner's sessions once the owner's memories are gone, in pages (bounded per
call, the cascade carrying the rest), and writes only records it changes. A reducer must be idempotent (applied
to its own result it returns that result: a second forget writes nothing) and must not raise on records it does
not recognise (it leaves them out, or as they are)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

RecordsReducer = Callable[[list[Any], datetime], list[Any]]  # (a session's records of the kind, now) -> what stays
ForgetReducers = Mapping[str, RecordsReducer]  # record kind -> its reducer

MAX_REDUCED_KINDS = 4  # kinds one forget reduces (a page of sessions' records of each is read in one BatchGetItem)


def checked(reducers: ForgetReducers) -> dict[str, RecordsReducer]:
    """The reducers as a plain dict; ValueError when there are more kinds than MAX_REDUCED_KINDS (a programming
    error of the layer that registers them, not a caller's input)."""
    if len(reducers) > MAX_REDUCED_KINDS:
        raise ValueError(f"forget reduces at most {MAX_REDUCED_KINDS} kinds of session records")
    return dict(reducers)
