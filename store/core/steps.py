"""Driving a generator of steps, the one engine every sans-IO loop here shares: the AWS plans under the
sync and async drivers, and the flows written above the store (the LangGraph saver's, the memory layer's
runs) under their sync and async fronts. A driver performs `current` and hands the outcome to `advance` (an
exception is thrown into the generator, where it asked) until `done`; `result` is then the generator's value.

The steps flows above the store share: `StoreCall`, a call of the store's public API, asked with `ask` of a
`names_of` stand-in (so that mypy checks the method, its arguments and its result), and `Sleep`."""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Generic, ParamSpec, TypeVar, cast

S = TypeVar("S")
T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class StoreCall:
    """One call of the store's public API that a flow asks for (`method(*args, **kwargs)`), performed by the
    flow's driver on its store; the step's answer is the call's result (its exception thrown in)."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Sleep:
    """Wait `seconds` (the driver sleeps its own way) before trying `what` again. A `budgeted` sleep is a
    backoff from contention and counts toward an AWS call's retry budget; an unbudgeted one waits for a turn
    while other writers make progress (only the enclosing deadline bounds it). `seconds` 0 marks a retry made
    at once: nothing is slept, but a call past its deadline stops there."""

    seconds: float
    what: str = "write"
    budgeted: bool = True


class _Names:
    """A stand-in whose methods are only their names (`names_of`)."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        def named(*args: Any, **kwargs: Any) -> Any:
            raise TypeError(f"{name} is performed by a flow's driver, not called")

        named.__name__ = name
        return named


def names_of(cls: type[T]) -> T:
    """A stand-in for an object of `cls` whose methods are only their names: `ask(CALLS.load_state, ...)`
    names the method a flow asks for, typed as `cls` types it, so that mypy checks each call."""
    return cast(T, _Names())


def ask(method: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> Generator[StoreCall, Any, R]:
    """The store's answer to `method(*args, **kwargs)` (a `names_of` stand-in's method, performed by the
    flow's driver on its store; the call's exception is raised here)."""
    result = yield StoreCall(method.__name__, args, kwargs)
    return cast(R, result)


class Stepper(Generic[S, T]):
    """Advances `steps` on behalf of a driver, so that a sync and an async driver share everything but
    their I/O."""

    def __init__(self, steps: Generator[S, Any, T]) -> None:
        self._steps = steps
        self.done = False
        self._result: tuple[T] | None = None
        self.step: S | None = None
        self._move(lambda: next(steps))

    @property
    def result(self) -> T:
        """The generator's value (only once `done`)."""
        if self._result is None:
            raise RuntimeError("the steps have not finished")
        return self._result[0]

    @property
    def current(self) -> S:
        """The step to perform next (only while not `done`)."""
        if self.step is None:
            raise RuntimeError("the steps have finished")
        return self.step

    def advance(self, outcome: Any) -> None:
        """Give the generator the outcome of its step: sent, or thrown in when it is an exception."""
        if isinstance(outcome, BaseException):
            self._move(lambda: self._steps.throw(outcome))
        else:
            self._move(lambda: self._steps.send(outcome))

    def _move(self, move: Callable[[], S]) -> None:
        try:
            self.step = move()
        except StopIteration as stop:
            self.done, self._result, self.step = True, (stop.value,), None


PASS: Any = object()  # `relay`'s handler hands the step on to the driver


def relay(steps: Generator[S, Any, T], handle: Callable[[S], Any]) -> Generator[S, Any, T]:
    """`steps`, with some answered on the way: `handle(step)` returns PASS to hand the step on (its outcome
    goes back to `steps`), an exception to have it thrown into `steps` in the step's place, or anything else
    as the step's outcome."""
    outcome: Any = None
    failure: BaseException | None = None
    while True:
        try:
            step = steps.throw(failure) if failure is not None else steps.send(outcome)
        except StopIteration as stop:
            result: T = stop.value
            return result
        outcome, failure = None, None
        answer = handle(step)
        if isinstance(answer, BaseException):
            failure = answer
        elif answer is not PASS:
            outcome = answer
        else:
            try:
                outcome = yield step
            except GeneratorExit:
                steps.close()
                raise
            except Exception as exc:  # what the driver throws in: an AWS error, or a caller's stream failing
                failure = exc
