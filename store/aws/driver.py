"""The synchronous driver: runs plans with boto3 clients."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from store.aws.calls import AwsError, Call, Driven, Parallel, Read, Sleep, Step, Stepper
from store.aws.errors import from_client_error, from_transport_error, to_store_error
from store.core.streams import read_chunk
from store.errors import StoreError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_s3 import S3Client

T = TypeVar("T")


class Clients(TypedDict, total=False):
    """The boto3 clients a sync driver calls: DynamoDB always, S3 when the store has a bucket."""

    dynamodb: DynamoDBClient
    s3: S3Client


PARALLEL_WORKERS = 8


class SyncDriver:
    """Executes the steps a plan yields with long-lived boto3 clients (one per service); `Parallel` calls
    run on a small shared thread pool (boto3 clients are thread-safe)."""

    def __init__(self, clients: Clients, sleep: Callable[[float], None] = time.sleep) -> None:
        self._clients = clients
        self._sleep = sleep
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def client(self, service: str) -> DynamoDBClient | S3Client:
        """The client of `service` ("dynamodb" or "s3")."""
        return self._clients["s3"] if service == "s3" else self._clients["dynamodb"]

    def run(self, plan: Driven[T]) -> T:
        """Drive `plan` to completion and return its result; AWS errors it does not handle become
        StoreErrors."""
        stepper = Stepper(plan)
        try:
            while not stepper.done:
                stepper.advance(self._perform(stepper.current))
        except AwsError as err:
            raise to_store_error(err) from err
        return stepper.result

    def close(self) -> None:
        """Stop the thread pool (clients are left to their owner)."""
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None

    def _perform(self, step: Step) -> Any:
        """The outcome of one step: what the plan receives, or the error it is thrown."""
        if isinstance(step, Sleep):
            self._sleep(step.seconds)
            return None
        if isinstance(step, Read):
            try:
                return read_chunk(step.source, step.size)
            except StoreError as exc:
                return exc
        if isinstance(step, Parallel):
            return self._parallel(step.calls)
        return self._call(step)

    def _call(self, call: Call) -> Any:
        """The response of one call, or the AwsError it failed with (returned, not raised)."""
        try:
            response = getattr(self.client(call.service), call.op)(**call.params)
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

    def _parallel(self, calls: tuple[Call, ...]) -> list[Any]:
        if len(calls) <= 1:
            return [self._call(c) for c in calls]
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(PARALLEL_WORKERS, thread_name_prefix="agent-store")
            pool = self._pool
        return list(pool.map(self._call, calls))
