"""The synchronous driver: runs plans with boto3 clients."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from store.dynamo.calls import AwsError, Call, Parallel, Plan, Read, Sleep
from store.dynamo.errors import from_client_error, from_transport_error, to_store_error
from store.errors import StoreError
from store.streams import read_chunk

T = TypeVar("T")

PARALLEL_WORKERS = 8


class SyncDriver:
    """Executes the steps a plan yields with long-lived boto3 clients (one per service); `Parallel` calls
    run on a small shared thread pool (boto3 clients are thread-safe)."""

    def __init__(self, clients: Mapping[str, Any], sleep: Callable[[float], None] = time.sleep) -> None:
        self._clients = dict(clients)
        self._sleep = sleep
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def client(self, service: str) -> Any:
        return self._clients[service]

    def run(self, plan: Plan[T], then: Callable[[Any], Any] | None = None) -> T:
        """Drive `plan` to completion and return its result (passed through `then`, if given); AWS errors
        it does not handle become StoreErrors."""
        result = self._drive(plan)
        return then(result) if then is not None else result

    def _drive(self, plan: Plan[T]) -> T:
        try:
            step = next(plan)
            while True:
                if isinstance(step, Sleep):
                    self._sleep(step.seconds)
                    step = plan.send(None)
                elif isinstance(step, Read):
                    step = self._read(plan, step)
                elif isinstance(step, Parallel):
                    step = self._parallel(plan, step)
                else:
                    step = self._execute(plan, step)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        except AwsError as err:
            raise to_store_error(err) from None

    def close(self) -> None:
        """Stop the thread pool (clients are left to their owner)."""
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None

    def _call(self, call: Call) -> Any:
        """The response of one call, or the AwsError it failed with (returned, not raised)."""
        try:
            response = getattr(self._clients[call.service], call.op)(**call.params)
        except ClientError as exc:
            return from_client_error(exc.response, call)  # type: ignore[arg-type]
        except BotoCoreError as exc:
            return from_transport_error(exc, call)
        if not call.stream and isinstance(response, dict) and hasattr(response.get("Body"), "read"):
            body = response["Body"]
            try:
                response["Body"] = body.read()
            except BotoCoreError as exc:
                return from_transport_error(exc, call)
            finally:
                body.close()
        return response

    def _read(self, plan: Plan[Any], step: Read) -> Any:
        """Feed the plan the next chunk of a stream; a failing stream is thrown into the plan (so that
        it can undo what it started) as the InvalidInput `read_chunk` raises."""
        try:
            data = read_chunk(step.source, step.size)
        except StoreError as exc:
            return plan.throw(exc)
        return plan.send(data)

    def _execute(self, plan: Plan[Any], call: Call) -> Any:
        result = self._call(call)
        if isinstance(result, AwsError):
            return plan.throw(result)
        return plan.send(result)

    def _parallel(self, plan: Plan[Any], step: Parallel) -> Any:
        if len(step.calls) <= 1:
            results = [self._call(c) for c in step.calls]
        else:
            with self._pool_lock:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(PARALLEL_WORKERS, thread_name_prefix="agent-store")
                pool = self._pool
            results = list(pool.map(self._call, step.calls))
        failure = next((r for r in results if isinstance(r, AwsError)), None)
        if failure is not None and not step.return_errors:
            return plan.throw(failure)
        return plan.send(results)
