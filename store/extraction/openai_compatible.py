"""Any OpenAI-compatible chat endpoint as extraction's model: what users run locally (Ollama, vLLM, LM Studio,
llama.cpp's server) and hosted ones. One POST to `{base_url}/chat/completions` per question, from the standard
library (no SDK to install).

The answer's shape is asked for with `response_format` (`json_schema`, strict, by default; `json_object` for
servers that take only that, the schema then given in the instructions). Outcomes: HTTP 429 → ModelThrottled;
408, 504 and a read timeout → ModelTimeout; other 5xx, a connection failure or a body that is not JSON →
ModelUnavailable; other 4xx → ModelRejected; a `refusal`, or `finish_reason` "content_filter" → ModelRefused;
`finish_reason` "length" or content that is not a JSON object → ModelOutputInvalid."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from typing import Any

from store.errors import InvalidInput
from store.extraction.models import (
    ModelError,
    ModelOutputInvalid,
    ModelRefused,
    ModelRejected,
    ModelReply,
    ModelRequest,
    ModelThrottled,
    ModelTimeout,
    ModelUnavailable,
    json_object,
)

FORMATS = ("json_schema", "json_object")
MAX_ANSWER_BYTES = 4 * 1024 * 1024  # more than any answer of max_tokens: a larger body is not read


class OpenAICompatibleModel:
    """The chat model `model` at `base_url` (for example "http://127.0.0.1:11434/v1", Ollama's), with an
    optional `api_key` (sent as a bearer token), waiting at most `timeout` seconds for an answer."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        response_format: str = "json_schema",
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise InvalidInput("base_url must be an http(s) URL")
        if not isinstance(model, str) or not model.strip():
            raise InvalidInput("model must name the endpoint's model")
        if response_format not in FORMATS:
            raise InvalidInput(f"response_format must be one of {', '.join(FORMATS)}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 900:
            raise InvalidInput("timeout must be a number of seconds from 0 to 900")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model_id = model
        self.api_key = api_key
        self.timeout = float(timeout)
        self.response_format = response_format

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The chat completion request sent for `request`."""
        system = request.system
        if self.response_format == "json_schema":
            shape: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": request.schema, "strict": True},
            }
        else:
            shape = {"type": "json_object"}
            system += "\n\nAnswer with one JSON object that follows this JSON schema:\n" + json.dumps(request.schema)
        return {
            "model": self.model_id,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": request.prompt}],
            "temperature": 0,
            "max_tokens": request.max_tokens,
            "response_format": shape,
        }

    def __call__(self, request: ModelRequest) -> ModelReply:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        sent = urllib.request.Request(
            self.url, data=json.dumps(self.body(request)).encode(), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(sent, timeout=self.timeout) as response:  # nosec B310: http(s) checked
                raw = response.read(MAX_ANSWER_BYTES + 1)
        except urllib.error.HTTPError as exc:
            raise _status(exc.code) from None
        except TimeoutError:
            raise ModelTimeout("the endpoint did not answer in time") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                raise ModelTimeout("the endpoint did not answer in time") from None
            raise ModelUnavailable("the endpoint could not be reached") from None
        except (OSError, ValueError) as exc:
            raise ModelUnavailable(f"the endpoint failed: {type(exc).__name__}") from None
        return _reply(raw, self.model_id)


def _status(code: int) -> ModelError:
    if code == 429:
        return ModelThrottled("HTTP 429")
    if code in (408, 504):
        return ModelTimeout(f"HTTP {code}")
    if code >= 500:
        return ModelUnavailable(f"HTTP {code}")
    return ModelRejected(f"HTTP {code}")


def _reply(raw: bytes, model_id: str) -> ModelReply:
    if len(raw) > MAX_ANSWER_BYTES:
        raise ModelOutputInvalid("the endpoint's answer is larger than any answer asked for")
    try:
        answer = json.loads(raw)
        choice = answer["choices"][0]
        message = choice.get("message") or {}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise ModelUnavailable("the endpoint's answer is not a chat completion") from None
    usage = answer.get("usage") if isinstance(answer.get("usage"), dict) else {}
    spent = {
        "input_tokens": _count(usage.get("prompt_tokens")),
        "output_tokens": _count(usage.get("completion_tokens")),
    }
    if message.get("refusal") or choice.get("finish_reason") == "content_filter":
        raise ModelRefused("the model refused", **spent)
    if choice.get("finish_reason") == "length":
        raise ModelOutputInvalid("the answer was cut at its token limit", **spent)
    try:
        data = json_object(message.get("content"))
    except ModelOutputInvalid as error:
        raise ModelOutputInvalid(str(error), **spent) from None
    return ModelReply(data, spent["input_tokens"], spent["output_tokens"], model_id)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
