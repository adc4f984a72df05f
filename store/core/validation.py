"""Argument checks shared by every backend: each raises InvalidInput and returns the normalised value."""

from __future__ import annotations

import math
import re
import unicodedata
import uuid
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError

from store.conversation.model import VIEW_FIELD
from store.core import rules
from store.core.codec import canonical, check_json, dumps
from store.core.paging import MAX_SEQ
from store.core.timeutil import to_duration
from store.core.windows import STATE_FIELD, STATE_PATH_MAX
from store.errors import InvalidInput
from store.models import Message, TokenUsage
from store.settings import Settings

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
MAX_TITLE = 1024
MAX_MODEL = 256
MAX_METADATA_BYTES = 16 * 1024
MAX_LIMIT = 1000
SCOPES = ("session", "run", "workflow")


def ident(value: Any, what: str = "id") -> str:
    """An id (session, message, run, workflow, checkpoint key, record kind, idempotency key, owner)."""
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise InvalidInput(f"{what} must match {ID_PATTERN.pattern}, got {value!r:.80}")
    return value


MAX_OWNER = 256


def owner(value: Any, what: str = "owner") -> str:
    """An owner: any printable string of 1 to 256 characters (JWT subjects such as `auth0|5f1c` or an
    e-mail address fit). Owners are only ever stored behind a type prefix or as the index key, so they
    cannot forge another item's key."""
    if (
        not isinstance(value, str)
        or not 1 <= len(value) <= MAX_OWNER
        or value != value.strip()
        or any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") for c in value)
    ):
        raise InvalidInput(f"{what} must be 1 to {MAX_OWNER} printable characters, got {value!r:.80}")
    return value


def optional_owner(value: Any) -> str | None:
    """`owner`, or None (no owner scoping)."""
    return None if value is None else owner(value)


def optional_ident(value: Any, what: str) -> str | None:
    """`ident`, or None."""
    return None if value is None else ident(value, what)


def new_id() -> str:
    """A fresh random id that matches ID_PATTERN."""
    return uuid.uuid4().hex


def text(value: Any, what: str, limit: int) -> str | None:
    """An optional string of at most `limit` characters."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string")
    if len(value) > limit:
        raise InvalidInput(f"{what} must be at most {limit} characters")
    check_json(value, what)
    return value


def metadata(value: Any, what: str = "metadata") -> dict[str, Any]:
    """A JSON object with string keys, at most MAX_METADATA_BYTES encoded."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and k for k in value):
        raise InvalidInput(f"{what} must be a JSON object with non-empty string keys")
    out = dict(value)
    if len(dumps(out, what).encode()) > MAX_METADATA_BYTES:
        raise InvalidInput(f"{what} must be at most {MAX_METADATA_BYTES} bytes as JSON")
    return out


def metadata_filter(value: Any) -> dict[str, str]:
    """A list_sessions metadata filter: {key: value} pairs, each compared by canonical JSON equality."""
    return {k: canonical(v) for k, v in metadata(value, "metadata filter").items()}


def matches_metadata(stored: Mapping[str, Any], wanted: Mapping[str, str]) -> bool:
    """True when every filter key is present in `stored` with a canonically equal value."""
    return all(k in stored and canonical(stored[k]) == v for k, v in wanted.items())


