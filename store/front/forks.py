"""The public operations that branch a conversation: fork a session, rewind one, and the branches a rewind
keeps (list, restore, delete).

A part of `SessionStore` (and, wrapped, of `AsyncSessionStore`): each operation checks and normalises
its arguments, then hands them to the backend."""

from __future__ import annotations

from typing import Any

from store.core import validation as v
from store.core.rules import MAX_BRANCHES
from store.front.base import Domain
from store.models import Branches, Session
from store.requests import UNSET, DeleteBranch, ForkSession, ListBranches, RestoreBranch, RewindSession, Unset


class Forks(Domain):
    """Fork, rewind, and a session's branches."""

    def fork_session(
        self,
        session_id: str,
        *,
        at_seq: int | None = None,
        new_session_id: str | None = None,
        title: str | None = None,
        owner: str | None = None,
        metadata: dict[str, Any] | Unset = UNSET,
        state: Any = UNSET,
    ) -> Session:
        """A new session of the source's owner (`new_session_id`, else a fresh id; SessionExists if taken)
        whose transcript is the source's messages 1..`at_seq` (all when None) with the same ids, contents,
        usage and compaction markers, whose state is the source's (or `state`, when given) and which holds
        the source's records and artifacts. Its title is `title` or the source's; its metadata is
        `metadata` or the source's, with `forked_from` ({"session_id", "seq"}) added. The source is not
        changed, and from then on each side lives on its own: appends, deletes and expiry of either never
        change the other. The call is bounded however long the source is: a long transcript is copied
        after it returns (`Session.copying`), and reads and writes of the fork are correct meanwhile.
        `at_seq` past the source's last message is InvalidInput."""
        return self._backend.execute(
            ForkSession(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                new_session_id=v.new_id() if new_session_id is None else v.ident(new_session_id, "new_session_id"),
                at_seq=v.seq(at_seq, "at_seq"),
                title=UNSET if title is None else v.text(title, "title", v.MAX_TITLE),
                metadata=UNSET if metadata is UNSET else v.metadata(metadata),
                state=UNSET if state is UNSET else v.json_value(state, "state"),
            )
        )

    def rewind_session(
        self,
        session_id: str,
        to_seq: int,
        *,
        branch: str | None = None,
        owner: str | None = None,
        metadata: dict[str, Any] | Unset = UNSET,
    ) -> Session:
        """The session continues from message `to_seq`: its transcript is messages 1..`to_seq` and the next
        append is numbered `to_seq` + 1. Nothing is destroyed: the transcript as it was (with the state it
        had) is kept as the branch `branch` (a fresh id when None; Conflict if the session has one of that
        name), which `list_branches` shows and `restore_branch` brings back. The state becomes the state as
        of `to_seq` when the store knows it (the current one, if saved at or before `to_seq`; else the
        latest of the states kept by `save_full` at or before `to_seq`: `Settings.state_history`), and is
        left as it is otherwise. Usage totals and the compaction marker follow the transcript. `metadata`,
        when given, replaces the session's in the same write (an application's label for the line it goes
        on with). Rewinding to the last message changes nothing and keeps no branch. `to_seq` past the
        last message is InvalidInput."""
        return self._backend.execute(
            RewindSession(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                to_seq=v.seq(to_seq, "to_seq", allow_none=False) or 0,
                branch=v.new_id() if branch is None else v.ident(branch, "branch"),
                metadata=UNSET if metadata is UNSET else v.metadata(metadata),
            )
        )

    def list_branches(
        self, session_id: str, *, limit: int = MAX_BRANCHES, cursor: str | None = None, owner: str | None = None
    ) -> Branches:
        """The branches the session keeps, oldest first (read one with `list_messages(..., branch=...)`): a
        list of at most `limit`, whose `next_cursor` continues it (None on the last page). A session keeps at
        most `MAX_BRANCHES` (100) branches, so the default page holds them all."""
        return self._backend.execute(
            ListBranches(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                limit=v.limit(limit, maximum=MAX_BRANCHES) or MAX_BRANCHES,
                cursor=cursor,
            )
        )

    def restore_branch(
        self,
        session_id: str,
        branch: str,
        *,
        keep_as: str | None = None,
        owner: str | None = None,
        metadata: dict[str, Any] | Unset = UNSET,
    ) -> Session:
        """Make the branch the session's transcript again, with the state it was kept with; the transcript it
        replaces is kept as the branch `keep_as` (a fresh id when None; it may be `branch` itself, which
        swaps the two). `metadata`, when given, replaces the session's in the same write. BranchNotFound
        when the session has no such branch; Conflict when `keep_as` names another existing branch."""
        checked = v.ident(branch, "branch")
        return self._backend.execute(
            RestoreBranch(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                branch=checked,
                keep_as=v.new_id() if keep_as is None else v.ident(keep_as, "keep_as"),
                metadata=UNSET if metadata is UNSET else v.metadata(metadata),
            )
        )

    def delete_branch(self, session_id: str, branch: str, *, owner: str | None = None) -> None:
        """Remove a branch and its messages; idempotent (a branch that is not there is already deleted)."""
        return self._backend.execute(
            DeleteBranch(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                branch=v.ident(branch, "branch"),
            )
        )
