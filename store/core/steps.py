"""Driving a generator of steps, the one engine every sans-IO loop here shares: the AWS plans under the
sync and async drivers, and the LangGraph saver's flows under its sync and async methods. A driver
performs `current` and hands the outcome to `advance` (an exception is thrown into the generator, where
it asked) until `done`; `result` is then the generator's value."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, Generic, TypeVar

S = TypeVar("S")
T = TypeVar("T")


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
