"""The local stack: moto's server, the tables and bucket read from template.yaml, the HTTP API served by
the deployed handler code through a small adapter that turns HTTP requests into API Gateway v2 events,
and the cascade function fed from the sessions table's stream. All on 127.0.0.1, no AWS account.

The adapter plays API Gateway's JWT authorizer with development tokens (infra/local/devtoken.py): it verifies
the bearer token and passes its claims in the event, exactly where API Gateway puts verified claims."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from functions.mcp.calls import MCP_PATH, mcp_call
from infra.deploy.template import TABLE_ENV, StreamMapping, broken_rules, memory_dimensions, stream_mappings
from infra.local import devtoken, gateway, persist
from infra.local.apigw import LambdaContext
from infra.local.aws import REGION, LocalTables, create_tables, local_client, moto_server, per_item_transaction_backups
from infra.local.demo_model import demo_endpoint
from infra.local.streams import StreamReader
from store import InvalidInput
from store.core import codec
from store.core.lexical import LEXICAL_DIMENSIONS
from store.embeddings import offline_embedder_name
from store.env_settings import VARIABLES, embedder_name, settings_from_env
from store.settings import Settings
from store.tools.cli.mcp import mcp_host_entry
from store.tools.cli.show import visible
from store.tools.cli.target import OPERATOR_ENV

MAX_REQUEST_BYTES = 10 * 1024 * 1024  # API Gateway's payload limit
TOKEN_ROUTE = "/_local/token"  # the local adapter's own route: mint a development token for another owner
OPERATOR_HEADER = "X-Agent-Store-Operator"  # carries the stack's operator key to TOKEN_ROUTE
SIGN_IN_ROUTE = "/_local/console-sign-in"  # the local adapter's own route: a one-time code for the console's token
SIGN_IN_TTL = 600.0  # seconds a console sign-in link is valid (once)
DEFAULT_AWS_PORT = 8001  # moto's port, fixed so that exported endpoints stay valid across restarts
SAVE_INTERVAL = 30.0  # seconds between saves of --data while the stack runs
log = logging.getLogger("agent-store.local")


class ApiAdapter(BaseHTTPRequestHandler):
    """HTTP request -> API Gateway v2 event -> the API function's handler -> HTTP response."""

    server: ApiServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def __getattr__(self, name: str) -> Any:
        """Any other method (OPTIONS, TRACE, ...) goes to the function too, as API Gateway's ANY route does."""
        if name.startswith("do_"):
            return self._handle
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """One line per request, written by `_handle` (path without its query: a query can be content)."""

    def _reply(self, status: int, headers: dict[str, str], body: bytes) -> None:
        """Send an answer: the function's headers but its own framing (Content-Length; `Connection: close`
        when this adapter closes the connection after it, so that a keep-alive client knows to open another)."""
        self.send_response(status)
        for name, value in headers.items():
            if name.lower() not in ("content-length", "connection"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _refuse(self, status: int, code: str, message: str) -> None:
        """An error in the API's shape; the connection is closed (what is left of the request is unread)."""
        self.close_connection = True
        body = json.dumps({"code": code, "message": message}).encode()
        self._reply(status, {"Content-Type": "application/json"}, body)

    def _body_length(self) -> int | None:
        """The request's Content-Length, 0 without one; None (a 400 sent) when it is not a plain count."""
        if self.headers.get("Transfer-Encoding"):
            self._refuse(400, "invalid_request", "send the body with a Content-Length, not chunked")
            return None
        declared = self.headers.get_all("Content-Length") or []
        if len(declared) > 1 or (declared and not declared[0].strip().isdigit()):
            self._refuse(400, "invalid_request", "Content-Length must be one non-negative whole number")
            return None
        return int(declared[0]) if declared else 0

    def _handle(self) -> None:
        started = time.perf_counter()
        try:
            self._route()
        finally:
            status = getattr(self, "_status", "-")
            path = visible(urlsplit(self.path).path)  # a request path can hold controls; the log shows them
            call = visible(getattr(self, "_call", ""))  # an MCP request's method and tool, never its arguments
            log.info("%s %s%s %s %.0f ms", self.command, path, call, status, (time.perf_counter() - started) * 1000)

    def send_response(self, code: int, message: str | None = None) -> None:
        self._status = code
        super().send_response(code, message)

    def _mint(self, body: bytes | None) -> None:
        """POST /_local/token {"sub": NAME}: a development token for any owner, for the stack's operator only
        (the operator key printed at start, in OPERATOR_HEADER: `agent-store token --sub NAME`). An owner's
        token mints nothing: it would make every development token every owner's. The local adapter answers
        it; the deployed API has no such route."""
        if not devtoken.is_operator(self.server.secret, self.headers.get(OPERATOR_HEADER) or ""):
            self._refuse(
                403, "insufficient_scope", f"minting tokens takes the stack's operator key ({OPERATOR_HEADER})"
            )
            return
        try:
            asked = codec.parse(body or b"{}", "the request", max_depth=2)
            subject, scope = asked.get("sub"), asked.get("scope")
        except (InvalidInput, AttributeError):
            subject = scope = None
        if not isinstance(subject, str) or not subject or len(subject) > 128:
            self._refuse(400, "invalid_request", 'send {"sub": "<owner>"}: a subject of 1 to 128 characters')
            return
        if scope is not None and (not isinstance(scope, str) or len(scope) > 512 or not scope.isprintable()):
            self._refuse(400, "invalid_request", "scope is space-separated scopes, at most 512 characters")
            return
        token = devtoken.issue(self.server.secret, subject, scope=scope)
        reply = json.dumps({"token": token, "sub": subject, "issued_by": "operator"}).encode()
        self._reply(200, {"Content-Type": "application/json", "Cache-Control": "no-store"}, reply)

    def _sign_in(self, body: bytes | None) -> None:
        """POST /_local/console-sign-in {"code": ...}: the development token a one-time code stands for."""
        try:
            code = codec.parse(body or b"{}", "the request", max_depth=2).get("code")
        except (InvalidInput, AttributeError):
            code = None
        token = self.server.sign_in.take(code) if isinstance(code, str) else None
        if token is None:
            self._refuse(403, "unauthorized", "this sign-in link was used already or has expired: paste a token")
            return
        reply = json.dumps({"token": token}).encode()
        self._reply(200, {"Content-Type": "application/json", "Cache-Control": "no-store"}, reply)

    def _route(self) -> None:
        url = urlsplit(self.path)
        length = self._body_length()
        if length is None:
            return
        if length > MAX_REQUEST_BYTES:
            self._refuse(413, "payload_too_large", f"requests are at most {MAX_REQUEST_BYTES} bytes")
            return
        body = self.rfile.read(length) if length else None
        if url.path == MCP_PATH:
            self._call = mcp_call(body or b"")
        if url.path == TOKEN_ROUTE and self.command == "POST":
            self._mint(body)
            return
        if url.path == SIGN_IN_ROUTE and self.command == "POST":
            self._sign_in(body)
            return
        with self.server.invoke:
            got = gateway.answer(
                self.server.secret, self.command, url.path, url.query, dict(self.headers.items()), body
            )
        self._reply(got.status, got.headers, got.body)


class SignInCodes:
    """One-time codes that hand the console a development token without the token ever being in a URL:
    `make run` opens `/console/#sign-in=<code>`, and the page trades the code for the token once
    (`POST /_local/console-sign-in`). What stays in the browser's history is a spent code."""

    def __init__(self, ttl: float = SIGN_IN_TTL) -> None:
        self.ttl = ttl
        self._codes: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def issue(self, token: str) -> str:
        """A new code for `token`, valid once, for `ttl` seconds."""
        code = secrets.token_urlsafe(24)
        with self._lock:
            now = time.monotonic()
            self._codes = {c: (t, end) for c, (t, end) in self._codes.items() if end > now}
            self._codes[code] = (token, now + self.ttl)
        return code

    def take(self, code: str) -> str | None:
        """The token a live code stands for (the code is spent), or None."""
        with self._lock:
            token, end = self._codes.pop(code, ("", 0.0))
        return token if token and end > time.monotonic() else None


class ApiServer(ThreadingHTTPServer):
    """Connections are served on threads, but the function runs one event at a time, as one Lambda
    container does (the Powertools resolver keeps the current event on the app object)."""

    daemon_threads = True
    request_queue_size = 128  # connections waiting to be accepted (the default, 5, resets bursts of clients)

    def __init__(self, address: tuple[str, int], secret: bytes) -> None:
        super().__init__(address, ApiAdapter)
        self.secret = secret
        self.invoke = threading.Lock()
        self.sign_in = SignInCodes()


def lambda_image(item: dict[str, Any]) -> dict[str, Any]:
    """A stream image as Lambda's JSON event carries it (binary values base64-encoded)."""
    return {k: persist.as_json(v) for k, v in item.items()}


def lambda_stream_record(record: dict[str, Any]) -> dict[str, Any]:
    """A GetRecords record in the shape of a Lambda DynamoDB-stream event record."""
    change = dict(record.get("dynamodb") or {})
    change.pop("ApproximateCreationDateTime", None)
    for image in ("OldImage", "NewImage", "Keys"):
        if image in change:
            change[image] = lambda_image(change[image])
    out = {k: v for k, v in record.items() if k not in ("dynamodb",)}
    out["dynamodb"] = change
    return out


@dataclass
class CascadePoller:
    """Feeds the tables' streams to the stream functions as their event source mappings do (read from
    template.yaml: each function gets the records of its table's stream that its filter selects, in batches
    of its batch size: the cascade a batch of the sessions table's, and the memories table's forget markers
    one at a time; the copy function one record per invocation), once a second."""

    endpoint: str
    tables: dict[str, str]  # logical id -> table name
    stop: threading.Event = field(default_factory=threading.Event)
    processed: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)  # held while a batch is handled

    def run(self) -> None:
        import importlib

        mappings = [
            (m, getattr(importlib.import_module(m.handler.rsplit(".", 1)[0]), m.handler.rsplit(".", 1)[1]))
            for m in stream_mappings()
        ]
        dynamodb = local_client(endpoint_url=self.endpoint)
        streams = local_client("dynamodbstreams", endpoint_url=self.endpoint)
        arns = {
            logical: dynamodb.describe_table(TableName=self.tables[logical])["Table"]["LatestStreamArn"]
            for logical in {m.table for m, _ in mappings}
        }
        readers = {logical: StreamReader(streams, arn) for logical, arn in arns.items()}
        while not self.stop.wait(1.0):
            for logical, reader in readers.items():
                try:
                    records = [lambda_stream_record(r) for r in reader.read()]
                    for mapping, handler in mappings:
                        if mapping.table == logical:
                            self._feed(mapping, handler, [r for r in records if mapping.wants(r)])
                    self.processed += len(records)
                except Exception:  # keep polling; the next round retries
                    log.exception("cascade poll failed")

    def _feed(self, mapping: StreamMapping, handler: Callable[..., Any], records: list[dict[str, Any]]) -> None:
        """Hand `records` to one function, `mapping.batch_size` at a time."""
        name = f"agent-store-{mapping.function}"
        for start in range(0, len(records), mapping.batch_size):
            with self.lock:
                context = LambdaContext(function_name=name, timeout_ms=mapping.timeout * 1000)
                handler({"Records": records[start : start + mapping.batch_size]}, context)