def state_path(value: Any, what: str) -> str | None:
    """A dotted path of at most 8 fields ([A-Za-z0-9_-], 1 to 64 characters each) into a state, or None."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a dotted path of field names")
    fields = value.split(".")
    if len(fields) > STATE_PATH_MAX or not all(STATE_FIELD.match(f) for f in fields):
        raise InvalidInput(f"{what} must be at most {STATE_PATH_MAX} field names ([A-Za-z0-9_-]) joined by dots")
    return value


WITH_STATES_MAX = 4  # other sessions whose states a load_full reads in its one transaction


def session_owners(value: Any, what: str) -> tuple[tuple[str, str | None], ...]:
    """Session ids, each with the owner to read it as (None: the call's): a mapping of id to owner, or ids;
    at most WITH_STATES_MAX, each once."""
    if value is None:
        return ()
    if isinstance(value, str | bytes) or not isinstance(value, Mapping | Iterable):
        raise InvalidInput(f"{what} must be session ids, or a mapping of session id to owner")
    pairs = list(value.items()) if isinstance(value, Mapping) else [(sid, None) for sid in value]
    if len(pairs) > WITH_STATES_MAX:
        raise InvalidInput(f"{what} names at most {WITH_STATES_MAX} sessions")
    out = tuple((ident(sid, what), optional_owner(owner)) for sid, owner in pairs)
    if len({sid for sid, _ in out}) != len(out):
        raise InvalidInput(f"{what} names a session twice")
    return out


def limit(value: Any, what: str = "limit", *, allow_none: bool = False, maximum: int = MAX_LIMIT) -> int | None:
    """A positive page size of at most `maximum` (None when allowed)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidInput(f"{what} must be an integer from 1 to {maximum}")
    return value


def flag(value: Any, what: str) -> bool:
    """A boolean (no other value stands for one)."""
    if not isinstance(value, bool):
        raise InvalidInput(f"{what} must be true or false")
    return value


def seq(value: Any, what: str, *, allow_none: bool = True) -> int | None:
    """A sequence or version number from 0 to 2**53 (what every JSON reader holds exactly), or None."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEQ:
        raise InvalidInput(f"{what} must be an integer from 0 to 2**53")
    return value


def scope(value: Any) -> str:
    """A checkpoint scope."""
    if value not in SCOPES:
        raise InvalidInput(f"scope must be one of {', '.join(SCOPES)}")
    return str(value)


MAX_TOKENS = 10**15
MAX_COST = Decimal(10**12)
COST_QUANTUM = Decimal("1e-12")


def usage(value: Any, what: str = "usage") -> TokenUsage:
    """A TokenUsage (or a dict of its fields) whose numbers DynamoDB stores exactly, and whose sums too:
    token counts are integers from 0 to 10**15; a cost is a finite number of magnitude 10**-12 to
    10**12 (or 0), kept to 12 decimal places. With these bounds a session's totals stay within
    DynamoDB's 38 significant digits for far more calls than any session makes."""
    try:
        checked = value if isinstance(value, TokenUsage) else TokenUsage.model_validate(value)
    except ValidationError as exc:
        raise InvalidInput(f"{what} is invalid: {exc.errors()[0]['msg']}") from None
    for field_name, number in checked.numbers().items():
        if field_name != "cost" and (isinstance(number, bool) or not 0 <= number <= MAX_TOKENS):
            raise InvalidInput(f"{what}.{field_name} must be an integer from 0 to 10**15")
    if checked.cost is None:
        return checked
    if not math.isfinite(checked.cost):
        raise InvalidInput(f"{what}.cost must be a finite number")
    cost = Decimal(repr(checked.cost))
    if cost != 0 and not COST_QUANTUM <= abs(cost) <= MAX_COST:
        raise InvalidInput(f"{what}.cost must be 0 or of magnitude 1e-12 to 1e12")
    kept = float(cost.quantize(COST_QUANTUM))
    return checked if kept == checked.cost else checked.model_copy(update={"cost": kept})


def messages(values: Any, *, maximum: int) -> list[Message]:
    """A non-empty list of Messages (or dicts of the same shape), ids checked and unique in the call;
    content must be JSON."""
    if isinstance(values, Message | Mapping) or not isinstance(values, Iterable) or isinstance(values, str | bytes):
        raise InvalidInput("messages must be a list of messages")
    out: list[Message] = []
    for i, value in enumerate(values):
        try:
            msg = value if isinstance(value, Message) else Message.model_validate(value)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise InvalidInput(f"messages[{i}]: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
        if VIEW_FIELD in (msg.model_extra or {}):
            raise InvalidInput(f"messages[{i}].{VIEW_FIELD}: the field is the store's (each message's canonical view)")
        if msg.id is not None:
            ident(msg.id, f"messages[{i}].id")
        if msg.tool_call_id is not None:
            text(msg.tool_call_id, f"messages[{i}].tool_call_id", 256)
        if msg.usage is not None:
            msg = msg.model_copy(update={"usage": usage(msg.usage, f"messages[{i}].usage")})
        out.append(msg)
    if not out:
        raise InvalidInput("messages must not be empty")
    if len(out) > maximum:
        raise InvalidInput(f"at most {maximum} messages may be appended in one call")
    ids = [m.id for m in out if m.id is not None]
    if len(ids) != len(set(ids)):
        raise InvalidInput("message ids must be unique within a call")
    return out


def roles(value: Any) -> frozenset[str] | None:
    """A roles filter: a non-empty collection of role strings, or None."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Iterable) or not all(isinstance(r, str) and r for r in value):
        raise InvalidInput("roles must be a list of role names")
    out = frozenset(value)
    if not out or len(out) > 20:
        raise InvalidInput("roles must name 1 to 20 roles")
    return out


def json_value(value: Any, what: str) -> Any:
    """Any JSON value (checked by encoding it)."""
    dumps(value, what)
    return value


def json_object(value: Any, what: str) -> dict[str, Any]:
    """A JSON object."""
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{what} must be a JSON object")
    out = dict(value)
    dumps(out, what)
    return out


def record_list(value: Any) -> list[Any]:
    """A list of JSON records."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InvalidInput("records must be a list")
    out = list(value)
    dumps(out, "records")
    return out


MAX_ARTIFACT_NAME_BYTES = 512
MAX_CONTENT_TYPE = 255
MAX_ARTIFACT_METADATA_BYTES = 2 * 1024
MAX_TRACE_EVENTS = 10_000
MAX_PRESIGN_SECONDS = 3600
_CONTENT_TYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(\s*;[ -~]*)?")


def artifact_name(value: Any) -> str:
    """An artifact name: 1 to 512 bytes of UTF-8 in `/`-separated segments, none empty, `.` or `..`,
    with no control, format or line-separator characters and no backslash. Names are stored as data
    and hashed into S3 keys; they never become key paths themselves."""
    if not isinstance(value, str) or not value:
        raise InvalidInput("artifact name must be a non-empty string")
    if len(value.encode("utf-8", "surrogatepass")) > MAX_ARTIFACT_NAME_BYTES:
        raise InvalidInput(f"artifact name must be at most {MAX_ARTIFACT_NAME_BYTES} bytes as UTF-8")
    if "\\" in value or any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") for c in value):
        raise InvalidInput(f"artifact name must not contain backslashes or control characters: {value!r:.80}")
    if any(part in ("", ".", "..") for part in value.split("/")):
        raise InvalidInput(f"artifact name segments must not be empty, '.' or '..': {value!r:.80}")
    return value


def content_type(value: Any) -> str:
    """A MIME type (application/octet-stream when None)."""
    if value is None:
        return "application/octet-stream"
    if not isinstance(value, str) or len(value) > MAX_CONTENT_TYPE or not _CONTENT_TYPE.fullmatch(value):
        raise InvalidInput(f"content_type must be a MIME type such as text/plain, got {value!r:.80}")
    return value


def artifact_metadata(value: Any) -> dict[str, str]:
    """User metadata of an artifact: string keys and string values, at most 2 KB as JSON."""
    out = metadata(value, "artifact metadata")
    if not all(isinstance(v, str) for v in out.values()):
        raise InvalidInput("artifact metadata values must be strings")
    if len(dumps(out).encode()) > MAX_ARTIFACT_METADATA_BYTES:
        raise InvalidInput(f"artifact metadata must be at most {MAX_ARTIFACT_METADATA_BYTES} bytes as JSON")
    return out


def version(value: Any) -> int | None:
    """An artifact version (1, 2, 3, ... up to 2**53), or None for the latest."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SEQ:
        raise InvalidInput("version must be an integer from 1 to 2**53")
    return value


UPLOAD_ID = re.compile(r"[0-9a-f]{32}")


def upload_id(value: Any) -> str:
    """The upload id of a presigned upload, given as is or as the presigned URL it was issued with (the
    last segment of the URL's path)."""
    if not isinstance(value, str) or len(value) > 8192:
        raise InvalidInput("upload must be the presigned URL or its upload id")
    candidate = value
    if "://" in value:
        try:
            candidate = urlsplit(value).path.rstrip("/").rsplit("/", 1)[-1]
        except ValueError:
            raise InvalidInput("upload is not a URL this store issued") from None
    if not UPLOAD_ID.fullmatch(candidate):
        raise InvalidInput("upload must be an upload id or the presigned URL it was issued with")
    return candidate


def reclaim_jobs(value: Any) -> frozenset[str]:
    """The stream's jobs to do (`rules.RECLAIM_JOBS`; None: all of them). InvalidInput for anything else."""
    if value is None:
        return rules.RECLAIM_JOBS
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InvalidInput(f"jobs must be a list of {sorted(rules.RECLAIM_JOBS)}")
    jobs = list(value)
    if not jobs or not all(isinstance(j, str) and j in rules.RECLAIM_JOBS for j in jobs):
        raise InvalidInput(f"jobs must be a non-empty list of {sorted(rules.RECLAIM_JOBS)}")
    return frozenset(jobs)


def stream_records(value: Any) -> list[dict[str, Any]]:
    """DynamoDB stream records (as a Lambda event or GetRecords carries them): dicts whose `dynamodb`
    part holds images of attribute values. InvalidInput for anything of another shape."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InvalidInput("records must be a list of DynamoDB stream records")
    out = list(value)
    for i, record in enumerate(out):
        where = f"records[{i}]"
        if not isinstance(record, dict):
            raise InvalidInput(f"{where} must be a stream record (a dict)")
        for name in ("eventName", "eventSource"):
            if not isinstance(record.get(name, ""), str):
                raise InvalidInput(f"{where}.{name} must be a string")
        for name in ("dynamodb", "userIdentity"):
            if not isinstance(record.get(name, {}), dict):
                raise InvalidInput(f"{where}.{name} must be an object")
        for image in ("Keys", "OldImage", "NewImage"):
            attrs = record.get("dynamodb", {}).get(image, {})
            if not isinstance(attrs, dict) or not all(isinstance(k, str) and _attribute(v) for k, v in attrs.items()):
                raise InvalidInput(f"{where}.dynamodb.{image} must map attribute names to attribute values")
    return out


_SCALARS: dict[str, tuple[type, ...]] = {"S": (str,), "N": (str,), "B": (str, bytes), "BOOL": (bool,), "NULL": (bool,)}


def _attribute(value: Any) -> bool:
    """True for a well-formed attribute value ({"S": "..."}, {"M": {...}}, ...), checked without recursion."""
    pending = [value]
    while pending:
        av = pending.pop()
        if not isinstance(av, dict) or len(av) != 1:
            return False
        ((kind, inner),) = av.items()
        if kind in _SCALARS:
            if not isinstance(inner, _SCALARS[kind]):
                return False
        elif kind == "M":
            if not isinstance(inner, dict) or not all(isinstance(k, str) for k in inner):
                return False
            pending.extend(inner.values())
        elif kind == "L":
            if not isinstance(inner, list):
                return False
            pending.extend(inner)
        elif kind in ("SS", "NS", "BS"):
            if not isinstance(inner, list) or not all(isinstance(x, str | bytes) for x in inner):
                return False
        else:
            return False
    return True


_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


def sha256_hex(value: Any) -> str:
    """A SHA-256 digest as 64 hex digits (returned lowercase)."""
    if not isinstance(value, str) or not _SHA256.fullmatch(value):
        raise InvalidInput("sha256 must be 64 hexadecimal digits")
    return value.lower()


def upload_limits(size: Any, max_size: Any, settings: Settings) -> tuple[int, int | None]:
    """(the most bytes an upload may hold, its exact size if declared): `size` when given, else `max_size`,
    else the default; never above `settings.max_upload_bytes`."""
    cap = settings.max_upload_bytes
    for what, value in (("size", size), ("max_size", max_size)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= cap):
            raise InvalidInput(f"{what} must be an integer from 0 to {cap} bytes")
    if size is not None and max_size is not None and size > max_size:
        raise InvalidInput("size is larger than max_size")
    if size is not None:
        return size, size
    return (max_size if max_size is not None else min(settings.default_upload_bytes, cap)), None


def presign_method(value: Any) -> str:
    if value not in ("GET", "PUT"):
        raise InvalidInput('method must be "GET" or "PUT"')
    return str(value)


def presign_expiry(value: Any) -> int:
    """A presigned URL's lifetime in whole seconds: 1 to 3600."""
    duration = to_duration(value, "expires_in")
    seconds = int(duration.total_seconds()) if duration is not None else 0
    if not 1 <= seconds <= MAX_PRESIGN_SECONDS:
        raise InvalidInput(f"expires_in must be from 1 second to {MAX_PRESIGN_SECONDS} seconds")
    return seconds


MAX_TRACE_RUNS = 96  # one transaction: the head, an intent and a run item each (100 actions at most)


def trace_runs(value: Any) -> dict[str, list[dict[str, Any]]]:
    """1 to MAX_TRACE_RUNS run ids, each with its events (`trace_events`), MAX_TRACE_EVENTS in all."""
    if not isinstance(value, Mapping) or not 1 <= len(value) <= MAX_TRACE_RUNS:
        raise InvalidInput(f"runs must map 1 to {MAX_TRACE_RUNS} run ids to their events")
    runs = {ident(run_id, "run_id"): trace_events(events) for run_id, events in value.items()}
    if sum(len(events) for events in runs.values()) > MAX_TRACE_EVENTS:
        raise InvalidInput(f"runs must hold at most {MAX_TRACE_EVENTS} events in all")
    return runs


def trace_events(value: Any) -> list[dict[str, Any]]:
    """A non-empty list of JSON objects (trace events), at most MAX_TRACE_EVENTS."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InvalidInput("events must be a list of JSON objects")
    out = list(value)
    if not out or len(out) > MAX_TRACE_EVENTS:
        raise InvalidInput(f"events must hold 1 to {MAX_TRACE_EVENTS} events")
    if not all(isinstance(e, Mapping) for e in out):
        raise InvalidInput("each trace event must be a JSON object")
    events = [dict(e) for e in out]
    dumps(events, "events")
    return events


def data_source(value: Any) -> bytes | Any:
    """Artifact content: bytes (or bytearray/memoryview, copied), a readable binary stream (`read(n)`,
    sync or async), or an iterable or async iterable of bytes chunks (returned as an iterator)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        raise InvalidInput("artifact data must be bytes or a binary stream, not str")
    if hasattr(value, "read") or hasattr(value, "__anext__"):
        return value
    if hasattr(value, "__aiter__"):
        return value.__aiter__()
    if isinstance(value, Iterable):
        return iter(value)
    raise InvalidInput(
        f"artifact data must be bytes, a binary stream or an iterable of bytes, not {type(value).__name__}"
    )
