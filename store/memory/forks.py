"""The in-memory backend: forks, rewinds and branches, with the same copy window as on DynamoDB: a
transcript of up to `Settings.fork_inline_messages` messages is copied within the call; a longer one comes
in a step at a time (`MemoryCore.step_copies`: by itself in the background, as the stack's copy job brings
it, or a step each `reclaim`), the session `copying` meanwhile, and the messages it takes are pinned in their
source (a change to them is a retryable Conflict)."""

from __future__ import annotations

from dataclasses import replace

from store.conversation.preview import preview_of
from store.core import paging, rules
from store.core.forking import forked_session
from store.core.slots import RECORDS_PREFIX
from store.errors import BranchNotFound, SessionExists
from store.memory.core import ArtifactEntry, BranchEntry, CopyJob, MemoryCore, SessionEntry
from store.models import Branch, Branches, MessageRecord, Session, StateSnapshot, TokenUsage
from store.requests import UNSET, DeleteBranch, ForkSession, ListBranches, RestoreBranch, RewindSession


def _usage(messages: list[MessageRecord]) -> TokenUsage:
    total = TokenUsage()
    for m in messages:
        total = total.plus(m.usage)
    return total


def _latest_compaction(messages: list[MessageRecord]) -> int | None:
    return next((m.seq for m in reversed(messages) if m.kind == "compaction"), None)


def _moved(messages: list[MessageRecord], session_id: str) -> list[MessageRecord]:
    """Deep copies of `messages`, as messages of `session_id`."""
    return [m.model_copy(update={"session_id": session_id}, deep=True) for m in messages]


