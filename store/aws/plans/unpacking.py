"""Before a write changes one message that shares an item with others (a pack, `store.aws.packs`), the pack is
replaced by the items of its messages: they read exactly as the pack did, so readers never notice, and the
write then changes one message's item as it would any other.

The replacement is one transaction: the head checked (live for the caller, its transcript still in that
partition: a session being deleted gets no items its purge could miss), the pack's key overwritten by its last
message while it is still that pack, and the other messages put where nothing is. Of two callers unpacking at
once one commits; the other finds the messages' own items. A Query running meanwhile may see a message both in
the pack and in its own item: `Span.messages` reads each sequence number once either way."""

from __future__ import annotations

from collections.abc import Callable

from store.aws import keys
from store.aws.attrs import Expr, Item, action
from store.aws.calls import Plan
from store.aws.packs import FIRST, expand, is_pack, reencoded
from store.aws.plans.base import Context, guard, in_part, settle
from store.aws.plans.partitions import put_new
from store.aws.plans.transactions import HEAD, Actions
from store.errors import Conflict


def unpack(ctx: Context, session_id: str, owner: str | None, part_attr: str | None, pack: Item) -> Plan[None]:
    """Replace `pack` (as read from the session's partition while its head's `part` is `part_attr`) by
    its messages' own items. Returns once the pack is gone, by this call or another's; a Conflict (retryable)
    when the session's head no longer allows it (the caller's next read of the head tells why)."""
    if not is_pack(pack):
        return
    messages = [reencoded(m) for m in expand(pack)]
    now = ctx.now()
    hexpr = Expr()
    check = " AND ".join([guard(hexpr, now, owner), in_part(hexpr, part_attr)])
    check_head = action("ConditionCheck", ctx.sessions_table, keys.head_key(session_id), hexpr, condition=check)
    pexpr = Expr()
    first, pack_id = pexpr.value(pack[FIRST]), pexpr.value(pack[keys.MID])
    same = f"{pexpr.name(FIRST)} = {first} AND {pexpr.name(keys.MID)} = {pack_id}"
    over = action("Put", ctx.messages_table, messages[-1], pexpr, condition=same)
    actions = Actions(head=check_head, pack=over).add_each("message", [put_new(ctx, m) for m in messages[:-1]])
    refused = yield from settle(ctx, actions, "unpacking messages")
    if refused is None or not refused.failed.failed(HEAD):
        return  # done, or another caller did it first (the pack is no longer there)
    raise Conflict(f"session {session_id!r} changed while a message of it was being changed; retry") from refused.cause


def own_item(
    ctx: Context, session_id: str, owner: str | None, part_attr: str | None, locate: Callable[[], Plan[Item | None]]
) -> Plan[Item | None]:
    """The item `locate` finds (None when it finds none), in an item of its own: a pack it finds is unpacked and
    looked for again; a Conflict (retryable) when it is still a pack then."""
    item = yield from locate()
    if not is_pack(item):
        return item
    yield from unpack(ctx, session_id, owner, part_attr, item or {})
    item = yield from locate()
    if is_pack(item):
        raise Conflict(f"session {session_id!r}: a message moved while it was being changed; retry")
    return item