@dataclass
class LocalStack:
    """A running local stack (see `local_stack`)."""

    api_url: str
    aws_endpoint: str
    tables: LocalTables
    secret: bytes
    cascade: CascadePoller
    dynamodb: Any = None
    s3: Any = None
    data: Path | None = None
    invoke: threading.Lock = field(default_factory=threading.Lock)
    sign_in: SignInCodes = field(default_factory=SignInCodes)
    settings_environment: dict[str, str] = field(default_factory=dict)  # the variables its settings came from

    def token(self, subject: str, ttl: int = 12 * 3600, scope: str | None = None) -> str:
        """A development token for `subject` (the owner of what it creates), with `scope` when given."""
        return devtoken.issue(self.secret, subject, ttl=ttl, scope=scope)

    def sign_in_link(self, token: str) -> str:
        """The console's address signed in with `token`, through a one-time code (the token is in no URL)."""
        return f"{self.api_url}/console/#sign-in={self.sign_in.issue(token)}"

    def environment(self) -> dict[str, str]:
        """What points `SessionStore.from_env()` and `agent-store` at this stack."""
        return {
            "AWS_ENDPOINT_URL": self.aws_endpoint,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "SESSIONS_TABLE": self.tables.sessions,
            "MESSAGES_TABLE": self.tables.messages,
            "ARTIFACTS_BUCKET": self.tables.bucket or "",
            "MEMORIES_TABLE": self.tables.memories or "",
            "AGENT_STORE_API": self.api_url,
            **self.settings_environment,
        }

    def save(self) -> dict[str, int]:
        """Write everything to the --data directory (nothing without one)."""
        if self.data is None:
            return {}
        with self.invoke, self.cascade.lock:  # between requests and cascade batches, not in one
            names, bucket = self.tables.table_names(), self.tables.bucket
            return persist.save(self.data, self.dynamodb, self.s3, names, bucket, self.secret)


