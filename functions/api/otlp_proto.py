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


VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _expect(number: int, wire: int, wanted: int) -> None:
    """ValueError unless field `number` came with the wire type its declaration has."""
    if wire != wanted:
        raise ValueError(f"field {number} has wire type {wire}, not {wanted}")


ANY_VALUE_WIRES = {1: LENGTH, 2: VARINT, 3: VARINT, 4: FIXED64, 5: LENGTH, 6: LENGTH, 7: LENGTH}


def any_value(data: bytes, depth: int = 0) -> dict[str, Any]:
    if depth > MAX_DEPTH:
        raise ValueError("attribute values nest too deep")
    for number, wire, value in fields(data):
        if number not in ANY_VALUE_WIRES:
            continue
        _expect(number, wire, ANY_VALUE_WIRES[number])
        if number == 1:
            return {"stringValue": _text(value)}
        if number == 2:
            return {"boolValue": bool(value)}
        if number == 3:
            return {"intValue": str(_signed(value))}
        if number == 4:
            return {"doubleValue": struct.unpack("<d", struct.pack("<Q", value))[0]}
        if number == 5:
            return {"arrayValue": {"values": _repeated(value, 1, lambda v: any_value(v, depth + 1))}}
        if number == 6:
            return {"kvlistValue": {"values": _repeated(value, 1, lambda v: key_value(v, depth + 1))}}
        return {"bytesValue": base64.b64encode(value).decode()}
    return {}


def _repeated(data: bytes, number: int, read: Callable[[bytes], Any]) -> list[Any]:
    """The values of the repeated message field `number` of a message."""
    out = []
    for n, wire, value in fields(data):
        if n == number:
            _expect(n, wire, LENGTH)
            out.append(read(value))
    return out


def key_value(data: bytes, depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {"key": "", "value": {}}
    for number, wire, value in fields(data):
        if number == 1:
            _expect(number, wire, LENGTH)
            out["key"] = _text(value)
        elif number == 2:
            _expect(number, wire, LENGTH)
            out["value"] = any_value(value, depth + 1)
    return out


Spec = dict[int, tuple[str, int, Callable[[Any], Any], bool]]  # number -> (JSON name, wire type, reader, repeated)


def _message(data: bytes, spec: Spec) -> dict[str, Any]:
    """A message read by `spec`; a declared field that arrives with another wire type is ValueError."""
    out: dict[str, Any] = {}
    for number, wire, value in fields(data):
        if number not in spec:
            continue
        name, wanted, read, repeated = spec[number]
        _expect(number, wire, wanted)
        if repeated:
            out.setdefault(name, []).append(read(value))
        else:
            out[name] = read(value)
    return out


def _hex(value: bytes) -> str:
    return value.hex()


def _kv(value: bytes) -> dict[str, Any]:
    return key_value(value)


def _status(data: bytes) -> dict[str, Any]:
    return _message(data, {2: ("message", LENGTH, _text, False), 3: ("code", VARINT, int, False)})


def _event(data: bytes) -> dict[str, Any]:
    return _message(
        data,
        {
            1: ("timeUnixNano", FIXED64, str, False),
            2: ("name", LENGTH, _text, False),
            3: ("attributes", LENGTH, _kv, True),
        },
    )


def span(data: bytes) -> dict[str, Any]:
    return _message(
        data,
        {
            1: ("traceId", LENGTH, _hex, False),
            2: ("spanId", LENGTH, _hex, False),
            4: ("parentSpanId", LENGTH, _hex, False),
            5: ("name", LENGTH, _text, False),
            6: ("kind", VARINT, int, False),
            7: ("startTimeUnixNano", FIXED64, str, False),
            8: ("endTimeUnixNano", FIXED64, str, False),
            9: ("attributes", LENGTH, _kv, True),
            11: ("events", LENGTH, _event, True),
            15: ("status", LENGTH, _status, False),
        },
    )


def _resource(data: bytes) -> dict[str, Any]:
    return _message(data, {1: ("attributes", LENGTH, _kv, True)})


def _scope_spans(data: bytes) -> dict[str, Any]:
    return _message(data, {2: ("spans", LENGTH, span, True)})


def _resource_spans(data: bytes) -> dict[str, Any]:
    return _message(data, {1: ("resource", LENGTH, _resource, False), 2: ("scopeSpans", LENGTH, _scope_spans, True)})


def count_spans(data: bytes, limit: int) -> int:
    """How many spans an ExportTraceServiceRequest holds, read off the wire without building any of them
    (ValueError when malformed), counting no further than one past `limit`: a request can be refused for
    its size before it costs memory or time."""
    total = 0
    for resource_spans in _repeated(data, 1, bytes):
        for scope_spans in _repeated(resource_spans, 2, bytes):
            for number, wire, _ in fields(scope_spans):
                if number == 2:
                    _expect(number, wire, LENGTH)
                    total += 1
                    if total > limit:
                        return total
    return total


def export_request(data: bytes) -> dict[str, Any]:
    """An ExportTraceServiceRequest in protobuf, as OTLP/JSON's object (ValueError when malformed)."""
    return _message(data, {1: ("resourceSpans", LENGTH, _resource_spans, True)})


def put_varint(value: int) -> bytes:
    """`value` (at least 0) in protobuf's varint encoding."""
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def length_delimited(number: int, payload: bytes) -> bytes:
    """Field `number` holding `payload` (wire type 2: a message, a string or bytes)."""
    return put_varint(number << 3 | 2) + put_varint(len(payload)) + payload


def export_response(rejected: int, message: str) -> bytes:
    """An ExportTraceServiceResponse in protobuf: empty when everything was accepted, else its partial_success."""
    if not rejected and not message:
        return b""
    text = message.encode("utf-8")
    return length_delimited(1, b"\x08" + put_varint(rejected) + length_delimited(2, text))