class MemoryForks(MemoryCore):
    """Forks, rewinds and branches, in memory."""

    def fork_session(self, request: ForkSession) -> Session:
        source_id, owner, new_id, at_seq = request.session_id, request.owner, request.new_session_id, request.at_seq
        with self._lock:
            source = self._need(source_id, owner)
            names = request.metadata is not UNSET
            rules.check_copyable("fork_session", source.session.metadata, names_its_metadata=names)
            last = rules.fork_point(at_seq, source.session.last_seq)
            if self._live(new_id, None) is not None:
                raise SessionExists(new_id)
            now = self._now()
            versions = sum(len(art.versions) for art in source.artifacts.values())
            inline = rules.copies_inline(last, versions, self.settings.fork_inline_messages)
            messages = _moved(source.messages[:last], new_id) if inline else []
            state: StateSnapshot | None
            if request.state is not UNSET:
                state = StateSnapshot(version=1, state=self._copy(request.state), seq=last, saved_at=now)
            elif source.state is not None:
                state = source.state.model_copy(update={"seq": min(source.state.seq, last)}, deep=True)
            else:
                state = None
            taken = source.messages[:last]
            session = forked_session(
                source.session,
                request.new_session_id,
                last,
                now,
                title=request.title,
                metadata=request.metadata,
                usage=_usage(messages),
                state_version=state.version if state is not None else 0,
                compaction_seq=_latest_compaction(taken),
                preview=preview_of(taken[: rules.PREVIEW_WINDOW]),
                copying=not inline,
                copied=None if inline else 0,
            )
            entry = SessionEntry(session=session, messages=messages, state=state)
            if not inline:  # the rest comes in steps; the source keeps those messages as they are meanwhile
                entry.copy = CopyJob(list(taken), source_id)
                source.pins[new_id] = last
                self._copy_later()
            entry.slots = {k: self._copy(v) for k, v in source.slots.items() if k.startswith(RECORDS_PREFIX)}
            entry.states_kept = {k: s.model_copy(deep=True) for k, s in source.states_kept.items() if s.seq <= last}
            entry.artifacts = {name: self._artifact_copy(art, new_id) for name, art in source.artifacts.items()}
            self._sessions[new_id] = entry
            return session.model_copy(deep=True)

    @staticmethod
    def _artifact_copy(art: ArtifactEntry, session_id: str) -> ArtifactEntry:
        """The artifact's versions as the fork's (the bytes are shared: they never change)."""
        versions = {
            n: (av.model_copy(update={"session_id": session_id}), data) for n, (av, data) in art.versions.items()
        }
        return replace(art, versions=versions)

    def rewind_session(self, request: RewindSession) -> Session:
        session_id, owner, to_seq, name = request.session_id, request.owner, request.to_seq, request.branch
        with self._lock:
            entry = self._need(session_id, owner)
            names = request.metadata is not UNSET
            rules.check_copyable("rewind_session", entry.session.metadata, names_its_metadata=names)
            last = entry.session.last_seq
            rules.check_rewind(to_seq, last)
            if to_seq == last:
                return entry.session.model_copy(deep=True)
            if name in entry.branches:
                raise rules.branch_exists(name)
            rules.check_branch_room(len(entry.branches))
            rules.check_unpinned("rewind_session", 0, entry.pinned)
            entry.branches[name] = self._branch_of(entry, to_seq)
            kept = entry.messages[:to_seq]
            inline = rules.copies_inline(to_seq, 0, self.settings.fork_inline_messages)
            restored = rules.state_as_of(entry.state, list(entry.states_kept.values()), to_seq)
            changes: dict[str, object] = {}
            if restored is not None:
                entry.state = StateSnapshot(
                    version=entry.session.state_version + 1,
                    state=restored.state,
                    seq=restored.seq,
                    saved_at=self._now(),
                )
                changes["state_version"] = entry.state.version
            entry.messages = list(kept) if inline else []
            if not inline:  # the session's new line comes in steps out of the branch (which never changes)
                entry.copy = CopyJob(list(kept), None)
                changes.update(copying=True, copied=0)
                self._copy_later()
            if request.metadata is not UNSET:
                changes["metadata"] = self._copy(request.metadata)
            self._touch(
                entry,
                last_seq=to_seq,
                usage=_usage(entry.messages),
                compaction_seq=_latest_compaction(kept),
                preview=preview_of(kept[: rules.PREVIEW_WINDOW]),
                **changes,
            )
            return entry.session.model_copy(deep=True)

    def _branch_of(self, entry: SessionEntry, from_seq: int) -> BranchEntry:
        """The session's transcript (and state) as a branch that leaves the session after `from_seq`."""
        return BranchEntry(
            messages=entry.messages,
            from_seq=from_seq,
            created_at=self._now(),
            usage=entry.session.usage,
            compaction_seq=entry.session.compaction_seq,
            preview=entry.session.preview,
            state=entry.state.model_copy(deep=True) if entry.state is not None else None,
        )

    def list_branches(self, request: ListBranches) -> Branches:
        with self._lock:
            entry = self._need(request.session_id, request.owner)
            found = [self._describe(request.session_id, name, b) for name, b in entry.branches.items()]
        return paging.branch_page(request.session_id, found, request.limit, request.cursor)

    @staticmethod
    def _describe(session_id: str, name: str, branch: BranchEntry) -> Branch:
        return Branch(
            id=name,
            session_id=session_id,
            from_seq=branch.from_seq,
            last_seq=len(branch.messages),
            created_at=branch.created_at,
            usage=branch.usage,
            preview=preview_of(branch.messages[branch.from_seq : branch.from_seq + rules.PREVIEW_WINDOW]),
        )

    def restore_branch(self, request: RestoreBranch) -> Session:
        session_id, owner, name, keep_as = request.session_id, request.owner, request.branch, request.keep_as
        with self._lock:
            entry = self._need(session_id, owner)
            branch = entry.branches.get(name)
            if branch is None:
                raise BranchNotFound(session_id, name)
            rules.check_unpinned("restore_branch", 0, entry.pinned)
            if keep_as != name and keep_as in entry.branches:
                raise rules.branch_exists(keep_as)
            del entry.branches[name]
            entry.branches[keep_as] = self._branch_of(entry, branch.from_seq)
            changes: dict[str, object] = {}
            if branch.state is not None:
                version = entry.session.state_version + 1
                entry.state = branch.state.model_copy(update={"version": version, "saved_at": self._now()})
                changes["state_version"] = version
            entry.messages = branch.messages
            if request.metadata is not UNSET:
                changes["metadata"] = self._copy(request.metadata)
            self._touch(
                entry,
                last_seq=len(branch.messages),
                usage=branch.usage,
                compaction_seq=branch.compaction_seq,
                preview=branch.preview,
                **changes,
            )
            return entry.session.model_copy(deep=True)

    def delete_branch(self, request: DeleteBranch) -> None:
        with self._lock:
            entry = self._need(request.session_id, request.owner)
            if entry.branches.pop(request.branch, None) is not None:
                self._touch(entry)
