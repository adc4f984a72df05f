"""Each framework's stored message (its dialect) read as the canonical message. A dialect is recognised
by the message's own shape, so sessions written before this module existed read the same way, and no
framework package is needed (the API function's bundle has none).

- `store`: the store's own messages (a string, or parts in OpenAI Chat Completions, Anthropic or Bedrock
  Converse shape, `tool_calls` and `tool_call_id` as Chat Completions has them); Strands' messages are
  Converse messages with their envelope in `metadata.strands` (dialect `strands`);
- `openai-agents`: a Responses API input item (`{"role": ...}`, `{"type": "function_call", ...}`);
- `adk`: a whole ADK event (`author`, `invocation_id`, `content.parts`, `usage_metadata`);
- `langchain`: LangChain's `message_to_dict` (`{"type": "human", "data": {...}}`), as the LangChain
  history and the LangGraph saver's conversation keep it;
- `langgraph`: a LangGraph saver's log record (a checkpoint or writes, encoded): no conversation turn."""

from __future__ import annotations

from typing import Any

from store.conversation.blocks import (
    arguments,
    as_json,
    block_parts,
    first_parts,
    items,
    obj,
    parts_of,
    string,
    tool_call,
    tool_result,
)
from store.conversation.model import LEFT_OUT, MAX_PARTS, CanonicalMessage, Part, Role, ViewedMessage
from store.models import Message, MessageRecord, TokenUsage

ROLES: dict[str, Role] = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "tool": "tool",
    "function": "tool",
    "system": "system",
    "developer": "system",
}
OPENAI_ITEM_TYPES = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "reasoning",
        "computer_call",
        "computer_call_output",
        "file_search_call",
        "web_search_call",
        "image_generation_call",
        "code_interpreter_call",
        "local_shell_call",
        "local_shell_call_output",
        "shell_call",
        "shell_call_output",
        "apply_patch_call",
        "apply_patch_call_output",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "custom_tool_call",
        "custom_tool_call_output",
        "compaction",
        "item_reference",
    }
)
LANGCHAIN_TYPES = frozenset(
    {"human", "ai", "tool", "system", "chat", "function", "AIMessageChunk", "HumanMessageChunk"}
)
LANGGRAPH_LOG = "lg."  # the saver's log roles: lg.c.<ns> checkpoints, lg.w.<ns> writes, lg.seal


def canonical(record: Message) -> CanonicalMessage:
    """`record` read as the canonical message (its dialect recognised by its shape; an unknown shape is
    read as the store's own, unknown parts kept as `data` parts). It never raises and stays within the
    message's own size: at most MAX_PARTS parts (then a last text part says the rest is left out,
    `truncated`), JSON decoded from text only within the store's codec bounds. The role is the one the
    writer stored (`shown_role`): a dialect refines the parts, never the role of a user's message. A message
    no dialect can read is shown raw: one text part of its content's JSON (`raw`)."""
    try:
        view = _read(record)
    except Exception:  # a shape no dialect foresaw: shown as it is rather than not at all
        return _raw(record)
    role = shown_role(record.role, view)
    if len(view.parts) > MAX_PARTS:
        parts = [*view.parts[:MAX_PARTS], Part(type="text", text=LEFT_OUT)]
        return view.model_copy(update={"role": role, "parts": parts, "truncated": True})
    return view if role == view.role else view.model_copy(update={"role": role})


def shown_role(stored: str, view: CanonicalMessage) -> Role:
    """The role a message is shown with: the one its writer stored when that is a role of the model (the
    message's content, which may hold anybody's words, never promotes it); a framework's own role name
    (an agent's, an item type's) leaves it to the dialect. Two refinements keep to what the writer said: an
    assistant's turn that only returns tool results is the tool's, and so is a user turn of tool results
    when the writer declared it a Strands message (Bedrock Converse sends tool results in a user turn)."""
    role = ROLES.get(stored.lower())
    if role is None:
        return view.role
    if view.role == "tool" and (role == "assistant" or (role == "user" and view.dialect == "strands")):
        return "tool"
    return role


def _raw(record: Message) -> CanonicalMessage:
    role = ROLES.get(record.role.lower(), "assistant")
    text = as_json(record.content)
    return CanonicalMessage(role=role, parts=[Part(type="text", text=text)], usage=record.usage, raw=True)


def _read(record: Message) -> CanonicalMessage:
    content = record.content
    if isinstance(content, dict):
        if _is_langchain(content):
            return _langchain(record, content)
        if _is_adk(content):
            return _adk(record, content)
        if _is_openai_item(record, content):
            return _openai_item(record, content)
    if record.role.startswith(LANGGRAPH_LOG):
        return CanonicalMessage(role="system", author=record.role, dialect="langgraph")
    return _store(record)


