"""`agent-store migrate langchain`: another library's histories copied into the store."""

from __future__ import annotations

import sys
from typing import Any, TextIO


def migrate_langchain(args: Any, out: TextIO) -> int:
    """The store from the environment (SESSIONS_TABLE, ...), the source table through the same AWS
    settings; progress on stderr, a summary on stdout."""
    from store import SessionStore
    from store.integrations.langchain import Migrated, migrate_langchain_table, scan_table
    from store.session_store import default_boto3_session

    store = SessionStore.from_env()

    def progress(done: Migrated) -> None:
        if done.sessions % 100 == 0:
            print(f"  {done.sessions} sessions, {done.messages_copied} messages copied", file=sys.stderr, flush=True)

    source = default_boto3_session().client("dynamodb")  # the store's own shared session
    done = migrate_langchain_table(
        store,
        scan_table(source, args.table),
        owner=args.owner,
        key_attribute=args.key_attribute,
        history_attribute=args.history_attribute,
        progress=progress,
    )
    out.write(
        f"{done.sessions} sessions migrated from {args.table}: {done.messages_copied} messages copied, "
        f"{done.sessions_already_done} sessions already complete\n"
    )
    return 0
