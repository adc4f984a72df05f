"""docs/integrations.md states what a typical turn costs through each adapter: measured here, the same way
`python -m bench.turn_costs` prints it."""

from __future__ import annotations

import pytest

from bench import turn_costs

# A write's units round its item's size up to a kilobyte (a transaction's count twice), and a few items
# hold times whose JSON length varies by some bytes from run to run: a unit or two either way is noise.
UNIT_NOISE = 2


@pytest.mark.slow
def test_the_documented_turn_costs_are_what_a_turn_costs(moto_endpoint: str) -> None:
    measured = turn_costs.measure(moto_endpoint)
    documented = turn_costs.documented_table().splitlines()
    assert documented[:2] == turn_costs.HEADER.splitlines()
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in documented[2:]]
    assert [(r[0], r[1]) for r in rows] == [(c.adapter, c.mode) for c in measured]
    for row, cost in zip(rows, measured, strict=True):
        assert (int(row[2]), row[3]) == (cost.requests, cost.calls), cost
        assert abs(float(row[4]) - cost.wcu) <= UNIT_NOISE and abs(float(row[5]) - cost.rcu) <= UNIT_NOISE, cost
    by_mode = {(c.adapter, c.mode): c for c in measured}
    # the batching modes write a turn in one transaction, cheaper than one per message or event
    for (adapter, plain), turn in (
        (("Strands", 'durability="message"'), "per turn (default)"),
        (("ADK", 'durability="event"'), "per turn (default)"),
    ):
        batched = by_mode[adapter, turn]
        assert "TransactWriteItems" in batched.calls.split(" + ")  # one, not "2 TransactWriteItems"
        assert batched.wcu < by_mode[adapter, plain].wcu
