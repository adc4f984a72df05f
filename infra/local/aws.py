"""The local stack: DynamoDB tables created from template.yaml, on moto (in-process or its server)."""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import socket
import subprocess  # nosec B404: starts this module's own server
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from infra.deploy.template import BUCKET_ENV, TABLE_ENV, buckets, tables
from infra.local import vectors

REGION = "us-east-1"
FAKE_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


def local_environment(log_level: str = "WARNING") -> None:
    """The environment the local tools run in (where not set already): moto's fake credentials and region,
    and Powertools with tracing and metrics off."""
    import os

    for name, value in (
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_DEFAULT_REGION", REGION),
        ("POWERTOOLS_TRACE_DISABLED", "true"),
        ("POWERTOOLS_METRICS_DISABLED", "true"),
        ("POWERTOOLS_LOG_LEVEL", log_level),
    ):
        os.environ.setdefault(name, value)


def local_session() -> Any:
    """A boto3 session for the embedded AWS (fake credentials, us-east-1): its clients can be hooked as one."""
    import boto3

    return boto3.Session(region_name=REGION, **FAKE_CREDENTIALS)  # type: ignore[arg-type]


def local_client(service: str = "dynamodb", endpoint_url: str | None = None, config: Any = None) -> Any:
    """A client for the embedded AWS (fake credentials, us-east-1)."""
    import boto3

    return boto3.client(  # type: ignore[call-overload]
        service, region_name=REGION, endpoint_url=endpoint_url, config=config, **FAKE_CREDENTIALS
    )


@dataclass(frozen=True)
class LocalTables:
    """Names of the tables created locally, by the environment variable that carries them."""

    names: dict[str, str]

    @property
    def sessions(self) -> str:
        return self.names["SESSIONS_TABLE"]

    @property
    def messages(self) -> str:
        return self.names["MESSAGES_TABLE"]

    @property
    def bucket(self) -> str | None:
        return self.names.get("ARTIFACTS_BUCKET")

    @property
    def memories(self) -> str | None:
        return self.names.get("MEMORIES_TABLE")

    def store(self, client: Any, s3_client: Any = None, *, settings: Any = None, front: Any = None) -> Any:
        """A store (`front`: SessionStore unless given, AsyncSessionStore say) on these tables and bucket, through
        the given clients."""
        if front is None:
            from store import SessionStore

            front = SessionStore
        return front(
            self.sessions,
            self.messages,
            bucket=self.bucket,
            memories_table=self.memories,
            client=client,
            s3_client=s3_client,
            settings=settings,
        )

    def table_names(self) -> dict[str, str]:
        """Every table's name, by the variable that carries it."""
        return {env: name for env, name in self.names.items() if env.endswith("_TABLE")}


