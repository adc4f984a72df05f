"""The public operations of recall, composed of the store's operations: a session's messages indexed
(`index_messages`, by the stack's cascade or on demand; the owner's switch `set_message_index`), where the
index stands, and the context for a model's next turn (`context`). A part of `SessionStore` (and of
`AsyncSessionStore`, whose flowed methods drive the same flows awaited)."""

from __future__ import annotations

from store.core import memories as m
from store.core import validation as v
from store.errors import InvalidInput
from store.extraction.steps import Flow
from store.front.base import Domain
from store.models import MessageIndexState, TurnContext
from store.recall.driving import flowed


class Recall(Domain):
    """A session's messages indexed (`index_messages`, the owner's switch), and the context for a turn."""

    @flowed
    def get_message_index_state(self, session_id: str, *, owner: str | None = None) -> Flow[MessageIndexState]:
        """Where the session's message index stands (SessionNotFound when the session is not live, or not
        `owner`'s). Two reads."""
        from store.recall.indexing import index_state

        return index_state(v.ident(session_id, "session_id"), v.optional_owner(owner))

    @flowed
    def index_messages(self, session_id: str, *, owner: str | None = None) -> Flow[MessageIndexState]:
        """Index the session's messages its index does not hold yet (at most 2,000 a call: call again, or let
        the stack's stream function go on), unless its owner switched the index off: where the index then
        stands. Idempotent. A transcript changed under the index (a popped message, a rewind) is indexed again
        from its start."""
        from store.recall.indexing import index_session

        return index_session(v.ident(session_id, "session_id"), v.optional_owner(owner))

    @flowed
    def set_message_index(self, owner: str, *, enabled: bool) -> Flow[None]:
        """Switch the owner's message index on or off (on by default). Off: no new message of theirs is indexed
        (what is indexed stays until its session is deleted or the owner forgotten)."""
        from store.calls import CALLS
        from store.core.steps import ask
        from store.recall.indexing import CHOICE_KIND

        return ask(CALLS.save_owner_records, v.owner(owner), CHOICE_KIND, [{"enabled": v.flag(enabled, "enabled")}])

    @flowed
    def message_index_enabled(self, owner: str) -> Flow[bool]:
        """Whether the owner's messages are indexed (`set_message_index`)."""
        from store.recall.indexing import enabled_choice

        return enabled_choice(v.owner(owner))

    @flowed
    def context(
        self,
        session_id: str,
        query: str | None = None,
        budget_tokens: int = 2000,
        *,
        owner: str | None = None,
        namespace_prefix: tuple[str, ...] | list[str] = (),
        memories: bool = True,
    ) -> Flow[TurnContext]:
        """What a model should see for its next turn in the session, never over `budget_tokens` (64 to 200,000,
        counted as `store.recall.tokens` says): the session's running summary (the summary strategy's, when
        there is one), the recent messages that fit, and the older messages of the session and the owner's
        memories under `namespace_prefix` (none with `memories=False`) that matter to `query` (by default the
        last user message), each once, each with its provenance and token count. `as_messages()` and
        `as_text()` render it. At most nine requests on DynamoDB whatever the session's length (docs/data-model.md);
        SessionNotFound when the session is not live (or not `owner`'s)."""
        from store.recall.context import MAX_BUDGET, MIN_BUDGET, context_flow

        if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int):
            raise InvalidInput("budget_tokens must be a whole number of tokens")
        if not MIN_BUDGET <= budget_tokens <= MAX_BUDGET:
            raise InvalidInput(f"budget_tokens must be from {MIN_BUDGET} to {MAX_BUDGET:,}")
        return context_flow(
            v.ident(session_id, "session_id"),
            m.query(query),
            budget_tokens,
            v.optional_owner(owner),
            m.namespace(namespace_prefix, "namespace_prefix", allow_empty=True),
            v.flag(memories, "memories"),
        )
