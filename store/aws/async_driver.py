"""The asynchronous driver: runs the same plans as the sync driver with aiobotocore clients.

It only executes steps: a `Call` on a long-lived aiobotocore client (created on first use, closed by
`aclose`), `Parallel` calls with `asyncio.gather`, `Read` from a caller's sync or async stream, `Sleep`
with `asyncio.sleep`. Plans, key layout, conditions, retries and error mapping are shared."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast, overload

from botocore.exceptions import BotoCoreError, ClientError

from store.aws.calls import AwsError, Call, Driven, Parallel, Read, Sleep, Step, Stepper
from store.aws.errors import from_client_error, from_transport_error, to_store_error
from store.core.streams import aread_chunk
from store.errors import StoreError

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient
    from types_aiobotocore_s3 import S3Client

T = TypeVar("T")

PARALLEL_LIMIT = 16


def _transport_errors() -> tuple[type[BaseException], ...]:
    """What aiohttp and asyncio raise when a request gets no response."""
    import aiohttp

    return (BotoCoreError, aiohttp.ClientError, asyncio.TimeoutError, ConnectionError)


class AsyncClients:
    """One session's clients, created on first use and kept until `aclose`: an aiobotocore session
    (`create_client`), or an aioboto3 `Session` (`client`), which wraps one."""

    def __init__(self, session: Any, configs: dict[str, dict[str, Any]], given: dict[str, Any] | None = None) -> None:
        self._session = session
        self._configs = configs
        self._clients: dict[str, DynamoDBClient | S3Client] = dict(given or {})
        self._stack = contextlib.AsyncExitStack()
        self._lock = asyncio.Lock()

    @overload
    async def get(self, service: Literal["dynamodb"]) -> DynamoDBClient: ...
    @overload
    async def get(self, service: Literal["s3"]) -> S3Client: ...
    @overload
    async def get(self, service: str) -> DynamoDBClient | S3Client: ...

    async def get(self, service: str) -> DynamoDBClient | S3Client:
        """The client of `service` ("dynamodb" or "s3"), created on first use."""
        client = self._clients.get(service)
        if client is not None:
            return client
        async with self._lock:
            if service not in self._clients:
                try:
                    make = getattr(self._session, "create_client", None) or self._session.client
                    made = make(service, **self._configs.get(service, {}))
                    self._clients[service] = cast(
                        "DynamoDBClient | S3Client", await self._stack.enter_async_context(made)
                    )
                except BotoCoreError as exc:  # no region, a bad endpoint
                    from store.errors import InvalidInput

                    raise InvalidInput(f"cannot create the {service} client: {exc}") from exc
            return self._clients[service]

    async def aclose(self) -> None:
        """Close the clients this object created (given ones belong to their owner)."""
        await self._stack.aclose()
        self._clients.clear()


class AsyncDriver:
    """Executes the steps a plan yields with aiobotocore clients; `run` returns a coroutine."""

    def __init__(self, clients: AsyncClients) -> None:
        self.clients = clients
        self._limit = asyncio.Semaphore(PARALLEL_LIMIT)
        self._transport = _transport_errors()

    async def run(self, plan: Driven[T]) -> T:
        """Drive `plan` to completion and return its result; AWS errors the plan does not handle become
        StoreErrors."""
        stepper = Stepper(plan)
        try:
            while not stepper.done:
                stepper.advance(await self._perform(stepper.current))
        except AwsError as err:
            raise to_store_error(err) from err
        return stepper.result

    async def aclose(self) -> None:
        await self.clients.aclose()

    async def _perform(self, step: Step) -> Any:
        """The outcome of one step: what the plan receives, or the error it is thrown."""
        if isinstance(step, Sleep):
            await asyncio.sleep(step.seconds)
            return None
        if isinstance(step, Read):
            try:
                return await aread_chunk(step.source, step.size)
            except StoreError as exc:
                return exc
        if isinstance(step, Parallel):
            return list(await asyncio.gather(*(self._call(c) for c in step.calls)))
        return await self._call(step)

    async def _call(self, call: Call) -> Any:
        """The response of one call, or the AwsError it failed with (returned, not raised)."""
        async with self._limit:
            client = await self.clients.get(call.service)
            try:
                response = getattr(client, call.op)(**call.params)
                if inspect.isawaitable(response):
                    response = await response
                if not call.stream and isinstance(response, dict) and hasattr(response.get("Body"), "read"):
                    body = response["Body"]
                    async with body:
                        response["Body"] = await body.read()
            except ClientError as exc:
                return from_client_error(exc.response, call)  # type: ignore[arg-type]
            except self._transport as exc:
                return from_transport_error(exc, call)
            return response
