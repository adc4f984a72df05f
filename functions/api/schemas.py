"""Request bodies of the HTTP API (responses are the library's own models)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from store.conversation import ViewedMessage
from store.extraction.strategies import BuiltInName
from store.models import (
    ArtifactVersion,
    Branch,
    Checkpoint,
    FullSession,
    Message,
    SearchPage,
    StateSnapshot,
    TokenUsage,
)
from store.requests import UNSET, Unset


class Strict(BaseModel):
    """A request body: no field it does not name, and its numbers and flags as JSON has them (StrictInt,
    StrictBool: `true` or `"1"` is not a sequence number)."""

    model_config = ConfigDict(extra="forbid")


class CreateSession(Strict):
    session_id: str | None = Field(
        default=None,
        description="a chosen id (at most 100 characters; yours alone: another owner may use the same one); "
        "generated when absent",
    )
    title: str | None = None
    model: str | None = None
    metadata: dict[str, Any] | None = None
    retention_seconds: StrictInt | None = Field(
        default=None,
        ge=0,
        description="expire after this long without activity; 0 keeps the session until deleted; "
        "absent uses the deployment's default (DefaultRetentionDays)",
    )


class ForkSession(Strict):
    at_seq: StrictInt | None = Field(
        default=None, ge=0, description="the fork holds messages 1..at_seq of the session (all when absent)"
    )
    session_id: str | None = Field(
        default=None, description="the fork's id (at most 100 characters, yours alone); generated when absent"
    )
    title: str | None = Field(default=None, description="the fork's title; the session's when absent")
    metadata: dict[str, Any] | None = Field(
        default=None, description="the fork's metadata (the session's when absent); `forked_from` is added to it"
    )
    state: Any = Field(default=None, description="the fork's state; the session's when absent (null is a state)")


class RewindSession(Strict):
    to_seq: StrictInt = Field(ge=0, description="the session continues from this message")
    branch: str | None = Field(
        default=None, description="the name the transcript as it was is kept under (generated when absent)"
    )
    metadata: dict[str, Any] | None = Field(
        default=None, description="the session's metadata from then on, set in the same write (unchanged when absent)"
    )


class RestoreBranch(Strict):
    keep_as: str | None = Field(
        default=None,
        description="the name the replaced transcript is kept under (generated when absent; the restored "
        "branch's own name swaps the two)",
    )
    metadata: dict[str, Any] | None = Field(
        default=None, description="the session's metadata from then on, set in the same write (unchanged when absent)"
    )


def metadata_given(body: ForkSession | RewindSession | RestoreBranch) -> dict[str, Any] | Unset:
    """The metadata a fork, rewind or restore body sets ({} for null), or UNSET when the body names none."""
    return (body.metadata or {}) if "metadata" in body.model_fields_set else UNSET


class UpdateSession(Strict):
    title: str | None = None
    model: str | None = None
    metadata: dict[str, Any] | None = None


class AppendMessages(Strict):
    messages: list[Message] = Field(min_length=1, max_length=97)
    expected_seq: StrictInt | None = Field(default=None, ge=0)


class SaveState(Strict):
    state: Any
    expected_version: StrictInt | None = Field(default=None, ge=0)


class SaveFull(Strict):
    messages: list[Message] = Field(min_length=1, max_length=97)
    state: Any
    expected_seq: StrictInt | None = Field(default=None, ge=0)
    keep_state: StrictBool = Field(default=True, description="keep a copy of the state for a rewind to this point")


class SaveCheckpoint(Strict):
    data: Any
    ttl_seconds: StrictInt | None = Field(default=None, ge=1)


class SaveRecords(Strict):
    records: list[Any]


class Interrupt(Strict):
    interrupt: dict[str, Any]


class Overview(BaseModel):
    """What a session resumes from, each part null when it has none."""

    state: StateSnapshot | None = None
    interrupt: dict[str, Any] | None = None
    checkpoint: Checkpoint | None = None


class UpdateUsage(Strict):
    usage: TokenUsage


class UploadRequest(Strict):
    name: str = Field(description="the artifact's name: /-separated segments, at most 512 bytes")
    content_type: str | None = None
    metadata: dict[str, str] | None = None
    expires_in: StrictInt = Field(default=900, ge=1, le=3600, description="seconds the upload URL stays valid")
    size: StrictInt | None = Field(default=None, ge=0, description="the exact byte count (signed: S3 refuses another)")
    max_size: StrictInt | None = Field(
        default=None, ge=0, description="the most bytes the upload may hold (checked at confirm); default 64 MiB"
    )
    sha256: str | None = Field(
        default=None, description="hex SHA-256 of the bytes (signed: S3 verifies them as they arrive)"
    )


class ConfirmUpload(Strict):
    name: str


class TraceBatch(Strict):
    events: list[dict[str, Any]] = Field(min_length=1)


class Items(BaseModel):
    """A list response."""

    items: list[ViewedMessage]


class ViewedFull(FullSession):
    """A session, its transcript (each message with its canonical view) and its state, as of one instant."""

    messages: list[ViewedMessage]  # type: ignore[assignment]  # a narrower list: each one viewed


class Branches(BaseModel):
    items: list[Branch]
    next_cursor: str | None = None


class Versions(BaseModel):
    items: list[ArtifactVersion]


class Hits(SearchPage):
    """One bounded search call's hits, and how far it got (`next_cursor` continues into older sessions)."""


class Events(BaseModel):
    items: list[dict[str, Any]]


class Runs(BaseModel):
    items: list[str]


class Saved(BaseModel):
    version: int


class Batch(BaseModel):
    batch: int


class Health(BaseModel):
    status: str


class Error(BaseModel):
    """Every error response: a stable machine-readable `code` and a human message."""

    code: str
    message: str


class MemoryCorrection(BaseModel):
    """The owner's corrected text of a memory (its earlier text is kept in its history)."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=2000)


class MemoryPut(BaseModel):
    """A memory to put: its namespace (a list of labels), key and value; `index` names the value's text
    fields to embed (null: all of its text; false: not searchable by meaning); `ttl_seconds` makes it expire."""

    model_config = ConfigDict(extra="forbid")

    namespace: list[str] = Field(min_length=1, max_length=8)
    key: str = Field(min_length=1, max_length=512)
    value: dict[str, Any]
    index: list[str] | StrictBool | None = None
    ttl_seconds: StrictInt | None = Field(default=None, ge=1)


class Namespaces(BaseModel):
    items: list[list[str]]
    next_cursor: str | None = None


class ExtractionPut(Strict):
    enabled: StrictBool = True
    strategies: list[BuiltInName] | None = None


class Forgotten(BaseModel):
    """`done`: every memory of the caller is gone (false: the stack's cascade is deleting the rest, within
    minutes; meanwhile those still there can be read, and calling again is harmless)."""

    done: bool
