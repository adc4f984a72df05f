"""Content blocks as the common model shapes write them (the store's own parts, OpenAI Chat Completions,
Anthropic Messages, Bedrock Converse as Strands keeps it, LangChain's standard blocks), read as canonical
parts. Pure functions of JSON values: no framework package is needed."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from itertools import islice
from typing import Any

from store.conversation.model import MAX_PARTS, Part
from store.core import codec
from store.errors import StoreError

REFERENCE_SCHEMES = ("http://", "https://", "s3://", "gs://", "file://", "artifact:")
# How deep JSON text decoded from a message (a tool call's arguments given as a string) may nest: no deeper
# than the message could have held it as JSON (the message, its content, a block and the arguments' field).
DECODED_DEPTH = codec.MAX_DEPTH - 4


def parts_of(content: Any) -> list[Part]:
    """The parts of message content: a string is one text part; a list is its blocks in order (at most
    MAX_PARTS + 1 parts are built: the view shows MAX_PARTS and says how many it left out); a single block (a
    dict) is that block."""
    if content is None:
        return []
    if isinstance(content, str):
        return [Part(type="text", text=content)] if content else []
    if isinstance(content, list):
        return first_parts(block_parts(block) for block in content)
    return block_parts(content)


def first_parts(groups: Iterable[list[Part]]) -> list[Part]:
    """The parts of `groups` in order, at most MAX_PARTS + 1 of them (the rest are never built)."""
    return list(islice((p for group in groups for p in group), MAX_PARTS + 1))


def block_parts(block: Any) -> list[Part]:
    """One content block as canonical parts (usually one): a typed block by its `type` (BY_TYPE), a Bedrock
    Converse block by the key that holds it (BY_KEY), anything else kept as data."""
    if isinstance(block, str):
        return [Part(type="text", text=block)] if block else []
    if not isinstance(block, dict):
        return [] if block is None else [Part(type="data", data=block)]
    kind = block.get("type")
    read = BY_TYPE.get(kind) if isinstance(kind, str) else None
    if read is None and kind is None and isinstance(block.get("text"), str):
        read = _text
    return read(block) if read is not None else _untyped(block)


def _untyped(block: dict[str, Any]) -> list[Part]:
    """A block with no type the store reads: a Bedrock Converse block (BY_KEY, `json`; cache points and guard
    content are no parts), else kept as data."""
    for key, read_held in BY_KEY:
        if isinstance(block.get(key), dict):
            return read_held(block[key])
    if "json" in block and len(block) == 1:
        return [Part(type="text", text=as_json(block["json"]))]
    if "cachePoint" in block or "guardContent" in block:
        return []
    return [Part(type="data", data=block)]


def _text(block: dict[str, Any]) -> list[Part]:
    return [Part(type="text", text=str(block.get("text") or ""))]


def _refusal(block: dict[str, Any]) -> list[Part]:
    return [Part(type="text", text=str(block.get("refusal") or ""))]


def _call(block: dict[str, Any]) -> list[Part]:
    given = block.get("arguments", block.get("input", block.get("args")))
    return [tool_call(block.get("id") or block.get("call_id"), block.get("name"), arguments(given))]


def _result(block: dict[str, Any]) -> list[Part]:
    call_id = block.get("tool_use_id") or block.get("call_id") or block.get("tool_call_id")
    failed = bool(block.get("is_error")) or block.get("status") == "error"
    return [tool_result(call_id, block.get("content", block.get("output")), failed, block.get("name"))]


def _reasoning(block: dict[str, Any]) -> list[Part]:
    return [Part(type="reasoning", text=string(block.get("thinking") or block.get("text")) or "")]


def _image(block: dict[str, Any]) -> list[Part]:
    return [_media("image", block)]


def _file(block: dict[str, Any]) -> list[Part]:
    return [_media("file", block)]


BY_TYPE: dict[str, Callable[[dict[str, Any]], list[Part]]] = {
    **dict.fromkeys(("text", "input_text", "output_text"), _text),
    "refusal": _refusal,
    **dict.fromkeys(("tool_call", "tool_use", "function_call", "server_tool_use"), _call),
    **dict.fromkeys(("tool_result", "function_call_output"), _result),
    **dict.fromkeys(("thinking", "reasoning", "redacted_thinking"), _reasoning),
    **dict.fromkeys(("image", "image_url", "input_image"), _image),
    **dict.fromkeys(("file", "document", "input_file", "audio", "input_audio", "video"), _file),
}  # a typed block (the store's own, OpenAI's, Anthropic's, LangChain's) by its `type`


def _converse_call(use: dict[str, Any]) -> list[Part]:
    return [tool_call(use.get("toolUseId"), use.get("name"), arguments(use.get("input")))]


def _converse_result(result: dict[str, Any]) -> list[Part]:
    return [tool_result(result.get("toolUseId"), result.get("content"), result.get("status") == "error")]


def _converse_reasoning(held: dict[str, Any]) -> list[Part]:
    reasoning = held.get("reasoningText") or {}
    return [Part(type="reasoning", text=string(reasoning.get("text") if isinstance(reasoning, dict) else None) or "")]


def _converse_media(part_type: str) -> Callable[[dict[str, Any]], list[Part]]:
    return lambda held: [_media(part_type, held, fmt=held.get("format"))]


BY_KEY: tuple[tuple[str, Callable[[dict[str, Any]], list[Part]]], ...] = (
    ("toolUse", _converse_call),
    ("toolResult", _converse_result),
    ("reasoningContent", _converse_reasoning),
    ("image", _converse_media("image")),
    ("document", _converse_media("file")),
    ("video", _converse_media("file")),
)  # a Bedrock Converse block (as Strands keeps it) by the key holding it, in the order they are looked for


def tool_call(call_id: Any, name: Any, args: Any) -> Part:
    """A tool call part."""
    return Part(type="tool_call", id=string(call_id), name=string(name), arguments=args)


def tool_result(call_id: Any, content: Any, is_error: bool | None, name: Any = None) -> Part:
    """A tool result part, its content as text (`text_of`)."""
    return Part(
        type="tool_result", call_id=string(call_id), name=string(name), content=text_of(content), is_error=is_error
    )


def arguments(value: Any) -> Any:
    """A tool call's arguments: the JSON value when they are JSON text (as OpenAI sends them) that the store
    itself could keep (nested at most DECODED_DEPTH levels, no lone surrogates, NaN, Infinity or numbers
    beyond a double: `codec.loads`), else as given (text stays text)."""
    if isinstance(value, str):
        try:
            return codec.loads(value, "a tool call's arguments", max_depth=DECODED_DEPTH)
        except (StoreError, ValueError):
            return value
    return value


def text_of(value: Any) -> str:
    """The text of a tool result's content: a string as it is, blocks' text joined, other JSON compact."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and len(value) <= MAX_PARTS:
        texts = [p.text or p.content or "" for block in value for p in block_parts(block)]
        if any(texts):
            return "\n".join(t for t in texts if t)
    if isinstance(value, dict):
        for key in ("text", "output", "result", "content"):
            if isinstance(value.get(key), str) and len(value) <= 2:
                return str(value[key])
    return as_json(value)