def create_tables(
    client: Any,
    prefix: str = "agent-store",
    s3: Any = None,
    parameters: dict[str, Any] | None = None,
    template: dict[str, Any] | None = None,
) -> LocalTables:
    """Create every table of template.yaml through `client` (names: prefix-logicalid), enable TTL as
    the template says, and, given an S3 client, every bucket (names: prefix-logicalid, lowercase) with
    its encryption, public access block, ownership and lifecycle rules; return their names. `parameters`
    overrides the template's parameters' defaults, as a deployment's `--parameter-overrides` does; `template`
    replaces template.yaml (an edited copy of it)."""
    vectors.install()
    names: dict[str, str] = {}
    if s3 is not None:
        for logical_id, bucket_spec in buckets().items():
            bucket = f"{prefix}-{logical_id}".lower()
            s3.create_bucket(Bucket=bucket)
            for op, params in bucket_spec.setup_requests(bucket):
                getattr(s3, op)(**params)
            if logical_id in BUCKET_ENV:
                names[BUCKET_ENV[logical_id]] = bucket
    for logical_id, spec in tables(template, overrides=parameters).items():
        name = f"{prefix}-{logical_id}"
        client.create_table(**spec.create_request(name))
        if spec.ttl_attribute:
            client.update_time_to_live(
                TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": spec.ttl_attribute}
            )
        if logical_id in TABLE_ENV:
            names[TABLE_ENV[logical_id]] = name
    return LocalTables(names)


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class _OneRequestAtATime:
    """WSGI wrapper executing one request at a time. moto's backends are not safe under concurrent
    requests (a transaction can be half-applied, or fail on a dict changed mid-iteration); DynamoDB
    executes each request atomically. Clients still connect and interleave their requests freely.

    It is also the storage port's door. moto answers anyone who can reach it, so a web page (of any origin,
    or a `file://` page) could read every owner's data with a Scan, or wipe the stack through
    `/moto-api/reset`. Only requests for this server's own address (`Host`: 127.0.0.1 or localhost at its
    port, which defeats DNS rebinding) that no browser sent (no `Origin` header: browsers add one to every
    cross-origin request, and to every POST) are served; the rest get 403. moto's global CORS is off."""

    def __init__(self, app: Any, latency: float = 0.0, port: int = 0, timed: bool = False) -> None:
        self.app = app
        self.lock = threading.Lock()
        self.latency = latency
        self.timed = timed
        self.hosts = frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})

    def __call__(self, environ: Any, start_response: Any) -> list[bytes]:
        refusal = self.refusal(environ)
        if refusal is not None:
            start_response("403 Forbidden", [("Content-Type", "text/plain"), ("Content-Length", str(len(refusal)))])
            return [refusal]
        if self.latency:  # a network's round trip: concurrent requests wait for it side by side
            time.sleep(self.latency)
        with self.lock:
            if not self.timed:
                return list(self.app(environ, start_response))
            started = time.perf_counter()
            answer: list[Any] = []

            def timing(status: str, headers: list[tuple[str, str]], *rest: Any) -> Any:
                answer[:] = [status, headers, rest]
                return lambda data: None

            body = list(self.app(environ, timing))
            status, headers, rest = answer
            served = f"{(time.perf_counter() - started) * 1000:.3f}"
            start_response(status, [*headers, (SERVED_HEADER, served)], *rest)
            return body

    def refusal(self, environ: Any) -> bytes | None:
        """Why this request is not served (None: it is)."""
        if environ.get("HTTP_ORIGIN") is not None:
            return b"the local stack's storage does not answer browsers: use the API"
        if (environ.get("HTTP_HOST") or "").lower() not in self.hosts:
            return b"the local stack's storage answers requests for its own address only"
        return None


def _wire(value: Any) -> Any:
    """A binary value of a DynamoDB answer in the JSON protocol's form (base64); anything else that is not JSON
    is a TypeError, and the answer goes to moto's serializer."""
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"not in DynamoDB's JSON: {type(value).__name__}")


DIRECT_ACTIONS = frozenset(
    {
        "GetItem",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "Query",
        "Scan",
        "BatchGetItem",
        "BatchWriteItem",
        "TransactGetItems",
        "TransactWriteItems",
    }
)  # the item operations: their answers are items and counts, already in the protocol's shape


def _direct_answer(action: str, action_result: Any) -> str | None:
    """An item operation's answer written as its JSON directly (None: one for moto's serializer: an error, or
    another operation, whose answers moto shapes by botocore's model)."""
    result = action_result.result
    if action not in DIRECT_ACTIONS or isinstance(result, Exception) or not isinstance(result, dict):
        return None
    try:
        return json.dumps(result, default=_wire)
    except TypeError:  # a value moto's serializer knows how to write (none was met in an item operation's answer)
        return None


