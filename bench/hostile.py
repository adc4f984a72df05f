"""What hostile input costs: for each input the hardening probe found, how the DynamoDB-backed store and the
HTTP API refuse it, how many AWS requests that took and how long (moto's server on 127.0.0.1, in-process
API handler). Also: how long a call keeps retrying when every transaction meets contention (the time budget).

    .venv/bin/python -m bench.hostile
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from typing import Any

from infra.local.aws import create_tables, local_client, local_environment, moto_server


class Counter:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self, **_: Any) -> None:
        self.n += 1


def measure(counter: Counter, call: Callable[[], Any]) -> tuple[str, int, float]:
    counter.n = 0
    started = time.perf_counter()
    try:
        result = call()
        outcome = f"HTTP {result}" if isinstance(result, int) else "accepted"
    except Exception as exc:
        outcome = type(exc).__name__
    return outcome, counter.n, (time.perf_counter() - started) * 1000


def deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def main() -> None:
    local_environment("ERROR")
    from functions.api import context
    from infra.local.apigw import LambdaContext, http_event
    from store import SessionStore, Settings
    from store.core.scoped_ids import scoped_id
    from store.session_store import retry_config, s3_config

    with moto_server() as endpoint:
        from botocore.config import Config

        dynamodb = local_client(endpoint_url=endpoint, config=retry_config(Config(retries={"max_attempts": 1})))
        s3 = local_client("s3", endpoint_url=endpoint, config=s3_config(path_style=True))
        tables = create_tables(dynamodb, prefix="hostile", s3=s3)
        counter = Counter()
        dynamodb.meta.events.register("before-send.dynamodb.*", counter)
        s3.meta.events.register("before-send.s3.*", counter)
        store = SessionStore(tables.sessions, tables.messages, bucket=tables.bucket, client=dynamodb, s3_client=s3)
        sid = scoped_id("alice", "s1")
        store.create_session("alice", session_id=sid)
        mid = store.append_messages(sid, [{"role": "user", "content": "x"}])[0].id
        context.use_store(store)
        from functions.api.app import lambda_handler

        def http(method: str, path: str, body: str) -> int:
            claims = {"sub": "alice"}
            event = http_event(
                method, path, headers={"content-type": "application/json"}, body=body.encode(), claims=claims
            )
            return int(lambda_handler(event, LambdaContext())["statusCode"])

        library: list[tuple[str, Callable[[], Any]]] = [
            ("update_usage cost 1e300", lambda: store.update_usage(sid, mid, {"cost": 1e300})),
            ("update_usage cost 1e-300", lambda: store.update_usage(sid, mid, {"cost": 1e-300})),
            ("update_usage cost NaN", lambda: store.update_usage(sid, mid, {"cost": float("nan")})),
            ("append, usage cost 1e300", lambda: store.append_messages(sid, [{"role": "u", "usage": {"cost": 1e300}}])),
            ("save_state 10,000-deep array", lambda: store.save_state(sid, deep(10_000))),
            ("save_state 5,000-digit integer", lambda: store.save_state(sid, 10**5000)),
            ("append, lone surrogate", lambda: store.append_messages(sid, [{"role": "u", "content": "\ud800"}])),
            ("save_state, non-string key", lambda: store.save_state(sid, {1: "a"})),
            ("confirm_artifact_upload http://[::1/x", lambda: store.confirm_artifact_upload(sid, "n", "http://[::1/x")),
            ("reclaim malformed record", lambda: store.reclaim([{"eventName": "REMOVE", "dynamodb": "x"}])),
        ]
        over_http: list[tuple[str, Callable[[], Any]]] = [
            (
                "PUT usage cost 1e300",
                lambda: http("PUT", f"/sessions/s1/messages/{mid}/usage", '{"usage": {"cost": 1e300}}'),
            ),
            (
                "PUT state 10,000-deep array",
                lambda: http("PUT", "/sessions/s1/state", '{"state": ' + "[" * 10**4 + "]" * 10**4 + "}"),
            ),
            (
                "PUT state 5,000-digit integer",
                lambda: http("PUT", "/sessions/s1/state", '{"state": ' + "7" * 5000 + "}"),
            ),
            ("PUT state NaN", lambda: http("PUT", "/sessions/s1/state", '{"state": NaN}')),
            (
                "POST message, lone surrogate",
                lambda: http("POST", "/sessions/s1/messages", '{"messages": [{"role": "u", "content": "\\ud800"}]}'),
            ),
        ]
        print("| input | via | outcome | AWS requests | ms |")
        print("| --- | --- | --- | --- | --- |")
        for via, cases in (("library", library), ("HTTP", over_http)):
            for name, call in cases:
                outcome, requests, ms = measure(counter, call)
                print(f"| {name} | {via} | {outcome} | {requests} | {ms:.1f} |")

        # contention on every attempt: how long until the call gives up (the retry budget)
        def conflicting(request: Any, **_: Any) -> Any:
            from botocore.awsrequest import AWSResponse

            body = {
                "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
                "message": "cancelled",
                "CancellationReasons": [{"Code": "TransactionConflict"}],
            }

            class Raw:
                def stream(self, **_: Any) -> Any:
                    yield json.dumps(body).encode()

            request.url = "https://injected.invalid/"
            headers: Any = {"Content-Type": "application/x-amz-json-1.0"}
            return AWSResponse(request.url, 400, headers, Raw())

        dynamodb.meta.events.register("before-send.dynamodb.TransactWriteItems", conflicting)
        print("\n| contention on every attempt | budget | outcome | transactions | s |")
        print("| --- | --- | --- | --- | --- |")
        for budget in (1.0, 5.0):
            settings = Settings(retry_budget=timedelta(seconds=budget))
            contended = SessionStore(tables.sessions, tables.messages, client=dynamodb, settings=settings)
            outcome, requests, ms = measure(counter, partial(contended.append_messages, sid, [{"role": "u"}]))
            print(f"| append_messages (library) | {budget:g} s | {outcome} | {requests} | {ms / 1000:.2f} |")
        context.use_store(None)


if __name__ == "__main__":
    main()
