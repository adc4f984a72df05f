"""A session's branches (`rewind_session`, `restore_branch`): one item each in the session's partition,
`BR#<branch>`, naming the messages-table partition that holds the branch's transcript and what goes with
it (its last sequence number, usage totals, compaction marker, preview, and the state it was kept with).
A branch's partition is never written while it is a branch; it is the session's again after a restore."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from store.aws import keys
from store.aws.attrs import Item, get_int, get_n, get_s, n, need_s, s
from store.aws.calls import Plan
from store.aws.items import BODY, CODEC, USAGE_PREFIX
from store.aws.plans.base import Context, batch_get, find_head, live_head, partition_prefix
from store.aws.plans.payloads import REF
from store.core.timeutil import iso, parse_iso
from store.errors import BranchNotFound
from store.models import Branch, TokenUsage

BRANCH_PREFIX = "BR#"


def branch_sk(name: str) -> str:
    return f"{BRANCH_PREFIX}{name}"


@dataclass(frozen=True)
class BranchItem:
    """A branch as stored."""

    name: str
    part: str
    from_seq: int
    last_seq: int
    created_at: datetime
    usage: TokenUsage
    compaction_seq: int | None
    preview: str | None  # the session's preview while the branch was its transcript
    own_preview: str | None  # the start of the branch's first user message after `from_seq`
    deleting: bool
    item: Item

    @staticmethod
    def of(item: Item) -> BranchItem:
        usage = {f: v for f in TokenUsage.fields() if (v := get_n(item, USAGE_PREFIX + f)) is not None}
        cseq = get_n(item, "compaction_seq")
        return BranchItem(
            name=need_s(item, "name"),
            part=need_s(item, "part"),
            from_seq=get_int(item, "from_seq"),
            last_seq=get_int(item, "last_seq"),
            created_at=parse_iso(need_s(item, "created_at")),
            usage=TokenUsage.model_validate(usage),
            compaction_seq=int(cseq) if cseq is not None else None,
            preview=get_s(item, "preview"),
            own_preview=get_s(item, "own_preview"),
            deleting="deleting" in item,
            item=item,
        )

    def model(self, session_id: str) -> Branch:
        return Branch(
            id=self.name,
            session_id=session_id,
            from_seq=self.from_seq,
            last_seq=self.last_seq,
            created_at=self.created_at,
            usage=self.usage,
            preview=self.own_preview,
        )

    def state_item(self) -> Item | None:
        """The state the branch was kept with, as the session's STATE item would hold it (None: none)."""
        if "state_version" not in self.item:
            return None
        return {
            "version": self.item["state_version"],
            "seq": self.item["state_seq"],
            "saved_at": self.item["state_saved_at"],
            **{a: self.item[a] for a in (CODEC, BODY, REF) if a in self.item},
        }


def branch_item(
    session_id: str,
    name: str,
    *,
    part: str,
    from_seq: int,
    last_seq: int,
    created_at: datetime,
    usage: TokenUsage,
    compaction_seq: int | None,
    preview: str | None,
    own_preview: str | None,
    state: Item | None,
) -> Item:
    """The item keeping a line of the transcript as a branch (`state`: a STATE item's attributes, or None)."""
    item: Item = {
        **keys.session_key(session_id, branch_sk(name)),
        "name": s(name),
        "part": s(part),
        "from_seq": n(from_seq),
        "last_seq": n(last_seq),
        "created_at": s(iso(created_at)),
        **{USAGE_PREFIX + f: n(v) for f, v in usage.numbers().items()},
    }
    if compaction_seq is not None:
        item["compaction_seq"] = n(compaction_seq)
    if preview is not None:
        item["preview"] = s(preview)
    if own_preview is not None:
        item["own_preview"] = s(own_preview)
    if state is not None:
        item["state_version"] = state["version"]
        item["state_seq"] = state["seq"]
        item["state_saved_at"] = state.get("saved_at") or s(iso(created_at))
        item.update({a: state[a] for a in (CODEC, BODY, REF) if a in state})
    return item


def read_branch(ctx: Context, session_id: str, owner: str | None, name: str) -> Plan[BranchItem]:
    """The session's live branch `name` (1 BatchGetItem with the head); BranchNotFound when it has none,
    SessionNotFound when the session is not live for `owner`."""
    key = keys.session_key(session_id, branch_sk(name))
    items = yield from batch_get(ctx, ctx.sessions_table, [keys.head_key(session_id), key])
    yield from live_head(ctx, session_id, find_head(items, session_id), owner)
    found = next((i for i in items if i[keys.SK]["S"] == branch_sk(name)), None)
    if found is None or "deleting" in found:
        raise BranchNotFound(session_id, name)
    return BranchItem.of(found)


def all_branches(ctx: Context, session_id: str) -> Plan[list[BranchItem]]:
    """Every branch item of the session, those being deleted too (1 Query per 1 MB)."""
    items = yield from partition_prefix(ctx, session_id, BRANCH_PREFIX)
    return [BranchItem.of(i) for i in items]