def direct_dynamodb_answers() -> None:
    """Write DynamoDB's answers as the JSON they already are. moto's serializer walks botocore's model of each
    answer, member by member: most of a Query's time on moto (70% of a 40-message transcript read), none of
    DynamoDB's. The item operations' answers are written as the same JSON directly (tests/aws/test_local_aws.py
    compares the two on every kind of value); errors and the other operations still go through moto's
    serializer. Idempotent."""
    from moto.dynamodb.responses import DynamoHandler

    if getattr(DynamoHandler, "_agent_store_direct", False):
        return
    original = DynamoHandler.serialized

    def serialized(self: Any, action_result: Any) -> Any:
        body = _direct_answer(self._get_action(), action_result)
        if body is None:
            return original(self, action_result)
        return 200, {"Content-Type": "application/x-amz-json-1.0", **self.response_headers}, body

    DynamoHandler.serialized = serialized  # type: ignore[method-assign]
    DynamoHandler._agent_store_direct = True  # type: ignore[attr-defined]


def quicker_moto() -> None:
    """Cache two things moto works out again on every request, although they never change while it runs: the
    list of its own service modules (a directory listing, in server mode) and each response class's method
    names (an `inspect.getmembers`). The same answers, without the per-request cost (about 1.5 ms of a
    request's 8 ms on the contention runs). Idempotent."""
    import functools

    import moto.backends as moto_backends
    import moto.core.responses as moto_responses

    if getattr(moto_responses, "_agent_store_quicker", False):
        return
    vectors.install()  # before the method names are cached
    direct_dynamodb_answers()
    modules = tuple(moto_backends.list_of_moto_modules())
    moto_backends.list_of_moto_modules = lambda: modules
    names = functools.cache(moto_responses.method_names_from_class)  # type: ignore[attr-defined]
    moto_responses.method_names_from_class = names  # type: ignore[attr-defined]
    moto_responses._agent_store_quicker = True  # type: ignore[attr-defined]


SERVED_HEADER = "X-Served-Ms"  # with `timed`: the milliseconds moto spent on the request (benchmarks subtract it)


def _serialized_server_class(latency: float = 0.0, timed: bool = False) -> Any:
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    class SerializedMotoServer(ThreadedMotoServer):
        def _server_entry(self) -> None:
            app = _OneRequestAtATime(DomainDispatcherApplication(create_backend_app), latency, self._port, timed)
            self._server = make_server(self._ip_address, self._port, app, True, request_handler=MotoRequestHandler)
            self._server_ready_event.set()
            self._server.serve_forever()

    return SerializedMotoServer


