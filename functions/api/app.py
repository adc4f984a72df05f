"""The HTTP API's Lambda handler: Powertools' `APIGatewayHttpResolver` over the library.

Every route except `/health` and `/openapi.json` is behind API Gateway's JWT authorizer; the owner of a
request is the verified token's `sub` claim, and a session of another owner is absent (404). Errors are
JSON `{"code": ..., "message": ...}` with a stable code, never a stack trace."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import traceback
import warnings
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from functions import access
from functions.api import (
    artifacts,
    console_routes,
    extraction,
    forks,
    memories,
    messages,
    recall,
    sessions,
    state,
    traces,
)
from functions.api.context import MAX_BODY_BYTES, Absent, Unauthorized, body_size, caller, parse_json_body
from functions.api.schemas import Error
from functions.runtime import SECURITY_HEADERS, TRACED_MODULES, register_snapstart_hooks, time_budget
from store import deadline
from store.backends import http_errors

API_TITLE = "agent-session-store"
API_VERSION = "1.0.0"
PUBLIC_ROUTES = frozenset({"/health", "/openapi.json"})
RAW_BODY_ROUTE = re.compile(r"^/sessions/[^/]+/artifacts/[^/]+$")  # PUT: an artifact's bytes, any type

logger = Logger(service=os.environ.get("POWERTOOLS_SERVICE_NAME", "agent-session-store"))
tracer = Tracer(patch_modules=TRACED_MODULES)
warnings.filterwarnings("ignore", message="No application metrics to publish")
metrics = Metrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "AgentSessionStore"))
register_snapstart_hooks()  # with SnapStart (the template's SnapStart parameter), remake what restores share
app = APIGatewayHttpResolver(enable_validation=True, json_body_deserializer=parse_json_body)
for module in (sessions, forks, messages, recall, state, artifacts, traces, memories, extraction, console_routes):
    app.include_router(module.router)

# exception class -> (HTTP status, stable code): the store's one table (HttpBackend reads it the other way)
ERRORS: dict[type[Exception], tuple[int, str]] = {Absent: (404, "not_found")}
for _kind, _answer in http_errors.ERRORS.items():
    ERRORS[_kind] = _answer


def error_body(status: int, code: str, message: str) -> Response[Any]:
    metrics.add_metric(name="ClientErrors" if status < 500 else "ServerErrors", unit=MetricUnit.Count, value=1)
    return Response(status, content_type="application/json", body=json.dumps({"code": code, "message": message}))


@app.exception_handler(list(ERRORS))
def known_error(exc: Exception) -> Response[Any]:
    kind = next(k for k in type(exc).__mro__ if k in ERRORS)
    status, code = ERRORS[kind]
    message = str(exc) or code.replace("_", " ")
    with contextlib.suppress(Unauthorized):  # ids in the message as the caller names them
        message = caller(app.current_event).scrub(message)
    if status >= 500:  # the store's messages name resources and AWS's answers, never content
        logger.warning("request failed", extra={"code": code, "error": message})
    return error_body(status, code, message)


@app.exception_handler(RequestValidationError)
def invalid_request(exc: RequestValidationError) -> Response[Any]:
    details = exc.errors()
    first = details[0] if details else {}
    where = ".".join(str(p) for p in first.get("loc", ()))
    return error_body(422, "invalid_request", f"{where}: {first.get('msg', 'invalid request')}".strip(": "))


@app.exception_handler(RequestUnsupportedContentType)
def unsupported_media_type(exc: RequestUnsupportedContentType) -> Response[Any]:
    return error_body(415, "unsupported_media_type", "request bodies are JSON: send Content-Type: application/json")


@app.exception_handler(Exception)
def unexpected(exc: Exception) -> Response[Any]:
    # the type and where it was raised, not the message: an unexpected exception may quote a request's data
    stack = "".join(traceback.format_tb(exc.__traceback__))
    logger.error("unexpected error", extra={"error_type": type(exc).__name__, "stack": stack})
    return error_body(500, "internal_error", "internal error; the request id is in the logs")


@app.not_found
def route_not_found(exc: Exception) -> Response[Any]:
    return error_body(
        404, "route_not_found", f"no route {app.current_event.request_context.http.method} {app.current_event.path}"
    )


ERROR_RESPONSES = {
    "400": "invalid input (a bad id, name or value)",
    "401": "no verified bearer token",
    "403": "the token lacks every scope the deployment requires (JwtScopes)",
    "404": "absent, or another owner's",
    "409": "a conflict: the id is taken, or an expectation (expected_seq, expected_version) is stale",
    "413": "the request or the payload is too large",
    "415": "the body is not JSON (Content-Type)",
    "422": "the request does not match its schema",
    "503": "storage is unavailable; retry",
}


def openapi_document() -> str:
    """The OpenAPI document generated from the routes (committed as docs/openapi.json), with every error
    response described by the one error shape the API returns. (Powertools' OpenAPI models, ~170 ms to
    import, are loaded here, by the one route that needs them, not on every cold start.)"""
    from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer

    doc = json.loads(
        app.get_openapi_json_schema(
            title=API_TITLE,
            version=API_VERSION,
            description="Sessions, transcripts, state, checkpoints, artifacts and traces for AI agents. Every "
            "route but /health and /openapi.json needs a bearer JWT; its `sub` claim is the owner. Errors are "
            '`{"code": ..., "message": ...}`.',
            security_schemes={"jwt": HTTPBearer(bearerFormat="JWT")},
            security=[{"jwt": []}],
        )
    )
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"] = Error.model_json_schema()
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, operations in doc.get("paths", {}).items():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for status, description in ERROR_RESPONSES.items():
                if status in ("401", "403") and path == "/health":
                    continue
                responses[status] = {"description": description, "content": error}
            if path == "/health":
                operation["security"] = []
            if "204" in responses:
                responses["204"] = {"description": "done; no content"}
    download = doc.get("paths", {}).get("/sessions/{session_id}/artifacts/{name}", {}).get("get")
    if download is not None:
        download["responses"]["302"] = {
            "description": "a redirect to a presigned URL of the version (valid `expires_in` seconds, 300 unless "
            "given); `inline=true` answers 200",
            "headers": {"Location": {"schema": {"type": "string"}}},
        }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


@app.get("/openapi.json", include_in_schema=False)
def openapi() -> Response[str]:
    return Response(200, content_type="application/json", body=openapi_document())


ENCODED_COLON = re.compile("%3a", re.IGNORECASE)  # no id holds a "%"; an artifact name's "%" arrives as %25


def _precheck(event: dict[str, Any]) -> Response[Any] | None:
    """Refuse before routing: no verified identity on a protected route (401) or no scope the deployment
    requires (403), an oversized body (413), a body that is not JSON where JSON is read (415, 400).
    An encoded `:` in the path (`%3A`, as browsers and HTTP clients encode ids such as `chat:agent:x`)
    is read as the `:` it stands for, so every id the store accepts reaches its route."""
    path = ENCODED_COLON.sub(":", event.get("rawPath") or "")
    if "rawPath" in event:
        event["rawPath"] = path
    return _refused_caller(event, path) or _refused_body(event, path)


def _refused_caller(event: dict[str, Any], path: str) -> Response[Any] | None:
    """401 without a verified identity, 403 without a scope the deployment accepts, or for a write (any method
    but GET and HEAD) with a read-only token (public routes aside); None when the caller may go on."""
    if path in PUBLIC_ROUTES or console_routes.is_console(path):
        return None
    method = ((event.get("requestContext") or {}).get("http") or {}).get("method", "")
    why = access.refused(access.claims_of(event), writing=method not in ("GET", "HEAD", "OPTIONS"))
    return None if why is None else error_body(*why)


def _raw_upload(event: dict[str, Any], path: str, content_type: str) -> bool:
    """Whether the route takes its body as it is (an artifact's bytes, OTLP's protobuf) rather than JSON."""
    method = ((event.get("requestContext") or {}).get("http") or {}).get("method", "")
    if method == "PUT" and RAW_BODY_ROUTE.match(path):
        return True
    return method == "POST" and path == traces.OTLP_ROUTE and content_type == traces.PROTOBUF


def _refused_body(event: dict[str, Any], path: str) -> Response[Any] | None:
    """413 for a body over MAX_BODY_BYTES; 415 for one that is not JSON where JSON is read; 400 for a base64
    JSON body that is not UTF-8 (one that is, is decoded in place); None when the body may go on."""
    body = event.get("body") or ""
    if body_size(event) > MAX_BODY_BYTES:
        return error_body(413, "payload_too_large", f"request bodies are at most {MAX_BODY_BYTES} bytes")
    content_type = str((event.get("headers") or {}).get("content-type", "")).split(";")[0].strip().lower()
    if not body or _raw_upload(event, path, content_type):
        return None
    if content_type not in ("", "application/json"):
        return error_body(415, "unsupported_media_type", "request bodies are JSON: send Content-Type: application/json")
    if event.get("isBase64Encoded"):
        try:
            event["body"] = base64.b64decode(body).decode("utf-8")
            event["isBase64Encoded"] = False
        except (ValueError, UnicodeDecodeError):
            return error_body(400, "invalid_request", "a JSON body must be UTF-8 text")
    return None


# Responses and errors are not recorded in traces: they carry the callers' messages, state and artifacts.
@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    refused = _precheck(event)
    if refused is not None:
        body = refused.body if isinstance(refused.body, str) else json.dumps(refused.body)
        response: dict[str, Any] = {
            "statusCode": refused.status_code,
            "headers": {"Content-Type": "application/json"},
            "body": body,
            "isBase64Encoded": False,
        }
    else:
        with deadline(time_budget(context)):  # no retry outlives the request
            response = app.resolve(event, context)
    response["headers"] = {**(response.get("headers") or {}), **SECURITY_HEADERS}
    return response