class PortTaken(Exception):
    """The API's or moto's port is in use."""


class EmbedderMismatch(Exception):
    """The template's memories index does not have the dimensions of the embedder the local stack uses."""


def local_embedder() -> str:
    """The local stack's embedder when MEMORY_EMBEDDER names none, as MEMORY_EMBEDDER would name it: the
    `memory` extra's offline model (`store.embeddings.offline_embedder_name`)."""
    return offline_embedder_name() or "none"


def local_parameters(dimensions: int | None, parameters: dict[str, Any] | None) -> dict[str, Any]:
    """The template's parameters for the local stack: those given; when they name no dimensions, the stack's
    embedder's (and no Bedrock model: the stack's store embeds, not the template's), or the template's with no
    embedder (memories searched by words)."""
    given = dict(parameters or {})
    if "MemoryEmbeddingDimensions" not in given and dimensions is not None:
        given.update(MemoryEmbeddingDimensions=str(dimensions), MemoryEmbeddingModel="none")
    return given


def _check_embedder(name: str, dimensions: int | None, parameters: dict[str, Any] | None) -> None:
    """EmbedderMismatch unless the template's memories index (with `parameters`) has `dimensions` (those of the
    embedder `name`; None: no embedder): every memory put would be refused otherwise."""
    refused = broken_rules(overrides=parameters)
    if refused:
        raise EmbedderMismatch(f"template.yaml's parameters would be refused: {refused[0]}")
    index = memory_dimensions(overrides=parameters) - LEXICAL_DIMENSIONS
    if dimensions is not None and index != dimensions:
        raise EmbedderMismatch(
            f"the memories index holds embeddings of {index} dimensions (template.yaml's MemoryEmbeddingDimensions) "
            f"but the local stack embeds with {name}'s {dimensions}: set MemoryEmbeddingDimensions to "
            f"{dimensions}"
        )


