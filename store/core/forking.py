"""What a fork is made of: the session record a fork of a source at a message is (one rule for every
backend; the backends derive the rest from what they copied)."""

from __future__ import annotations

import copy
import enum
from datetime import datetime
from typing import Any, Final

from store.core.rules import FORKED_FROM
from store.core.timeutil import expiry
from store.models import Session


class Unset(enum.Enum):
    """The type of UNSET: "leave this field as it is" in updates (None clears it)."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET


def forked_session(
    source: Session,
    new_session_id: str,
    last: int,
    now: datetime,
    *,
    title: str | Unset | None = UNSET,
    metadata: dict[str, Any] | Unset = UNSET,
    **fields: Any,
) -> Session:
    """The fork `new_session_id` of `source` at message `last`, made at `now`: the source's owner, model and
    retention (its expiry counted from now), its title and metadata unless `title`/`metadata` are given
    (copies, never shared), the metadata recording `forked_from` (source id and seq); `fields` are what
    the backend derives from what it copied (usage, state_version, compaction_seq, preview, copying)."""
    kept = copy.deepcopy(source.metadata if metadata is UNSET else metadata)
    kept[FORKED_FROM] = {"session_id": source.id, "seq": last}
    return Session(
        id=new_session_id,
        owner=source.owner,
        title=source.title if title is UNSET else title,
        model=source.model,
        metadata=kept,
        created_at=now,
        updated_at=now,
        last_seq=last,
        retention=source.retention,
        expires_at=expiry(now, source.retention) if source.retention is not None else None,
        **fields,
    )
