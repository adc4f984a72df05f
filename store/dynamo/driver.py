"""The synchronous driver: runs plans with boto3 clients."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from store.dynamo.calls import AwsError, Call, Plan, Sleep
from store.dynamo.errors import from_client_error, from_transport_error, to_store_error

T = TypeVar("T")


class SyncDriver:
    """Executes the steps a plan yields with long-lived boto3 clients (one per service)."""

    def __init__(self, clients: Mapping[str, Any], sleep: Callable[[float], None] = time.sleep) -> None:
        self._clients = dict(clients)
        self._sleep = sleep

    def client(self, service: str) -> Any:
        return self._clients[service]

    def run(self, plan: Plan[T]) -> T:
        """Drive `plan` to completion and return its result; AWS errors it does not handle become StoreErrors."""
        try:
            step = next(plan)
            while True:
                if isinstance(step, Sleep):
                    self._sleep(step.seconds)
                    step = plan.send(None)
                    continue
                step = self._execute(plan, step)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        except AwsError as err:
            raise to_store_error(err) from None

    def _execute(self, plan: Plan[Any], call: Call) -> Any:
        try:
            response = getattr(self._clients[call.service], call.op)(**call.params)
        except ClientError as exc:
            return plan.throw(from_client_error(exc.response, call))  # type: ignore[arg-type]
        except BotoCoreError as exc:
            return plan.throw(from_transport_error(exc, call))
        return plan.send(response)