@contextlib.contextmanager
def local_stack(
    port: int = 8000,
    *,
    cascade: bool = True,
    prefix: str = "local",
    aws_port: int | None = None,
    data: Path | None = None,
    parameters: dict[str, Any] | None = None,
) -> Iterator[LocalStack]:
    """Start everything on 127.0.0.1 (the API on `port`, moto on `aws_port`; 0 or None picks a free one)
    and stop it all on exit. Resources are named `prefix`-...; with `data`, what a previous run saved there
    is loaded first and everything is saved there again on exit; `parameters` override template.yaml's. The
    store's settings come from the environment as a deployed function's do (`store.env_settings`: MEMORY_EMBEDDER,
    by default the offline `local_embedder`; EXTRACTION_MODEL, `demo` for the stand-in endpoint;
    EXTRACTION_STRATEGIES...). PortTaken when a port is in use; EmbedderMismatch when the memories index would
    refuse the embedder's vectors; InvalidInput when a variable has a value no setting takes."""
    import functions.api.app
    import functions.cascade.app
    import functions.extraction.app  # noqa: F401
    from functions import runtime
    from store.session_store import s3_config

    per_item_transaction_backups()  # moto would copy every table each transaction touches: memory grows with use
    if aws_port:
        _check_free(aws_port, "moto's", "--aws-port")
    if port:
        _check_free(port, "the API's", "--port")
    with demo_model_if_asked():
        settings, parameters, chosen = _chosen_settings(parameters)
        with moto_server(aws_port or None) as endpoint:
            dynamodb = local_client(endpoint_url=endpoint)
            s3 = local_client("s3", endpoint_url=endpoint, config=s3_config(path_style=True))
            tables = create_tables(dynamodb, prefix=prefix, s3=s3, parameters=parameters)
            if data is not None:
                persist.load(data, dynamodb, s3, tables.table_names(), tables.bucket)
            store = tables.store(dynamodb, s3, settings=settings)
            previous = runtime.installed_store()  # a stack started inside another (tests) gives it back on exit
            runtime.use_store(store)
            # what the functions read from their environment beside the store (the template's Globals)
            saved = _set_environment({"MEMORIES_TABLE": tables.memories or ""})
            secret = (persist.secret(data) if data is not None else None) or devtoken.new_secret()
            server = ApiServer(("127.0.0.1", port), secret)
            serving = threading.Thread(target=server.serve_forever, name="agent-store-api", daemon=True)
            serving.start()
            poller = CascadePoller(endpoint, {logical: tables.names[env] for logical, env in TABLE_ENV.items()})
            polling = threading.Thread(target=poller.run, name="agent-store-cascade", daemon=True)
            if cascade:
                polling.start()
            url = f"http://127.0.0.1:{server.server_address[1]}"
            running = LocalStack(
                url, endpoint, tables, secret, poller, dynamodb, s3, data, server.invoke, server.sign_in, chosen
            )
            try:
                yield running
            finally:
                poller.stop.set()
                server.shutdown()
                server.server_close()
                serving.join(timeout=10)
                if cascade:
                    polling.join(timeout=10)
                if data is not None:
                    running.save()
                runtime.use_store(previous)
                _set_environment(saved)
                store.close()