def with_reported_usage(message: dict[str, Any]) -> dict[str, Any]:
    """`message` (a dict to append) with the token usage its framework payload reports (ADK's
    `usage_metadata`, LangChain's `usage_metadata`) as its `usage`, so that the session's totals count it;
    unchanged when it reports none or already has a usage."""
    if message.get("usage") is not None:
        return message
    usage = canonical(Message.model_validate(message)).usage
    return message if usage is None else {**message, "usage": usage.numbers()}


def viewed(record: MessageRecord) -> ViewedMessage:
    """`record` with its canonical view beside it (what the HTTP API and exports give)."""
    return ViewedMessage.model_validate({**record.model_dump(), "canonical": canonical(record)})


# ---------------------------------------------------------------- the store's own, and Strands'


def _store(record: Message) -> CanonicalMessage:
    extra = record.model_extra or {}
    parts = parts_of(record.content)
    # Chat Completions: the calls beside the content
    parts += first_parts(_chat_call(call) for call in items(extra.get("tool_calls")))
    role = ROLES.get(record.role.lower(), "assistant")
    if record.tool_call_id and role == "tool":
        parts = [tool_result(record.tool_call_id, record.content, None, record.name)]
    elif parts and role == "user" and all(p.type == "tool_result" for p in parts):
        role = "tool"  # Anthropic and Converse send tool results in a user turn (`shown_role` decides)
    meta = record.metadata or {}
    strands = meta.get("strands") if isinstance(meta.get("strands"), dict) else None
    usage = record.usage
    if usage is None and strands is not None:  # Strands keeps a model call's usage in the message's metadata
        reported = obj(obj(obj(strands.get("message")).get("metadata")).get("usage"))
        usage = usage_of(
            {
                "input_tokens": reported.get("inputTokens"),
                "output_tokens": reported.get("outputTokens"),
                "total_tokens": reported.get("totalTokens"),
                "cache_read_tokens": reported.get("cacheReadInputTokens"),
                "cache_write_tokens": reported.get("cacheWriteInputTokens"),
            }
        )
    model = extra.get("model") if isinstance(extra.get("model"), str) else meta.get("model")
    author = record.role if ROLES.get(record.role.lower()) is None else record.name
    return CanonicalMessage(
        role=role,
        parts=parts,
        model=model if isinstance(model, str) else None,
        usage=usage,
        author=author,
        dialect="strands" if strands is not None else "store",
    )


def _chat_call(call: Any) -> list[Part]:
    if not isinstance(call, dict):
        return []
    function = obj(call.get("function")) or call
    return [tool_call(call.get("id"), function.get("name"), arguments(function.get("arguments")))]


# ---------------------------------------------------------------- OpenAI Agents SDK (Responses API items)


def _is_openai_item(record: Message, item: dict[str, Any]) -> bool:
    kind = item.get("type")
    if isinstance(kind, str) and kind in OPENAI_ITEM_TYPES:
        return True
    if isinstance(kind, str) and kind.endswith(("_call", "_call_output")) and record.role == kind:
        return True
    return isinstance(item.get("role"), str) and item.get("role") == record.role and "content" in item


def _openai_item(record: Message, item: dict[str, Any]) -> CanonicalMessage:
    kind = item.get("type")
    role: Role
    if kind == "function_call" or (isinstance(kind, str) and kind.endswith("_call")):
        given = item.get("arguments", item.get("input", item.get("action")))
        parts = [tool_call(item.get("call_id") or item.get("id"), item.get("name") or kind, arguments(given))]
        role = "assistant"
    elif isinstance(kind, str) and kind.endswith("_output"):
        output = item.get("output")
        parts = [tool_result(item.get("call_id"), output, None)]
        role = "tool"
    elif kind == "reasoning":
        texts = [s.get("text") for s in item.get("summary") or [] if isinstance(s, dict)]
        texts += [c.get("text") for c in item.get("content") or [] if isinstance(c, dict)]
        parts = [Part(type="reasoning", text="\n".join(t for t in texts if isinstance(t, str)))]
        role = "assistant"
    elif kind in ("compaction", "item_reference", "mcp_list_tools"):
        return CanonicalMessage(role="system", author=str(kind), dialect="openai-agents")
    else:
        parts = parts_of(item.get("content"))
        role = ROLES.get(str(item.get("role", "assistant")).lower(), "assistant")
    return CanonicalMessage(role=role, parts=parts, usage=record.usage, author=None, dialect="openai-agents")


# ---------------------------------------------------------------- Google ADK (events)


def _is_adk(event: dict[str, Any]) -> bool:
    return "author" in event and ("invocation_id" in event or "invocationId" in event)


