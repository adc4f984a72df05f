"""The `agent-store` command line, installed with the library: commands for a store's users and
operators (today: `migrate`). The repository's own tooling (the local stack, deployment checks,
reliability runs) is `python -m infra.cli` in a checkout, never part of the installed package."""

from __future__ import annotations

import argparse
import sys
from importlib import metadata


def version() -> str:
    """The installed distribution's version ("unknown" when run from a tree that is not installed)."""
    try:
        return metadata.version("agent-session-store")
    except metadata.PackageNotFoundError:
        return "unknown"


def parser() -> argparse.ArgumentParser:
    """Every command and option, each with its help text."""
    top = argparse.ArgumentParser(prog="agent-store", description="agent-session-store: commands for a store's users")
    top.add_argument("--version", action="version", version=f"agent-store {version()}")
    sub = top.add_subparsers(dest="command", required=True)
    migrate = sub.add_parser("migrate", help="copy another library's histories into the store (idempotent)")
    migrate.add_argument("source", choices=["langchain"], help="langchain: a DynamoDBChatMessageHistory table")
    migrate.add_argument("--table", required=True, help="the source table")
    migrate.add_argument("--owner", default="langchain", help="the owner of the copied sessions")
    migrate.add_argument("--key-attribute", default="SessionId", help="the table's session id attribute")
    migrate.add_argument("--history-attribute", default="History", help="the attribute holding the messages")
    return top


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the process's exit status. An expected failure (a missing extra, a
    store error) is one line on stderr and status 1, not a traceback."""
    from store.errors import StoreError

    args = parser().parse_args(argv)
    try:
        return migrate_langchain(args.table, args.owner, args.key_attribute, args.history_attribute)
    except ImportError as exc:
        print(
            f"agent-store: {exc.name or 'a module'} is missing: pip install 'agent-session-store[langchain]'",
            file=sys.stderr,
        )
    except StoreError as exc:
        print(f"agent-store: {exc}", file=sys.stderr)
    return 1


def migrate_langchain(table: str, owner: str, key_attribute: str, history_attribute: str) -> int:
    """`agent-store migrate langchain`: the store from the environment (SESSIONS_TABLE, ...), the source
    table through the same AWS settings; progress on stderr, a summary on stdout."""
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
        scan_table(source, table),
        owner=owner,
        key_attribute=key_attribute,
        history_attribute=history_attribute,
        progress=progress,
    )
    print(
        f"{done.sessions} sessions migrated from {table}: {done.messages_copied} messages copied, "
        f"{done.sessions_already_done} sessions already complete"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
