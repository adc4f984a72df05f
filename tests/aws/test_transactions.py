"""Transaction actions are named, and a cancelled transaction's outcome is read by those names: adding an
action never changes what another one's outcome means."""

from __future__ import annotations

from typing import Any

import pytest

from store.aws.calls import AwsError
from store.aws.plans.base import HEAD, Actions, cancelled, condition_failed, transact
from store.errors import InvalidInput, PayloadTooLarge


def _put(table: str) -> dict[str, Any]:
    return {"Put": {"TableName": table, "Item": {"pk": {"S": table}}}}


def _cancellation(*reasons: dict[str, Any]) -> AwsError:
    return AwsError("TransactionCanceledException", "cancelled", response={"CancellationReasons": list(reasons)})


def test_actions_keep_their_order_and_refuse_a_name_twice() -> None:
    actions = Actions(head=_put("a"), idempotency=_put("b")).add_each("message", [_put("c"), _put("d")])
    assert actions.names == ["head", "idempotency", "message[0]", "message[1]"]
    assert [a["Put"]["TableName"] for a in transact(actions).params["TransactItems"]] == ["a", "b", "c", "d"]
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
