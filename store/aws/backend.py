"""The DynamoDB backends: each request's plan (`PLANS`), run by a sync or an async driver.

`PLANS` is the one place a request meets its plan, derived from the operations' names (each plan is the
function of its operation's name in `store/aws/plans/`); both backends look the plan up there, bound it
by the retry budget, and hand it to their driver."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from store.aws import plans as plan_package
from store.aws.calls import Driven, Learn, Plan
from store.aws.plans.base import INDEX_DIMENSIONS, POSITIONS, TRACE_BATCHES, TURN_TIMES, Context, waits_within
from store.backend import AsyncBackend, Backend
from store.core.lru import Lru
from store.core.steps import relay
from store.requests import Request, operations
from store.settings import Settings

if TYPE_CHECKING:
    from store.aws.async_driver import AsyncDriver
    from store.aws.driver import SyncDriver

R = TypeVar("R")

PlanFunction = Callable[[Context, Any], Plan[Any]]


def plan_modules() -> tuple[ModuleType, ...]:
    """Every module of `store.aws.plans`."""
    found = pkgutil.iter_modules(plan_package.__path__, plan_package.__name__ + ".")
    return tuple(importlib.import_module(m.name) for m in sorted(found, key=lambda m: m.name))


def plans_by_name(modules: tuple[ModuleType, ...]) -> dict[type[Request[Any]], PlanFunction]:
    """Each operation's plan: the function of the operation's name defined in one of `modules` (one name at
    every layer: an operation is declared once, by its request record's `operation`, and its plan is found
    by that name). Raises at import when an operation has no plan or two."""
    found: dict[type[Request[Any]], PlanFunction] = {}
    for name, request in operations().items():
        owners = [m for m in modules if getattr(getattr(m, name, None), "__module__", None) == m.__name__]
        if len(owners) != 1:
            raise RuntimeError(f"operation {name!r} has {len(owners)} plans in {plan_package.__name__} (one is wanted)")
        found[request] = getattr(owners[0], name)
    return found


PLANS: Mapping[type[Request[Any]], PlanFunction] = plans_by_name(plan_modules())


def plan_of(ctx: Context, request: Request[R]) -> Driven[R]:
    """The request's plan as its driver runs it: what the plan learns kept in the context's caches
    (`keeper`: the caches are the backend's, a plan only reads them), its waits bounded by the retry budget
    (`waits_within`); every other step handed on."""
    plan: Plan[R] = PLANS[type(request)](ctx, request)
    keep, bound = keeper(ctx), waits_within(ctx, ctx.settings.retry_budget.total_seconds())
    driven: Driven[R] = relay(plan, lambda step: keep(step) if isinstance(step, Learn) else bound(step))  # type: ignore[arg-type]
    return driven


def keeper(ctx: Context) -> Callable[[Learn], None]:
    """What keeps what a plan learns (`Learn` steps) in the context's caches."""
    caches: dict[str, Lru[Any]] = {
        POSITIONS: ctx.positions,
        TRACE_BATCHES: ctx.trace_batches,
        TURN_TIMES: ctx.turn_times,
        INDEX_DIMENSIONS: ctx.index_dimensions,
    }

    def keep(step: Learn) -> None:
        if step.value is None:
            caches[step.cache].drop(step.key)
        else:
            caches[step.cache].put(step.key, step.value)

    return keep


@dataclass(frozen=True)
class Tables:
    """Where a DynamoDB store keeps its data: what a front names, from which the backend makes its plans'
    context (the front never builds plan-layer state itself)."""

    sessions: str
    messages: str
    bucket: str | None
    settings: Settings
    memories: str | None = None  # long-term memory's table (None: the store offers no memory operations)

    def context(self) -> Context:
        return Context(self.sessions, self.messages, self.settings, bucket=self.bucket, memories_table=self.memories)


class DynamoBackend(Backend):
    """Runs each request's plan with the sync driver (boto3)."""

    name = "dynamodb"

    def __init__(self, where: Tables | Context, driver: SyncDriver) -> None:
        self.ctx = where.context() if isinstance(where, Tables) else where
        self.driver = driver

    def execute(self, request: Request[R]) -> R:
        return self.driver.run(plan_of(self.ctx, request))

    def close(self) -> None:
        """Stop the driver's thread pool."""
        self.driver.close()


class AsyncDynamoBackend(AsyncBackend):
    """Runs each request's plan with the async driver (aiobotocore)."""

    name = "dynamodb"

    def __init__(self, where: Tables | Context, driver: AsyncDriver) -> None:
        self.ctx = where.context() if isinstance(where, Tables) else where
        self.driver = driver

    async def execute(self, request: Request[R]) -> R:
        return await self.driver.run(plan_of(self.ctx, request))

    async def aclose(self) -> None:
        """Close the clients the driver created."""
        await self.driver.aclose()
