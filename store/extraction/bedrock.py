"""Amazon Bedrock's Converse API as extraction's model (deployed: the model id is the template's
`ExtractionModelId`, and the function's role may invoke that model only).

The answer's shape is enforced the way Converse does it for every model that uses tools: one tool whose input
schema is the schema asked for, and `toolChoice` naming it, so the model's answer is that tool's `input`.
Failures map onto `store.extraction.models`: ThrottlingException → ModelThrottled; ModelTimeoutException (and
a read timeout) → ModelTimeout; InternalServer, ServiceUnavailable, ModelNotReady, ModelError and connection
failures → ModelUnavailable; a stop for a guardrail or a content filter → ModelRefused; an answer cut at its
token limit, or with no tool input of the schema → ModelOutputInvalid; anything else the service refuses
(ValidationException, AccessDenied, ResourceNotFound) → ModelRejected. botocore's errors never escape."""

from __future__ import annotations

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
)

_TRANSIENT = {
    "ThrottlingException": ModelThrottled,
    "ModelTimeoutException": ModelTimeout,
    "InternalServerException": ModelUnavailable,
    "ServiceUnavailableException": ModelUnavailable,
    "ModelNotReadyException": ModelUnavailable,
    "ModelErrorException": ModelUnavailable,
}
_REFUSALS = ("guardrail_intervened", "content_filtered")
_CUT = ("max_tokens", "malformed_model_output", "malformed_tool_use", "model_context_window_exceeded")


def runtime_client() -> Any:
    """A bedrock-runtime client that tries each call once (the run retries, within its own budget) and waits
    at most a minute for an answer."""
    import boto3
    from botocore.config import Config

    config = Config(retries={"mode": "standard", "max_attempts": 1}, connect_timeout=5, read_timeout=60)
    return boto3.client("bedrock-runtime", config=config)


class BedrockConverseModel:
    """A Bedrock model (`model_id`: a model or inference profile id, such as
    "us.anthropic.claude-haiku-4-5-20251001-v1:0" or "amazon.nova-lite-v1:0") through Converse, with a
    boto3 bedrock-runtime client of the caller's or one made on first use (`runtime_client`). Temperature 0."""

    def __init__(self, model_id: str, client: Any = None) -> None:
        if not isinstance(model_id, str) or not model_id.strip():
            raise InvalidInput("model_id must name a Bedrock model")
        self.model_id = model_id
        self._client = client

    def _runtime(self) -> Any:
        if self._client is None:
            self._client = runtime_client()
        return self._client

    def __call__(self, request: ModelRequest) -> ModelReply:
        try:
            answer = self._runtime().converse(
                modelId=self.model_id,
                system=[{"text": request.system}],
                messages=[{"role": "user", "content": [{"text": request.prompt}]}],
                inferenceConfig={"maxTokens": request.max_tokens, "temperature": 0},
                toolConfig={
                    "tools": [
                        {
                            "toolSpec": {
                                "name": request.schema_name,
                                "description": "Record the answer.",
                                "inputSchema": {"json": request.schema},
                            }
                        }
                    ],
                    "toolChoice": {"tool": {"name": request.schema_name}},
                },
            )
        except ModelError:
            raise
        except Exception as exc:  # botocore's: mapped by code, never passed on
            raise _mapped(exc) from None
        return _reply(answer, request.schema_name, self.model_id)


def _mapped(exc: Exception) -> ModelError:
    code = ""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = str(response.get("Error", {}).get("Code", ""))
    name = type(exc).__name__
    if code in _TRANSIENT:
        return _TRANSIENT[code](f"Bedrock: {code}")
    if "Timeout" in name:
        return ModelTimeout(f"Bedrock: {name}")
    if not code:  # no answer from the service at all: a connection failure
        return ModelUnavailable(f"Bedrock: {name}")
    return ModelRejected(f"Bedrock: {code}")


def _reply(answer: dict[str, Any], tool: str, model_id: str) -> ModelReply:
    usage = answer.get("usage") or {}
    spent = {"input_tokens": int(usage.get("inputTokens") or 0), "output_tokens": int(usage.get("outputTokens") or 0)}
    stop = answer.get("stopReason")
    if stop in _REFUSALS:
        raise ModelRefused(f"Bedrock stopped: {stop}", **spent)
    if stop in _CUT:
        raise ModelOutputInvalid(f"Bedrock stopped: {stop}", **spent)
    content = ((answer.get("output") or {}).get("message") or {}).get("content") or []
    inputs = [
        block["toolUse"].get("input")
        for block in content
        if isinstance(block, dict) and isinstance(block.get("toolUse"), dict) and block["toolUse"].get("name") == tool
    ]
    if not inputs or not isinstance(inputs[0], dict):
        raise ModelOutputInvalid("Bedrock's answer holds no tool input", **spent)
    return ModelReply(inputs[0], spent["input_tokens"], spent["output_tokens"], model_id)
