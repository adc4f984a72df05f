"""Content blocks as the common model shapes write them (the store's own parts, OpenAI Chat Completions,
Anthropic Messages, Bedrock Converse as Strands keeps it, LangChain's standard blocks), read as canonical
parts. Pure functions of JSON values: no framework package is needed."""

from __future__ import annotations

import json
from collections.abc import Iterable
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
    """One content block as canonical parts (usually one)."""
    if isinstance(block, str):
        return [Part(type="text", text=block)] if block else []
    if not isinstance(block, dict):
        return [] if block is None else [Part(type="data", data=block)]
    kind = block.get("type")
    if kind in ("text", "input_text", "output_text") or (kind is None and isinstance(block.get("text"), str)):
        return [Part(type="text", text=str(block.get("text") or ""))]
    if kind == "refusal":
        return [Part(type="text", text=str(block.get("refusal") or ""))]
    if kind in ("tool_call", "tool_use", "function_call", "server_tool_use"):
        given = block.get("arguments", block.get("input", block.get("args")))
        return [tool_call(block.get("id") or block.get("call_id"), block.get("name"), arguments(given))]
    if kind in ("tool_result", "function_call_output"):
        call_id = block.get("tool_use_id") or block.get("call_id") or block.get("tool_call_id")
        failed = bool(block.get("is_error")) or block.get("status") == "error"
        return [tool_result(call_id, block.get("content", block.get("output")), failed, block.get("name"))]
    if kind in ("thinking", "reasoning", "redacted_thinking"):
        return [Part(type="reasoning", text=string(block.get("thinking") or block.get("text")) or "")]
    if kind in ("image", "image_url", "input_image"):
        return [_media("image", block)]
    if kind in ("file", "document", "input_file", "audio", "input_audio", "video"):
        return [_media("file", block)]
    if "toolUse" in block and isinstance(block["toolUse"], dict):
        use = block["toolUse"]
        return [tool_call(use.get("toolUseId"), use.get("name"), arguments(use.get("input")))]
    if "toolResult" in block and isinstance(block["toolResult"], dict):
        result = block["toolResult"]
        return [tool_result(result.get("toolUseId"), result.get("content"), result.get("status") == "error")]
    if "reasoningContent" in block and isinstance(block["reasoningContent"], dict):
        reasoning = block["reasoningContent"].get("reasoningText") or {}
        return [
            Part(type="reasoning", text=string(reasoning.get("text") if isinstance(reasoning, dict) else None) or "")
        ]
    for key, part_type in (("image", "image"), ("document", "file"), ("video", "file")):
        if isinstance(block.get(key), dict):
            return [_media(part_type, block[key], fmt=block[key].get("format"))]
    if "json" in block and len(block) == 1:
        return [Part(type="text", text=as_json(block["json"]))]
    if "cachePoint" in block or "guardContent" in block:
        return []
    return [Part(type="data", data=block)]


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
    candidates = [url, block.get("url"), block.get("file_uri"), block.get("uri"), source.get("url")]
    location = obj(source.get("s3Location"))
    candidates.append(location.get("uri"))
    reference = next((c for c in candidates if isinstance(c, str) and c.startswith(REFERENCE_SCHEMES)), None)
    inline = any(k in block for k in ("data", "bytes", "file_data", "image_bytes")) or any(
        k in source for k in ("data", "bytes")
    )
    if isinstance(url, str) and url.startswith("data:"):
        inline = True
    media = block.get("media_type") or block.get("mime_type") or source.get("media_type") or block.get("mimeType")
    if media is None and isinstance(fmt, str):
        media = f"{part_type if part_type == 'image' else 'application'}/{fmt}"
    return Part(
        type=part_type,
        name=string(block.get("name") or block.get("filename") or block.get("display_name")),
        media_type=string(media),
        url=reference,
        inline=inline or None,
    )


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
