"""OTLP/HTTP protobuf (`application/x-protobuf`) read into OTLP/JSON's shape, so that one reader
(`store.integrations.otel.otlp_events`) serves both encodings of `POST /v1/traces`.

A reader of the protobuf wire format for the few messages of `ExportTraceServiceRequest` (opentelemetry-
proto's trace/v1 and common/v1 field numbers), with no protobuf runtime in the function's bundle. Unknown
fields are skipped as the format allows; anything malformed (a truncated field, a length past the end,
nesting deeper than MAX_DEPTH) raises ValueError, never reads past the body."""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable, Iterator
from typing import Any

MAX_DEPTH = 32  # AnyValue arrays and kvlists nest; a hostile body may nest forever

Field = tuple[int, int, Any]  # (number, wire type, value: int for varint/fixed, bytes for length-delimited)


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ValueError("a truncated or oversized varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def fields(data: bytes) -> Iterator[Field]:
    """The fields of one message, in order."""
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, at = _varint(data, at)
        elif wire == 1:
            if at + 8 > len(data):
                raise ValueError("a truncated fixed64")
            value, at = struct.unpack_from("<Q", data, at)[0], at + 8
        elif wire == 2:
            size, at = _varint(data, at)
            if at + size > len(data):
                raise ValueError("a length past the end of the message")
            value, at = data[at : at + size], at + size
        elif wire == 5:
            if at + 4 > len(data):
                raise ValueError("a truncated fixed32")
            value, at = struct.unpack_from("<I", data, at)[0], at + 4
        else:
            raise ValueError(f"wire type {wire} is not supported")
        yield number, wire, value


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else ""


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def any_value(data: bytes, depth: int = 0) -> dict[str, Any]:
    if depth > MAX_DEPTH:
        raise ValueError("attribute values nest too deep")
    for number, _, value in fields(data):
        if number == 1:
            return {"stringValue": _text(value)}
        if number == 2:
            return {"boolValue": bool(value)}
        if number == 3:
            return {"intValue": str(_signed(value))}
        if number == 4:
            return {"doubleValue": struct.unpack("<d", struct.pack("<Q", value))[0]}
        if number == 5:
            return {"arrayValue": {"values": [any_value(v, depth + 1) for n, _, v in fields(value) if n == 1]}}
        if number == 6:
            return {"kvlistValue": {"values": [key_value(v, depth + 1) for n, _, v in fields(value) if n == 1]}}
        if number == 7:
            return {"bytesValue": base64.b64encode(value).decode()}
    return {}


def key_value(data: bytes, depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {"key": "", "value": {}}
    for number, _, value in fields(data):
        if number == 1:
            out["key"] = _text(value)
        elif number == 2:
            out["value"] = any_value(value, depth + 1)
    return out


def _message(data: bytes, spec: dict[int, tuple[str, Callable[[Any], Any], bool]]) -> dict[str, Any]:
    """A message read by `spec`: field number -> (JSON name, reader of the value, repeated)."""
    out: dict[str, Any] = {}
    for number, _, value in fields(data):
        if number not in spec:
            continue
        name, read, repeated = spec[number]
        if repeated:
            out.setdefault(name, []).append(read(value))
        else:
            out[name] = read(value)
    return out


def _hex(value: Any) -> str:
    return value.hex() if isinstance(value, bytes) else ""


def _kv(value: Any) -> dict[str, Any]:
    return key_value(value)


def _status(data: bytes) -> dict[str, Any]:
    return _message(data, {2: ("message", _text, False), 3: ("code", int, False)})


def _event(data: bytes) -> dict[str, Any]:
    return _message(data, {1: ("timeUnixNano", str, False), 2: ("name", _text, False), 3: ("attributes", _kv, True)})


def span(data: bytes) -> dict[str, Any]:
    return _message(
        data,
        {
            1: ("traceId", _hex, False),
            2: ("spanId", _hex, False),
            4: ("parentSpanId", _hex, False),
            5: ("name", _text, False),
            6: ("kind", int, False),
            7: ("startTimeUnixNano", str, False),
            8: ("endTimeUnixNano", str, False),
            9: ("attributes", _kv, True),
            11: ("events", _event, True),
            15: ("status", _status, False),
        },
    )


def _resource(data: bytes) -> dict[str, Any]:
    return _message(data, {1: ("attributes", _kv, True)})


def _scope_spans(data: bytes) -> dict[str, Any]:
    return _message(data, {2: ("spans", span, True)})


def _resource_spans(data: bytes) -> dict[str, Any]:
    return _message(data, {1: ("resource", _resource, False), 2: ("scopeSpans", _scope_spans, True)})


def export_request(data: bytes) -> dict[str, Any]:
    """An ExportTraceServiceRequest in protobuf, as OTLP/JSON's object (ValueError when malformed)."""
    return _message(data, {1: ("resourceSpans", _resource_spans, True)})


def _put_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def export_response(rejected: int, message: str) -> bytes:
    """An ExportTraceServiceResponse in protobuf: empty when everything was accepted, else its partial_success."""
    if not rejected and not message:
        return b""
    text = message.encode("utf-8")
    inner = b"\x08" + _put_varint(rejected) + b"\x12" + _put_varint(len(text)) + text
    return b"\x0a" + _put_varint(len(inner)) + inner
