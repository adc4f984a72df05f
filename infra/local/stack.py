"""The local stack: moto's server, the tables and bucket read from template.yaml, the HTTP API served by
the deployed handler code through a small adapter that turns HTTP requests into API Gateway v2 events,
and the cascade function fed from the sessions table's stream. All on 127.0.0.1, no AWS account.

The adapter plays API Gateway's JWT authorizer with development tokens (infra/local/devtoken.py): it verifies
the bearer token and passes its claims in the event, exactly where API Gateway puts verified claims."""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from infra.local import devtoken
from infra.local.apigw import LambdaContext, http_event, response_body
from infra.local.aws import LocalTables, create_tables, local_client, moto_server

PUBLIC_ROUTES = frozenset({"/health", "/openapi.json"})
MAX_REQUEST_BYTES = 10 * 1024 * 1024  # API Gateway's payload limit
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
        log.info("%s %s", self.address_string(), format % args)

    def _reply(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            if name.lower() not in ("content-length", "connection"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _unauthorized(self, why: str) -> None:
        body = json.dumps({"code": "unauthorized", "message": why}).encode()
        self._reply(401, {"Content-Type": "application/json", "WWW-Authenticate": "Bearer"}, body)

    def _refuse(self, status: int, code: str, message: str) -> None:
        """An error in the API's shape; the connection is closed (what is left of the request is unread)."""
        self.close_connection = True
        body = json.dumps({"code": code, "message": message}).encode()
        self._reply(status, {"Content-Type": "application/json", "Connection": "close"}, body)

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
        from functions.api.app import lambda_handler

        url = urlsplit(self.path)
        length = self._body_length()
        if length is None:
            return
        if length > MAX_REQUEST_BYTES:
            self._refuse(413, "payload_too_large", f"requests are at most {MAX_REQUEST_BYTES} bytes")
            return
        body = self.rfile.read(length) if length else None
        claims = None
        if url.path not in PUBLIC_ROUTES:
            auth = self.headers.get("Authorization") or ""
            scheme, _, token = auth.partition(" ")
            if scheme.lower() != "bearer" or not token:
                self._unauthorized("a bearer token is required")
                return
            try:
                claims = devtoken.verify(self.server.secret, token.strip())
            except devtoken.TokenError as exc:
                self._unauthorized(str(exc))
                return
        headers = {k: v for k, v in self.headers.items() if k.lower() != "authorization"}
        event = http_event(self.command, url.path, query=url.query, headers=headers, body=body, claims=claims)
        with self.server.invoke:
            response = lambda_handler(event, LambdaContext())
        out_headers = {k: str(v) for k, v in (response.get("headers") or {}).items()}
        for name, values in (response.get("multiValueHeaders") or {}).items():
            out_headers[name] = ", ".join(values)
        self._reply(int(response["statusCode"]), out_headers, response_body(response))


class ApiServer(ThreadingHTTPServer):
    """Connections are served on threads, but the function runs one event at a time, as one Lambda
    container does (the Powertools resolver keeps the current event on the app object)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], secret: bytes) -> None:
        super().__init__(address, ApiAdapter)
        self.secret = secret
        self.invoke = threading.Lock()


def lambda_image(item: dict[str, Any]) -> dict[str, Any]:
    """A stream image as Lambda's JSON event carries it (binary values base64-encoded)."""

    def convert(av: dict[str, Any]) -> dict[str, Any]:
        ((kind, value),) = av.items()
        if kind == "B":
            return {"B": base64.b64encode(bytes(value)).decode()}
        if kind == "BS":
            return {"BS": [base64.b64encode(bytes(v)).decode() for v in value]}
        if kind == "M":
            return {"M": {k: convert(v) for k, v in value.items()}}
        if kind == "L":
            return {"L": [convert(v) for v in value]}
        return {kind: value}

    return {k: convert(v) for k, v in item.items()}


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
    """Feeds the sessions table's stream to the cascade function, as the event source mapping does
    (REMOVE and MODIFY records, the template's filter), once a second."""

    endpoint: str
    table: str
    stop: threading.Event = field(default_factory=threading.Event)
    processed: int = 0

    def run(self) -> None:
        from functions.cascade.app import lambda_handler

        dynamodb = local_client(endpoint_url=self.endpoint)
        streams = local_client("dynamodbstreams", endpoint_url=self.endpoint)
        arn = dynamodb.describe_table(TableName=self.table)["Table"]["LatestStreamArn"]
        iterators: dict[str, str] = {}
        while not self.stop.wait(1.0):
            try:
                for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
                    sid = shard["ShardId"]
                    if sid not in iterators:
                        iterators[sid] = streams.get_shard_iterator(
                            StreamArn=arn, ShardId=sid, ShardIteratorType="TRIM_HORIZON"
                        )["ShardIterator"]
                    page = streams.get_records(ShardIterator=iterators[sid])
                    iterators[sid] = page.get("NextShardIterator") or iterators[sid]
                    records = [lambda_stream_record(r) for r in page["Records"] if r["eventName"] != "INSERT"]
                    if records:
                        lambda_handler({"Records": records}, LambdaContext(function_name="agent-store-cascade"))
                        self.processed += len(records)
            except Exception:  # keep polling; the next round retries
                log.exception("cascade poll failed")


@dataclass
class LocalStack:
    """A running local stack (see `local_stack`)."""

    api_url: str
    aws_endpoint: str
    tables: LocalTables
    secret: bytes
    cascade: CascadePoller

    def token(self, subject: str, ttl: int = 12 * 3600) -> str:
        """A development token for `subject` (the owner of what it creates)."""
        return devtoken.issue(self.secret, subject, ttl=ttl)


@contextlib.contextmanager
def local_stack(port: int = 8000, *, cascade: bool = True, prefix: str = "local") -> Iterator[LocalStack]:
    """Start everything on 127.0.0.1 (the API on `port`; 0 picks a free one) and stop it all on exit.
    Resources are named `prefix`-... (moto's state lives as long as the process)."""
    import functions.api.app
    import functions.cascade.app  # noqa: F401 - imported before the threads that use them start
    from functions import runtime
    from store import SessionStore
    from store.session_store import s3_config

    with moto_server() as endpoint:
        dynamodb = local_client(endpoint_url=endpoint)
        s3 = local_client("s3", endpoint_url=endpoint, config=s3_config(path_style=True))
        tables = create_tables(dynamodb, prefix=prefix, s3=s3)
        store = SessionStore(tables.sessions, tables.messages, bucket=tables.bucket, client=dynamodb, s3_client=s3)
        runtime.use_store(store)
        secret = devtoken.new_secret()
        server = ApiServer(("127.0.0.1", port), secret)
        serving = threading.Thread(target=server.serve_forever, name="agent-store-api", daemon=True)
        serving.start()
        poller = CascadePoller(endpoint, tables.sessions)
        polling = threading.Thread(target=poller.run, name="agent-store-cascade", daemon=True)
        if cascade:
            polling.start()
        try:
            yield LocalStack(f"http://127.0.0.1:{server.server_address[1]}", endpoint, tables, secret, poller)
        finally:
            poller.stop.set()
            server.shutdown()
            server.server_close()
            serving.join(timeout=10)
            if cascade:
                polling.join(timeout=10)
            runtime.use_store(None)
            store.close()


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def serve(port: int = 8000, subject: str = "dev-user") -> None:
    """`make run` / `python -m infra.cli local`: start the stack, print how to use it, run until Ctrl-C (or SIGTERM),
    then stop everything."""
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    signal.signal(signal.SIGINT, _interrupt)  # also when started with SIGINT ignored (a background job)
    signal.signal(signal.SIGTERM, _interrupt)
    with local_stack(port) as stack:
        token = stack.token(subject)
        print(f"agent-session-store local stack (moto at {stack.aws_endpoint}, tables and bucket from template.yaml)")
        print(f"  API:      {stack.api_url}   (OpenAPI: {stack.api_url}/openapi.json)")
        print(f"  owner:    {subject}   (development token, valid 12 h, accepted only by this local stack)")
        print(f"\n  export TOKEN={token}\n")
        print("  curl -s -X POST -H \"Authorization: Bearer $TOKEN\" -H 'Content-Type: application/json' \\")
        print(f'       -d \'{{"title": "first"}}\' {stack.api_url}/sessions')
        print("\nPress Ctrl-C to stop.", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            print("\nstopping...", flush=True)
    print("stopped.")
