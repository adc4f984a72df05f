"""Transaction actions are named, and a cancelled transaction's outcome is read by those names: adding an
action never changes what another one's outcome means."""

from __future__ import annotations

from typing import Any

import pytest

from store.aws.calls import AwsError
from store.aws.plans.transactions import (
    HEAD,
    Actions,
    BatchNumbered,
    Cancelled,
    IndexMoved,
    KeyClaimed,
    UploadSettled,
    VersionExists,
    cancellation,
    cancelled,
    condition_failed,
    transact,
)
from store.errors import Conflict, InvalidInput, PayloadTooLarge


def _put(table: str) -> dict[str, Any]:
    return {"Put": {"TableName": table, "Item": {"pk": {"S": table}}}}


def _cancellation(*reasons: dict[str, Any]) -> AwsError:
    return AwsError("TransactionCanceledException", "cancelled", response={"CancellationReasons": list(reasons)})


def test_actions_keep_their_order_and_refuse_a_name_twice() -> None:
    actions = Actions(head=_put("a"), idempotency=_put("b")).add_each("message", [_put("c"), _put("d")])
    assert actions.names == ["head", "idempotency", "message[0]", "message[1]"]
    assert [a["Put"]["TableName"] for a in transact(actions, "token").params["TransactItems"]] == ["a", "b", "c", "d"]
    with pytest.raises(ValueError, match="idempotency"):
        actions.add("idempotency", _put("e"))


def test_an_outcome_is_read_by_name_wherever_the_action_stands() -> None:
    claimed = {"Code": "ConditionalCheckFailed", "Item": {"first_seq": {"N": "4"}}}
    for before in ([], [_put("x")]):  # inserting an action in front changes no outcome
        actions = Actions(head=_put("h"))
        for i, action in enumerate(before):
            actions.add(f"extra{i}", action)
        actions.add("idempotency", _put("i")).add("message", _put("m"))
        reasons: list[dict[str, Any]] = [{"Code": "None"}] * (1 + len(before)) + [claimed, {"Code": "None"}]
        failed = cancelled(_cancellation(*reasons), actions)
        assert failed.failed("idempotency") and not failed.failed(HEAD) and not failed.failed("message")
        assert failed.old("idempotency") == {"first_seq": {"N": "4"}}
        assert failed.old(HEAD) is None
        assert not failed.failed("absent") and not failed.conflicted()


def test_contention_and_hopeless_reasons() -> None:
    actions = Actions(head=_put("h"), message=_put("m"))
    assert cancelled(_cancellation({"Code": "None"}, {"Code": "TransactionConflict"}), actions).conflicted()
    with pytest.raises(InvalidInput):
        cancelled(_cancellation({"Code": "ValidationError", "Message": "bad"}, {"Code": "None"}), actions)
    with pytest.raises(PayloadTooLarge):
        cancelled(_cancellation({"Code": "None"}, {"Code": "ItemCollectionSizeLimitExceeded"}), actions)
    other = AwsError("ThrottlingException", "slow down")
    with pytest.raises(AwsError):
        cancelled(other, actions)


def test_a_single_conditional_write_fails_under_its_name() -> None:
    err = AwsError("ConditionalCheckFailedException", "no", response={"Item": {"pk": {"S": "h"}}})
    failed = condition_failed(HEAD, err)
    assert failed.failed(HEAD) and failed.old(HEAD) == {"pk": {"S": "h"}}


def test_a_cancellation_becomes_the_outcome_its_plan_expects_by_name() -> None:
    failed_index = {"Code": "ConditionalCheckFailed", "Item": {"latest": {"N": "3"}}}
    failed = {"Code": "ConditionalCheckFailed"}
    actions = Actions(head=_put("h"), intent=_put("t"), index=_put("x"), version=_put("v"))
    commit = (UploadSettled, IndexMoved, VersionExists)

    both = cancelled(_cancellation({"Code": "None"}, {"Code": "None"}, failed_index, failed), actions)
    raised = cancellation(both, "put_artifact", commit)
    assert type(raised) is IndexMoved  # the first expected outcome whose action failed
    assert raised.old == {"latest": {"N": "3"}}
    only_version = cancelled(_cancellation({"Code": "None"}, {"Code": "None"}, {"Code": "None"}, failed), actions)
    assert type(cancellation(only_version, "put_artifact", commit)) is VersionExists
    gone = cancelled(_cancellation({"Code": "None"}, failed, failed_index, {"Code": "None"}), actions)
    assert type(cancellation(gone, "put_artifact", commit)) is UploadSettled

    # an outcome the plan did not list is a plain Cancelled: a Conflict that names the failed actions
    other = cancellation(both, "append_trace_events", (BatchNumbered, KeyClaimed))
    assert type(other) is Cancelled and isinstance(other, Conflict)
    assert "index: ConditionalCheckFailed" in str(other)