def _chosen_settings(parameters: dict[str, Any] | None) -> tuple[Settings, dict[str, Any], dict[str, str]]:
    """The store's settings from the environment (the offline embedder by default), the template's parameters
    for them, and the variables that chose them; EmbedderMismatch when the index would refuse the vectors."""
    default = local_embedder()
    settings = settings_from_env(default)
    dimensions = settings.embedder.dimensions if settings.embedder is not None else None
    parameters = local_parameters(dimensions, parameters)
    _check_embedder(embedder_name(default), dimensions, parameters)
    chosen = {"MEMORY_EMBEDDER": embedder_name(default)}
    chosen |= {name: os.environ[name] for name in VARIABLES if os.environ.get(name, "").strip()}
    return settings, parameters, chosen


def _set_environment(values: dict[str, str | None]) -> dict[str, str | None]:
    """Set each variable to its value (None: unset it); what they were before, to set back."""
    before = {name: os.environ.get(name) for name in values}
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    return before


@contextlib.contextmanager
def demo_model_if_asked() -> Iterator[None]:
    """With EXTRACTION_MODEL=demo, the stand-in model's endpoint (infra/local/demo_model.py) running and named in
    EXTRACTION_MODEL while the stack runs (its store and its functions read it as any other model); else
    nothing."""
    if os.environ.get("EXTRACTION_MODEL", "").strip() != "demo":
        yield
        return
    with demo_endpoint() as spec:
        os.environ["EXTRACTION_MODEL"] = spec
        try:
            yield
        finally:
            os.environ["EXTRACTION_MODEL"] = "demo"