@contextlib.contextmanager
def moto_server(port: int | None = None, latency: float = 0.0, timed: bool = False) -> Iterator[str]:
    """moto's server on 127.0.0.1 only (a thread, stopped on exit), executing one request at a time;
    yields its endpoint URL. `latency` adds that many seconds to every request before it is executed
    (a network's round trip; concurrent requests wait side by side), for benchmarks; `timed` answers each
    request with the time moto spent on it (SERVED_HEADER), for benchmarks that leave moto's own work out."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    quicker_moto()
    import moto.moto_server.werkzeug_app as moto_app

    moto_app.DISABLE_GLOBAL_CORS = True  # type: ignore[attr-defined]  # no CORS answer for any origin
    port = port or free_port()
    server = _serialized_server_class(latency, timed)(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@contextlib.contextmanager
def moto_server_process(latency: float = 0.0, *, lean: bool = False, timed: bool = False) -> Iterator[str]:
    """moto's server as in `moto_server`, in a process of its own (so its CPU is not the caller's), with
    per-item transaction backups, for benchmarks; yields its endpoint URL once it listens, stopped on exit.
    `lean`, for benchmarks that hold 100,000 vectors and read no stream: equal numbers in lists are one object
    (`shared_list_numbers`) and no stream record is kept (`no_stream_records`); `timed` as in `moto_server`."""
    port = free_port()
    flags = ["--per-item-transaction-backups", *(["--lean"] if lean else []), *(["--timed"] if timed else [])]
    server = subprocess.Popen(
        [sys.executable, "-m", "infra.local.aws", str(port), str(latency), *flags],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        server.stdout.readline()  # the server prints its URL once it listens
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)


def per_item_transaction_backups() -> None:
    """For the local stack, benchmarks and load runs: moto backs up every table a TransactWriteItems touches with a deep
    copy (to roll back one that fails), so each transaction costs O(table size) and runs of thousands of
    appends slow to hours. This backs up only the items the transaction names (the only ones it can
    change) and restores exactly those when it fails: the same outcome, at the cost of the items."""
    import moto.dynamodb.models as models
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.table import Table

    if getattr(models, "_agent_store_item_backups", False):  # installed already (idempotent)
        return
    models._agent_store_item_backups = True  # type: ignore[attr-defined]
    real = models.copy.deepcopy  # type: ignore[attr-defined]

    class _Copy:
        @staticmethod
        def deepcopy(value: Any, memo: Any = None) -> Any:
            return value if isinstance(value, Table) else real(value, memo)

    models.copy = _Copy  # type: ignore[attr-defined,assignment]
    original = models.DynamoDBBackend.transact_write_items

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        saved = []
        for entry in transact_items:
            _, op = next(iter(entry.items()))
            table = self.tables.get(op.get("TableName"))
            source = op.get("Key") or op.get("Item") or {}
            if table is None or table.hash_key_attr not in source:
                continue
            hash_key = DynamoType(source[table.hash_key_attr])
            range_attr = table.range_key_attr
            range_key = DynamoType(source[range_attr]) if range_attr and range_attr in source else None
            item = table.get_item(hash_key, range_key)
            saved.append((table, hash_key, range_key, real(item) if item is not None else None))
        try:
            original(self, transact_items)
        except Exception:
            for table, hash_key, range_key, item in reversed(saved):
                rows = table.items
                if range_key is None:
                    if item is None:
                        rows.pop(hash_key, None)
                    else:
                        rows[hash_key] = item
                elif item is None:
                    rows.get(hash_key, {}).pop(range_key, None)
                else:
                    rows.setdefault(hash_key, {})[range_key] = item
            raise

    models.DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]


def shared_list_numbers() -> None:
    """For benchmarks that keep 100,000 vectors in moto: moto holds each number of a list (a vector's every
    component) as an object of its own, a few hundred bytes each, so 100,000 memories of 768 numbers would take
    more memory than this machine has. This makes equal numbers in a list one shared object (most of a memory's
    word buckets are 0): what is stored and answered is the same, as nothing changes a list's elements in
    place (an update replaces the attribute)."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    if getattr(DynamoType, "_agent_store_shared", False):  # installed already (idempotent)
        return
    shared: dict[str, DynamoType] = {}
    original = DynamoType.__init__

    def init(self: Any, type_as_dict: Any) -> None:
        original(self, type_as_dict)
        if self.type == "L":
            self.value = [shared.setdefault(v.value, v) if v.type == "N" else v for v in self.value]

    DynamoType.__init__ = init  # type: ignore[method-assign]
    DynamoType._agent_store_shared = True  # type: ignore[attr-defined]


def no_stream_records() -> None:
    """For benchmarks that read no stream: moto keeps every stream record of a table for ever (each a JSON copy
    of the item: 100,000 memories' vectors would take more memory than this machine has); this keeps none."""
    from moto.dynamodb.models.table import StreamShard

    StreamShard.add = lambda self, old, new: None  # type: ignore[method-assign]


def main() -> None:
    """Run moto's server (one request at a time) on 127.0.0.1 until interrupted:
    `python -m infra.local.aws PORT [LATENCY_SECONDS] [--per-item-transaction-backups] [--lean] [--timed]`."""
    import sys

    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    port = int(args[0]) if args else free_port()
    latency = float(args[1]) if len(args) > 1 else 0.0
    if "--per-item-transaction-backups" in sys.argv:
        per_item_transaction_backups()
    if "--lean" in sys.argv:
        shared_list_numbers()
        no_stream_records()
    with moto_server(port, latency, timed="--timed" in sys.argv) as url:
        print(url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return


if __name__ == "__main__":
    main()
