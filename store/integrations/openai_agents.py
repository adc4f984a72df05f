"""OpenAI Agents SDK: a `Session` (the SDK's protocol) kept in this store.

    from agents import Agent, Runner
    from store import SessionStore
    from store.integrations.openai_agents import OpenAIAgentsSession

    store = SessionStore.from_env()
    session = OpenAIAgentsSession("conversation-42", store, owner=user_id)
    result = await Runner.run(agent, "Hello", session=session)

Each item the SDK adds is one message (its `role`, or its `type` for tool calls and outputs, is the
message role; the item itself is the content, returned unchanged). `get_items(limit)` reads exactly the
latest `limit` items (one Query); `pop_item` is the store's atomic `pop_message`; `clear_session`
deletes the session, which the next `add_items` creates again. The protocol is async: with an
`AsyncSessionStore` the calls are awaited, with a `SessionStore` they run in a worker thread.
Install with `pip install agent-session-store[openai-agents]`.
"""

from __future__ import annotations

import contextlib
import time
from datetime import timedelta
from typing import Any

from store.conversation.dialects import usage_of
from store.core.scoped_ids import scoped_id
from store.core.validation import ID_PATTERN, MAX_LIMIT
from store.errors import BranchNotFound, InvalidInput, SessionNotFound
from store.integrations._calls import AnyStore, as_async, ensure_session, or_missing, settled
from store.models import TokenUsage, TurnContext
from store.session_store import APPEND_MAX

ROLE_MAX = 64
BRANCH = "openai_branch"  # the session's metadata key naming its current branch
MAIN = "main"
MODEL_OUTPUTS = frozenset({"assistant", "function_call", "reasoning", "message"})  # what a model call produced
BILLED = "_agent_store_billed"  # on the SDK's run context: the run's usage already written to the session


def _run_usage(wrapper: Any) -> TokenUsage | None:
    """The run's usage so far (the SDK's `RunContextWrapper.usage`), or None outside a run."""
    usage = getattr(wrapper, "usage", None)
    if usage is None:
        return None
    cached = getattr(getattr(usage, "input_tokens_details", None), "cached_tokens", None)
    return usage_of(
        {
            "input_tokens": getattr(usage, "input_tokens", None),
            "output_tokens": getattr(usage, "output_tokens", None),
            "total_tokens": getattr(usage, "total_tokens", None),
            "cache_read_tokens": cached,
        }
    )


def _unbilled(wrapper: Any) -> TokenUsage | None:
    """The run's usage not yet written to the session (None when there is none)."""
    total = _run_usage(wrapper)
    if total is None:
        return None
    billed = getattr(wrapper, BILLED, None)
    delta = total.plus(None, minus=billed)
    return delta if any(v for v in delta.numbers().values()) else None


def _billed(wrapper: Any) -> None:
    """Record that the run's usage so far is written."""
    with contextlib.suppress(AttributeError, TypeError):
        setattr(wrapper, BILLED, _run_usage(wrapper))


def _role(item: dict[str, Any]) -> str:
    """The message role of an item: its role (user, assistant, system, developer) or, for tool calls,
    outputs and reasoning, its type."""
    role = item.get("role") or item.get("type") or "item"
    return str(role)[:ROLE_MAX]


