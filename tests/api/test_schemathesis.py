"""Hostile input from the OpenAPI document: schemathesis generates requests for every operation of
docs/openapi.json and sends them over HTTP to the local stack, with a valid token. No response may be a
5xx, and every response must match the schema the document gives for its status.

Examples per operation: SCHEMATHESIS_EXAMPLES (10 in `make test`, 100 in `make reliability`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error
from schemathesis.openapi.checks import JsonSchemaError  # noqa: F401 - the failure this guards against
from schemathesis.specs.openapi.checks import response_schema_conformance

from infra.local.stack import LocalStack, local_stack

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "10"))
schema = schemathesis.openapi.from_path("docs/openapi.json")


@pytest.fixture(scope="module")
def api() -> Iterator[tuple[LocalStack, dict[str, str]]]:
    with local_stack(port=0, cascade=False, prefix="fuzz") as stack:
        yield stack, {"Authorization": f"Bearer {stack.token('fuzzer')}"}


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_every_operation(case: Any, api: tuple[LocalStack, dict[str, str]]) -> None:
    stack, headers = api
    case.call_and_validate(
        base_url=stack.api_url, headers=headers, checks=[not_a_server_error, response_schema_conformance]
    )


def test_stateful_sequences() -> None:
    """Sequences of calls chained by the links schemathesis infers (a created session's id feeding the
    session routes, a message's id feeding the message routes), on a stack of their own: no 5xx,
    responses match the schema."""
    with local_stack(port=0, cascade=False, prefix="fuzz-stateful") as stack:
        run_stateful(stack, {"Authorization": f"Bearer {stack.token('stateful')}"})


def run_stateful(stack: LocalStack, headers: dict[str, str]) -> None:
    machine = schema.as_state_machine()
    chained: list[str] = []

    class Workflow(machine):  # type: ignore[valid-type,misc]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            chained.append(f"{case.method} {case.path}")
            return {"base_url": stack.api_url, "headers": headers}

        def validate_response(self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any) -> None:
            case.validate_response(response, checks=[not_a_server_error, response_schema_conformance])

    Workflow.run(
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=8,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
            phases=[Phase.explicit, Phase.generate],  # the server's state changes between runs: no replays
        )
    )
    followed = {c for c in chained if "{session_id}" in c}
    assert len(followed) >= 5, sorted(set(chained))  # calls were chained into the session routes
