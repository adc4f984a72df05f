"""Named transaction actions, and how a cancelled write's outcome is read: by name, into the exception
a plan branches on.

A write adds each action under a name (`Actions(head=..., idempotency=...)`); when DynamoDB cancels it,
its reasons are read back by those names (`Failed`). A plan that expects one action to fail lists that
outcome's exception (`expected=(KeyClaimed,)` to `write_session`) and catches it by type: each `Outcome`
names the action whose failed condition it stands for."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from store.aws.attrs import Item
from store.aws.calls import AwsError, Call
from store.errors import Conflict, InvalidInput, PayloadTooLarge

HEAD = "head"  # the name of a session write's conditional action on the session head
IDEMPOTENCY = "idempotency"  # an append's claim of its idempotency key


class Actions:
    """The actions of one write, in order, each under a name. A cancelled transaction's reasons are
    read back by these names (`Failed.failed("index")`), so adding an action never changes what
    another one's outcome means.

        Actions(head=update, idempotency=claim).add_each("message", puts)
    """

    def __init__(self, **named: dict[str, Any]) -> None:
        self._names: list[str] = []
        self._actions: list[dict[str, Any]] = []
        for name, action in named.items():
            self.add(name, action)

    def add(self, name: str, action: dict[str, Any]) -> Actions:
        """Add `action` under `name` (each name once); returns self, for chaining."""
        if name in self._names:
            raise ValueError(f"a transaction action named {name!r} was already added")
        self._names.append(name)
        self._actions.append(action)
        return self

    def add_each(self, name: str, actions: Sequence[dict[str, Any]]) -> Actions:
        """Add several actions of one kind, named `name[0]`, `name[1]`, ..."""
        for i, action in enumerate(actions):
            self.add(f"{name}[{i}]", action)
        return self

    @property
    def names(self) -> list[str]:
        return list(self._names)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The actions as TransactWriteItems takes them, in the order they were added."""
        return list(self._actions)

    def __len__(self) -> int:
        return len(self._actions)


def transact(actions: Actions, token: str) -> Call:
    """A TransactWriteItems call. The request `token` (a new id of the plan's context: one per call) makes
    botocore's own retries of this exact call idempotent (a lost response is not applied twice)."""
    return Call("transact_write_items", {"TransactItems": actions.requests, "ClientRequestToken": token})


CONTENTION = frozenset(
    {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded"}
)
CONDITION_FAILED = "ConditionalCheckFailed"
# a single request (not a transaction) meeting a transaction in progress on its item; botocore does not
# retry it (throttling it does retry, with its own backoff: what is left of that is StoreUnavailable)
CONTENDED_ERRORS = frozenset({"TransactionConflictException"})


def contended(err: AwsError) -> bool:
    """True when a single request failed because a transaction was in progress on its item: worth retrying
    as is, after a backoff."""
    return err.code in CONTENDED_ERRORS


@dataclass(frozen=True)
class Failed:
    """How each named action of a cancelled write fared (its reason's code) and the old item a failed
    condition returned. A name the write did not hold has neither failed nor returned anything."""

    codes: dict[str, str]
    items: dict[str, Item]

    def failed(self, name: str) -> bool:
        """True when the action named `name` failed its condition."""
        return self.codes.get(name) == CONDITION_FAILED

    def failed_of(self, family: str) -> list[str]:
        """The actions of `family` (added with `add_each(family, ...)`) that failed their condition."""
        return [name for name in self.codes if name.startswith(family + "[") and self.failed(name)]

    def conflicted(self) -> bool:
        """True when another request got in the way (contention or throttling): worth retrying as is."""
        return any(c in CONTENTION for c in self.codes.values())

    def old(self, name: str) -> Item | None:
        """The item as it was when the action named `name` failed its condition (if DynamoDB returned it)."""
        return self.items.get(name)


def condition_failed(name: str, err: AwsError) -> Failed:
    """The outcome of a single conditional write (not a transaction) named `name` that failed."""
    item = err.response.get("Item")
    return Failed({name: CONDITION_FAILED}, {name: dict(item)} if item else {})


def cancelled(err: AwsError, actions: Actions) -> Failed:
    """Read a TransactionCanceledException's reasons, one per action of `actions`, by name; re-raise
    anything else. Reasons that no retry can mend are raised at once: DynamoDB refusing a value
    (InvalidInput), or a session's messages outgrowing an item collection (PayloadTooLarge)."""
    if err.code != "TransactionCanceledException":
        raise err
    reasons = err.cancellation_reasons()
    for reason in reasons:
        if reason.get("Code") == "ValidationError":
            raise InvalidInput(f"DynamoDB refused the write: {reason.get('Message') or 'a value is invalid'}")
        if reason.get("Code") == "ItemCollectionSizeLimitExceeded":
            raise PayloadTooLarge("the session's transcript has reached DynamoDB's item collection limit")
    named = list(zip(actions.names, reasons, strict=False))
    return Failed(
        codes={name: str(r.get("Code") or "None") for name, r in named},
        items={name: dict(r["Item"]) for name, r in named if r.get("Item")},
    )


class Cancelled(Conflict):
    """A write was cancelled for a reason its plan does not handle: the caller sees a Conflict that says
    which actions failed. Outcomes a plan does handle are the `Outcome` subclasses below."""

    def __init__(self, failed: Failed, what: str = "write", message: str | None = None) -> None:
        reasons = ", ".join(f"{name}: {code}" for name, code in failed.codes.items())
        super().__init__(message or f"{what}: transaction cancelled ({reasons}); nothing was written")
        self.failed = failed


class Outcome(Cancelled):
    """A cancellation a plan expects and handles: the condition of the action named `action` failed (with
    `family`, of any action added as `action[i]`)."""

    action: ClassVar[str]
    family: ClassVar[bool] = False

    @classmethod
    def happened(cls, failed: Failed) -> bool:
        """True when `failed` holds this outcome."""
        return bool(failed.failed_of(cls.action)) if cls.family else failed.failed(cls.action)

    @property
    def old(self) -> Item | None:
        """The action's item as it was when its condition failed (if DynamoDB returned it)."""
        name = self.failed.failed_of(self.action)[0] if self.family else self.action
        return self.failed.old(name)


class KeyClaimed(Outcome):
    """An earlier append claimed this idempotency key: its records are the result."""

    action = IDEMPOTENCY


class MessageChanged(Outcome):
    """Another write changed the message first (a concurrent usage update): read it again."""

    action = "message"


class StateSeen(Outcome):
    """The saved state has seen the message a pop would remove."""

    action = "state"


class UploadSettled(Outcome):
    """The upload's intent is gone: the commit landed earlier, or the upload expired."""

    action = "intent"


class IndexMoved(Outcome):
    """The artifact's index moved (another version committed, or the name deleted): build again."""

    action = "index"


class VersionExists(Outcome):
    """A version item exists beyond what the index says: number the next version past it."""

    action = "version"


class BatchNumbered(Outcome):
    """Another batch of a trace run (`run[i]`) was numbered first: take the next number."""

    action = "run"
    family = True


def cancellation(
    failed: Failed, what: str, expected: tuple[type[Outcome], ...] = (), message: str | None = None
) -> Cancelled:
    """What to raise for a cancelled write: the first of the `expected` outcomes whose action failed, else
    `Cancelled`."""
    for outcome in expected:
        if outcome.happened(failed):
            return outcome(failed, what, message)
    return Cancelled(failed, what, message)