def _check_free(port: int, whose: str, option: str) -> None:
    """PortTaken when something listens on the port. A socket of a stack just stopped, waiting out TIME_WAIT,
    does not count (the probe binds as the servers do, with SO_REUSEADDR)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            raise PortTaken(f"{whose} port {port} is taken (another `make run`?): use {option} N") from None


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def serve(
    port: int = 8000,
    subject: str = "dev-user",
    *,
    aws_port: int = DEFAULT_AWS_PORT,
    data: Path | None = None,
    browser: bool = True,
) -> int:
    """`make run` / `python -m infra.cli local`: start the stack, print how to use it (the API, a token, the
    environment for the library and the CLI), log a line per request, run until Ctrl-C (or SIGTERM), then
    stop everything (saving to `data` first). Returns the exit status: 1, in one line, when a port is taken
    or the data directory cannot be used safely."""
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    log.setLevel(logging.INFO)
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")  # the request log says what a function's info would
    signal.signal(signal.SIGINT, _interrupt)  # also when started with SIGINT ignored (a background job)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        with local_stack(port, aws_port=aws_port, data=data) as stack:
            token = stack.token(subject)
            print(f"agent-session-store local stack (moto at {stack.aws_endpoint}, resources from template.yaml)")
            print(f"  API:      {stack.api_url}   (OpenAPI: {stack.api_url}/openapi.json)")
            console = stack.sign_in_link(token)
            print(f"  console:  {console}   (a sign-in link for one use within 10 min; then paste $TOKEN)")
            print(f"  owner:    {subject}   (development token, valid 12 h, accepted only by this local stack)")
            if data is None:
                print("  data:     in memory: it is gone when the stack stops (--data DIR keeps it across restarts)")
            else:
                print(f"  data:     kept in {data} (saved every {SAVE_INTERVAL:.0f} s and when the stack stops)")
            print(f"\n  export TOKEN={token}\n")
            print("  curl -s -X POST -H \"Authorization: Bearer $TOKEN\" -H 'Content-Type: application/json' \\")
            print(f'       -d \'{{"title": "first"}}\' {stack.api_url}/sessions')
            print(f"\n  MCP:      {stack.api_url}/mcp   (streamable HTTP; header Authorization: Bearer $TOKEN)")
            print("  # a desktop host (Claude Desktop, Cursor, VS Code) starts it over stdio; its config entry:")
            print("  " + json.dumps(mcp_host_entry(stack.api_url, token)))
            print("\n  # SessionStore.from_env() and agent-store (another owner: agent-store token --sub NAME):")
            print(f"  export {OPERATOR_ENV}={devtoken.operator_key(stack.secret)}   # the operator's: mints tokens")
            for name, value in {**stack.environment(), "AGENT_STORE_TOKEN": "$TOKEN"}.items():
                print(f"  export {name}={value}")
            print("\nPress Ctrl-C to stop.", flush=True)
            if browser:  # the console, signed in by a one-time code: the token is in no URL, so in no history
                import webbrowser

                webbrowser.open(console)
            try:
                while True:
                    time.sleep(SAVE_INTERVAL)
                    stack.save()
            except KeyboardInterrupt:
                print("\nstopping..." + (f" (saving to {data})" if data is not None else ""), flush=True)
    except (PortTaken, EmbedderMismatch, persist.DataDirError, InvalidInput) as exc:  # InvalidInput: a variable
        print(f"agent-store local: {exc}", file=sys.stderr)
        return 1
    print("stopped.")
    return 0