def _adk(record: Message, event: dict[str, Any]) -> CanonicalMessage:
    content = obj(event.get("content"))
    parts = first_parts(_adk_part(part) for part in items(content.get("parts")) if isinstance(part, dict))
    author = string(event.get("author"))
    role: Role = "user" if content.get("role") == "user" or author == "user" else "assistant"
    if parts and all(p.type == "tool_result" for p in parts):
        role = "tool"
    meta = event.get("usage_metadata") or event.get("usageMetadata")
    usage = record.usage or _adk_usage(meta)
    model = event.get("model_version") or event.get("modelVersion")
    return CanonicalMessage(role=role, parts=parts, model=string(model), usage=usage, author=author, dialect="adk")


def _adk_part(part: dict[str, Any]) -> list[Part]:
    call = part.get("function_call") or part.get("functionCall")
    if isinstance(call, dict):
        return [tool_call(call.get("id"), call.get("name"), call.get("args"))]
    response = part.get("function_response") or part.get("functionResponse")
    if isinstance(response, dict):
        body = response.get("response")
        error = isinstance(body, dict) and "error" in body and len(body) == 1
        return [tool_result(response.get("id"), body, error, response.get("name"))]
    if isinstance(part.get("text"), str):
        kind = "reasoning" if part.get("thought") else "text"
        return [Part(type=kind, text=part["text"])]
    media = _adk_media(part)
    return media if media is not None else block_parts(part)


def _adk_media(part: dict[str, Any]) -> list[Part] | None:
    """A Gemini part's inline or referenced data as an image or file part (None: it holds neither)."""
    inline = part.get("inline_data") or part.get("inlineData")
    held = inline if isinstance(inline, dict) else part.get("file_data") or part.get("fileData")
    if not isinstance(held, dict):
        return None
    media = string(held.get("mime_type") or held.get("mimeType"))
    kind = "image" if (media or "").startswith("image/") else "file"
    name = string(held.get("display_name"))
    if isinstance(inline, dict):
        return [Part(type=kind, media_type=media, name=name, inline=True)]
    return [Part(type=kind, media_type=media, name=name, url=string(held.get("file_uri") or held.get("fileUri")))]


def _adk_usage(meta: Any) -> TokenUsage | None:
    if not isinstance(meta, dict):
        return None
    values = {
        "input_tokens": meta.get("prompt_token_count", meta.get("promptTokenCount")),
        "output_tokens": meta.get("candidates_token_count", meta.get("candidatesTokenCount")),
        "total_tokens": meta.get("total_token_count", meta.get("totalTokenCount")),
        "cache_read_tokens": meta.get("cached_content_token_count", meta.get("cachedContentTokenCount")),
    }
    return usage_of(values)


# ---------------------------------------------------------------- LangChain (message_to_dict)


def _is_langchain(content: dict[str, Any]) -> bool:
    return content.get("type") in LANGCHAIN_TYPES and isinstance(content.get("data"), dict) and len(content) == 2


def _langchain(record: Message, content: dict[str, Any]) -> CanonicalMessage:
    data = content["data"]
    kind = str(content["type"]).removesuffix("MessageChunk").lower()
    kind = {"aimessage": "ai", "humanmessage": "human"}.get(kind, kind)
    role = ROLES.get(kind, "assistant")
    if kind == "chat":
        role = ROLES.get(str(data.get("role", "")).lower(), "assistant")
    if role == "tool":
        is_error = data.get("status") == "error"
        parts = [tool_result(data.get("tool_call_id"), data.get("content"), is_error, data.get("name"))]
    else:
        parts = [p for p in parts_of(data.get("content")) if not (p.type == "tool_call" and data.get("tool_calls"))]
        calls = items(data.get("tool_calls"))
        parts += first_parts(
            [tool_call(c.get("id"), c.get("name"), c.get("args"))] if isinstance(c, dict) else [] for c in calls
        )
    meta = obj(data.get("response_metadata"))
    model = meta.get("model_name") or meta.get("model") or meta.get("model_id")
    usage = record.usage or _langchain_usage(data.get("usage_metadata"))
    return CanonicalMessage(
        role=role, parts=parts, model=string(model), usage=usage, author=string(data.get("name")), dialect="langchain"
    )


def _langchain_usage(meta: Any) -> TokenUsage | None:
    if not isinstance(meta, dict):
        return None
    details = obj(meta.get("input_token_details"))
    return usage_of(
        {
            "input_tokens": meta.get("input_tokens"),
            "output_tokens": meta.get("output_tokens"),
            "total_tokens": meta.get("total_tokens"),
            "cache_read_tokens": details.get("cache_read"),
            "cache_write_tokens": details.get("cache_creation"),
        }
    )


# ---------------------------------------------------------------- helpers


def usage_of(values: dict[str, Any]) -> TokenUsage | None:
    """A TokenUsage of the whole non-negative integer values given (None when there is none)."""
    kept = {k: int(v) for k, v in values.items() if isinstance(v, int | float) and not isinstance(v, bool) and v >= 0}
    return TokenUsage.model_validate(kept) if kept else None
