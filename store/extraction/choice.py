"""An owner's choice about memory extraction, kept as the owner's records of kind CHOICE_KIND (the store's
public `save_owner_records`, which `forget_owner` leaves: an opt-out stays one)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from store.core import validation as v
from store.errors import InvalidInput
from store.extraction.strategies import BUILT_IN

CHOICE_KIND = "extraction-choice"  # the owner records that hold the choice


class ExtractionChoice(BaseModel):
    """An owner's choice about memory extraction: whether it runs for them (`enabled`), and the built-in
    strategies it runs when a call or a trigger names none (`strategies`; None: the deployment's); when it was
    last set (None: never, the defaults)."""

    enabled: bool = True
    strategies: list[str] | None = None
    updated_at: datetime | None = None


def new_choice(enabled: Any, strategies: Any, now: datetime) -> ExtractionChoice:
    """The choice a `set_extraction` call makes (InvalidInput for anything but a flag and None or built-in
    strategy names, each once)."""
    if strategies is not None:
        if isinstance(strategies, str) or not isinstance(strategies, (list, tuple)) or not strategies:
            raise InvalidInput("strategies must be a non-empty list of built-in strategy names, or None")
        unknown = [s for s in strategies if not isinstance(s, str) or s not in BUILT_IN]
        if unknown or len(set(strategies)) != len(strategies):
            raise InvalidInput(f"strategies are built-in names, each once: {', '.join(BUILT_IN)}")
    named = None if strategies is None else list(strategies)
    return ExtractionChoice(enabled=v.flag(enabled, "enabled"), strategies=named, updated_at=now)


def choice_records(choice: ExtractionChoice) -> list[dict[str, Any]]:
    """The owner records that keep `choice`."""
    return [choice.model_dump(mode="json")]


def choice_of(records: list[Any]) -> ExtractionChoice:
    """The choice the owner records keep (the defaults when there is none, or it does not read as one)."""
    try:
        return ExtractionChoice.model_validate(records[0]) if records else ExtractionChoice()
    except ValidationError:
        return ExtractionChoice()
