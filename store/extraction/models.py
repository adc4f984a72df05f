"""What extraction asks a chat model, what it gets back, and how a model's failure is named.

A `ChatModel` is any callable taking a `ModelRequest` (instructions, the user's content, the JSON schema the
answer must follow) and returning a `ModelReply` (the answer as a JSON object, and the tokens it cost). Three
are provided: `store.extraction.bedrock.BedrockConverseModel` (deployed), `store.extraction.openai_compatible.
OpenAICompatibleModel` (Ollama, vLLM, LM Studio, any /v1/chat/completions), and `FunctionModel` (the caller's
function). A model fails only with one of the `ModelError`s below; each has one outcome in a run
(`store.extraction.runs`): the transient ones are retried with backoff within the run's budget, the others
end the run as failed, with nothing written."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from store.errors import InvalidInput, StoreError


@dataclass(frozen=True)
class ModelRequest:
    """One question to a model: `system` instructions, the user's `prompt`, and the JSON `schema` (an object
    schema) its answer must follow, named `schema_name`; at most `max_tokens` of answer."""

    system: str
    prompt: str
    schema: dict[str, Any]
    schema_name: str
    max_tokens: int = 2000


@dataclass(frozen=True)
class ModelReply:
    """A model's answer: `data`, the JSON object it returned, and the tokens it cost."""

    data: dict[str, Any]
    input_tokens: int = 0
    output_tokens: int = 0
    model_id: str = ""


class ChatModel(Protocol):
    """A chat model that answers with a JSON object: `model_id` names it in every memory's provenance."""

    model_id: str

    def __call__(self, request: ModelRequest) -> ModelReply: ...


class ModelError(StoreError):
    """A model call failed. `code` names how (never the conversation); `transient` says whether a retry may
    succeed (throttling, a timeout, the service unavailable), so the run retries it within its budget."""

    code = "model_error"
    transient = False

    def __init__(self, message: str, *, input_tokens: int = 0, output_tokens: int = 0) -> None:
        super().__init__(message)
        self.input_tokens = input_tokens  # what an answer that could not be used still cost
        self.output_tokens = output_tokens


class ModelThrottled(ModelError):
    """The model's service refused for rate (Bedrock's ThrottlingException, HTTP 429)."""

    code = "throttled"
    transient = True


class ModelTimeout(ModelError):
    """The model did not answer in time (a read timeout, Bedrock's ModelTimeoutException)."""

    code = "timeout"
    transient = True


class ModelUnavailable(ModelError):
    """The model's service failed or could not be reached (HTTP 5xx, Bedrock's ServiceUnavailable)."""

    code = "unavailable"
    transient = True


class ModelRefused(ModelError):
    """The model (or a guardrail) declined to answer: asking again would decline again."""

    code = "refused"


class ModelOutputInvalid(ModelError):
    """The answer was not JSON of the schema asked for, or was cut short (its token limit): asked again once
    within the run's budget, since a sampled answer may come out right the next time."""

    code = "invalid_output"
    transient = True


class ModelRejected(ModelError):
    """The service refused the request itself (bad model id, no access, input too long): not retried."""

    code = "rejected"


def json_object(text: Any) -> dict[str, Any]:
    """`text` parsed as one JSON object (a model's answer), tolerating a Markdown code fence around it;
    anything else is ModelOutputInvalid."""
    if not isinstance(text, str):
        raise ModelOutputInvalid("the model's answer holds no text")
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    try:
        data = json.loads(body)
    except ValueError:
        raise ModelOutputInvalid("the model's answer is not JSON") from None
    if not isinstance(data, dict):
        raise ModelOutputInvalid("the model's answer is not a JSON object")
    return data


class FunctionModel:
    """The caller's function as a model: `function(request) -> dict` (the answer's JSON object), named
    `model_id`. Whatever it raises that is not a `ModelError` is a `ModelRejected` (not retried)."""

    def __init__(self, function: Callable[[ModelRequest], dict[str, Any]], model_id: str = "function") -> None:
        if not callable(function):
            raise InvalidInput("the model must be callable")
        if not isinstance(model_id, str) or not model_id:
            raise InvalidInput("model_id must be a non-empty string")
        self.function = function
        self.model_id = model_id

    def __call__(self, request: ModelRequest) -> ModelReply:
        try:
            data = self.function(request)
        except ModelError:
            raise
        except Exception as exc:
            raise ModelRejected(f"the model function failed: {type(exc).__name__}") from None
        if not isinstance(data, dict):
            raise ModelOutputInvalid("the model function returned no JSON object")
        return ModelReply(data=data, model_id=self.model_id)