def _media(part_type: str, block: dict[str, Any], *, fmt: Any = None) -> Part:
    """An image or file part: its reference when it has one, `inline` when its bytes are in the message."""
    source = obj(block.get("source"))
    url = block.get("image_url") if part_type == "image" else block.get("file_url")
    if isinstance(url, dict):
        url = url.get("url")
    media = block.get("media_type") or block.get("mime_type") or source.get("media_type") or block.get("mimeType")
    if media is None and isinstance(fmt, str):
        media = f"{part_type if part_type == 'image' else 'application'}/{fmt}"
    return Part(
        type=part_type,
        name=string(block.get("name") or block.get("filename") or block.get("display_name")),
        media_type=string(media),
        url=_reference(block, source, url),
        inline=_inline(block, source, url) or None,
    )


def _reference(block: dict[str, Any], source: dict[str, Any], url: Any) -> str | None:
    """Where an image or file is (an http(s), s3, gs, file or artifact URL), among the places formats put it."""
    candidates = [url, block.get("url"), block.get("file_uri"), block.get("uri"), source.get("url")]
    candidates.append(obj(source.get("s3Location")).get("uri"))
    return next((c for c in candidates if isinstance(c, str) and c.startswith(REFERENCE_SCHEMES)), None)


def _inline(block: dict[str, Any], source: dict[str, Any], url: Any) -> bool:
    """Whether an image's or file's bytes are in the message (its data, or a data: URL)."""
    if any(k in block for k in ("data", "bytes", "file_data", "image_bytes")) or any(
        k in source for k in ("data", "bytes")
    ):
        return True
    return isinstance(url, str) and url.startswith("data:")


def items(value: Any) -> list[Any]:
    """`value` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def obj(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def string(value: Any) -> str | None:
    """`value` as a string (None stays None)."""
    return value if isinstance(value, str) else None if value is None else str(value)


def as_json(value: Any) -> str:
    """Compact JSON text of a stored value (its `str` when it is not JSON)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return str(value)