class OpenAIAgentsSession:
    """Conversation history of the OpenAI Agents SDK in this store (implements `agents.memory.Session`)."""

    def __init__(
        self,
        session_id: str,
        store: AnyStore,
        *,
        owner: str = "openai-agents",
        retention: timedelta | int | None = None,
        session_settings: Any = None,
    ) -> None:
        """`session_id` names the store session within `owner`'s namespace (its store id is
        `store.core.scoped_ids.scoped_id(owner, session_id)`: another owner's session of the same id is another
        session, and the HTTP API serves this one to its owner as `session_id`). It is created on the
        first `add_items`, expiring after `retention` without activity if given. `session_settings` is
        the SDK's `SessionSettings` (or a dict of it; `SessionSettings()` when None, and a dict with keys it
        does not know is a `TypeError`, as in the SDK's own sessions); its `limit` applies when `get_items`
        is given none."""
        self.session_id = session_id
        self.store_session_id = scoped_id(owner, session_id)
        self.store = store
        self._store = as_async(store)  # typed calls, on either store
        self.owner = owner
        self.retention = retention
        from agents.memory.session_settings import SessionSettings, coerce_session_settings

        # as the SDK's own sessions: SessionSettings() by default, a dict checked (unknown keys: TypeError)
        self.session_settings = (
            SessionSettings() if session_settings is None else coerce_session_settings(session_settings)
        )

    async def extract_memories(self, **options: Any) -> Any:
        """Distil this session's conversation into its owner's memories now (`SessionStore.extract_memories`:
        `strategies`, `model`); without a call, the stack's extraction function does it as the session grows."""
        return await self._store.extract_memories(self.store_session_id, owner=self.owner, **options)

    def context_filter(self, budget_tokens: int = 2000, *, memories: bool = True) -> Any:
        """A `RunConfig(call_model_input_filter=...)` that hands the model the store's context for the turn
        (`SessionStore.context`) in place of the whole history: the session's running summary, the owner's
        memories and the older messages that matter to the latest user input, added to the instructions; the
        items from the oldest recent message that fits on (this turn's new items always). The session keeps
        every item; nothing the filter adds is stored. For a session read whole (its default `limit`)."""
        from agents.run_config import ModelInputData

        async def edit(data: Any) -> Any:
            given = data.model_data
            items = list(given.input)
            users = [_text_of(i) for i in items if isinstance(i, dict) and i.get("role") == "user"]
            asked = TurnContext.question(users[-1] if users else None)
            found = await or_missing(
                None,
                self._store.context(self.store_session_id, asked, budget_tokens, owner=self.owner, memories=memories),
            )
            if found is None:  # no session yet: nothing before this input
                return given
            first = found.window_start
            kept = items[first - 1 :] if len(items) >= found.last_seq else items
            while kept and isinstance(kept[0], dict) and kept[0].get("type") == "function_call_output":
                kept = kept[1:]  # its call is not in the window
            shown = found.background()
            instructions = "\n\n".join(x for x in (given.instructions, shown) if x) or None
            return ModelInputData(input=kept, instructions=instructions)

        return edit

    async def get_items(self, limit: int | None = None, wrapper: Any = None) -> list[Any]:
        """The latest `limit` items in order, exactly that many as the SDK's `SQLiteSession` returns (all of
        them for None or a negative limit; none for 0): one Query. A window that starts at a tool call's
        output is returned as it is; the SDK drops such orphans itself before the model sees them."""
        if limit is None:
            limit = self.session_settings.limit
        if limit == 0:
            return []
        if limit is None or limit < 0:
            page = await or_missing(None, self._store.list_messages(self.store_session_id, owner=self.owner))
            records = [] if page is None else page.items
        else:
            records = await self._latest(limit)
        return [r.content for r in records]

    async def _latest(self, limit: int) -> list[Any]:
        """The latest `limit` records, oldest first: one Query up to a page, newest-first pages beyond."""
        if limit <= MAX_LIMIT:
            found: list[Any] = await or_missing(
                [], self._store.last_messages(self.store_session_id, limit, owner=self.owner)
            )
            return found
        newest: list[Any] = []
        cursor = None
        while len(newest) < limit:
            page = await or_missing(
                None,
                self._store.list_messages(
                    self.store_session_id,
                    newest_first=True,
                    limit=min(MAX_LIMIT, limit - len(newest)),
                    cursor=cursor,
                    owner=self.owner,
                ),
            )
            if page is None:
                break
            newest += page.items
            cursor = page.next_cursor
            if cursor is None:
                break
        return newest[::-1]

    async def add_items(self, items: list[Any], wrapper: Any = None) -> None:
        """Append `items` in order, each batch of up to 97 atomically; creates the session if needed. A
        cancelled caller's write completes before the cancellation is raised. Under the SDK's Runner
        (`wrapper`: its run context), the tokens the run's model calls used since the last write land on
        the last model output among `items`, so the session's totals are the runs' usage."""
        await settled(self._add(items, wrapper))

    async def _add(self, items: list[Any], wrapper: Any) -> None:
        messages: list[dict[str, Any]] = [{"role": _role(dict(item)), "content": dict(item)} for item in items]
        used = _unbilled(wrapper)
        outputs = [m for m in messages if m["role"] in MODEL_OUTPUTS]
        if used is not None and outputs:
            outputs[-1]["usage"] = used.numbers()
            _billed(wrapper)
        for start in range(0, len(messages), APPEND_MAX):
            batch = messages[start : start + APPEND_MAX]
            try:
                await self._store.append_messages(self.store_session_id, batch, owner=self.owner)
            except SessionNotFound:
                await self._create()
                await self._store.append_messages(self.store_session_id, batch, owner=self.owner)

    async def pop_item(self, wrapper: Any = None) -> Any | None:
        """Remove and return the latest item (None when there is none); two concurrent pops never
        return the same item."""
        pop = or_missing(None, self._store.pop_message(self.store_session_id, owner=self.owner))
        record = await settled(pop)
        return None if record is None else record.content

    async def clear_session(self, wrapper: Any = None) -> None:
        """Remove every item (the store session is deleted with everything it holds)."""
        await settled(self._store.delete_session(self.store_session_id, owner=self.owner))

    async def _create(self) -> None:
        meta = {"framework": "openai-agents"}
        await ensure_session(self._store, self.owner, self.store_session_id, meta, self.retention)

    # ------------------------------------------------------------ branches

    async def _head(self) -> Any:
        """The store session (ValueError, as the SDK's, when there is none yet)."""
        session = await or_missing(None, self._store.get_session(self.store_session_id, owner=self.owner))
        if session is None:
            raise ValueError(f"session {self.session_id!r} has no items yet")
        return session

    async def current_branch(self) -> str:
        """The branch the session's items are read from and added to ("main" until another is made)."""
        session = await or_missing(None, self._store.get_session(self.store_session_id, owner=self.owner))
        return MAIN if session is None else str(session.metadata.get(BRANCH, MAIN))

    async def _user_turns(self, branch: str | None = None) -> list[Any]:
        """The user messages of the current line (or of the branch `branch`), oldest first."""
        records: list[Any] = []
        cursor = None
        while True:
            page = await self._store.list_messages(
                self.store_session_id, roles=["user"], limit=MAX_LIMIT, cursor=cursor, owner=self.owner, branch=branch
            )
            records += page.items
            cursor = page.next_cursor
            if cursor is None:
                return records

    async def get_conversation_turns(self, branch_id: str | None = None) -> list[dict[str, Any]]:
        """The user turns of the current branch (or of `branch_id`): `turn` (from 1), `content` (its first 100
        characters), `full_content`, `timestamp` and `can_branch`, as the SDK's advanced session lists them."""
        current = await self.current_branch()
        other = None if branch_id in (None, current) else branch_id
        turns = []
        for n, record in enumerate(await self._user_turns(other), start=1):
            text = _text_of(record.content)
            turns.append(
                {
                    "turn": n,
                    "content": text[:100] + "..." if len(text) > 100 else text,
                    "full_content": text,
                    "timestamp": record.created_at.isoformat(),
                    "can_branch": True,
                }
            )
        return turns

    async def create_branch_from_turn(self, turn_number: int, branch_name: str | None = None) -> str:
        """Go on, as the new branch `branch_name`, from just before the user's `turn_number`-th message (the
        SDK's `create_branch_from_turn`): the session's line so far is kept under the current branch's name.
        Returns the new branch's name. ValueError for a turn the session does not have, or a name that is
        blank, not an id (letters, digits, `._:-`), or the name of a branch the session has."""
        if branch_name is not None and not branch_name.strip():
            raise ValueError("Branch name cannot be empty")
        session = await self._head()
        current = str(session.metadata.get(BRANCH, MAIN))
        turns = await self._user_turns()
        if not 1 <= turn_number <= len(turns):
            raise ValueError(f"Turn {turn_number} does not contain a user message in branch '{current}'")
        name = branch_name if branch_name is not None else f"branch_from_turn_{turn_number}_{int(time.time())}"
        if not ID_PATTERN.fullmatch(name):
            raise ValueError(f"a branch name is letters, digits and ._:- (at most 128): {name!r}")
        taken = {current, *(b.id for b in await self._store.list_branches(self.store_session_id, owner=self.owner))}
        if name in taken:
            raise ValueError(f"Branch ID '{name}' has already been used. Choose a new branch ID.")
        await self._store.rewind_session(
            self.store_session_id,
            turns[turn_number - 1].seq - 1,
            branch=current,
            metadata={**session.metadata, BRANCH: name},
            owner=self.owner,
        )
        return name

    async def switch_to_branch(self, branch_id: str) -> None:
        """Make `branch_id` the current branch (the line left is kept under its name); ValueError when the
        session has no such branch."""
        session = await self._head()
        current = str(session.metadata.get(BRANCH, MAIN))
        if branch_id == current:
            return
        try:
            await self._store.restore_branch(
                self.store_session_id,
                branch_id,
                keep_as=current,
                metadata={**session.metadata, BRANCH: branch_id},
                owner=self.owner,
            )
        except (BranchNotFound, InvalidInput):
            raise ValueError(f"Branch '{branch_id}' does not exist") from None

    async def list_branches(self) -> list[dict[str, Any]]:
        """Every branch, the current one first: `branch_id`, `message_count`, `user_turns`, `is_current`,
        `created_at`."""
        session = await or_missing(None, self._store.get_session(self.store_session_id, owner=self.owner))
        if session is None:
            return []
        current = str(session.metadata.get(BRANCH, MAIN))
        out = [
            {
                "branch_id": current,
                "message_count": session.last_seq,
                "user_turns": len(await self._user_turns()),
                "is_current": True,
                "created_at": session.created_at.isoformat(),
            }
        ]
        for branch in await self._store.list_branches(self.store_session_id, owner=self.owner):
            out.append(
                {
                    "branch_id": branch.id,
                    "message_count": branch.last_seq,
                    "user_turns": len(await self._user_turns(branch.id)),
                    "is_current": False,
                    "created_at": branch.created_at.isoformat(),
                }
            )
        return out

    async def delete_branch(self, branch_id: str, force: bool = False) -> None:
        """Delete a branch and its items. ValueError for "main", for the current branch unless `force` (then
        the session switches to "main" first), and for a branch the session does not have."""
        if not branch_id or not branch_id.strip():
            raise ValueError("Branch ID cannot be empty")
        if branch_id == MAIN:
            raise ValueError("Cannot delete the 'main' branch")
        current = await self.current_branch()
        if branch_id == current:
            if not force:
                raise ValueError(f"Cannot delete current branch '{branch_id}'. Use force=True or switch branches first")
            await self.switch_to_branch(MAIN)
        names = {b.id for b in await self._store.list_branches(self.store_session_id, owner=self.owner)}
        if branch_id not in names:
            raise ValueError(f"Branch '{branch_id}' does not exist")
        await self._store.delete_branch(self.store_session_id, branch_id, owner=self.owner)


def _text_of(content: Any) -> str:
    """The text of a user item (a string, or the text parts of its content list)."""
    if isinstance(content, dict):
        content = content.get("content", "")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("text"))
    return ""
