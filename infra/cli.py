"""The `agent-store` command line."""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agent-store", description="agent-session-store tools")
    sub = parser.add_subparsers(dest="command", required=True)
    local = sub.add_parser("local", help="the local stack: moto, tables and bucket, the HTTP API on :8000 (`make run`)")
    local.add_argument("--port", type=int, default=8000, help="the API's port on 127.0.0.1 (0: any free port)")
    local.add_argument("--sub", default="dev-user", help="the owner the printed development token stands for")
    sub.add_parser("demo", help="a scripted agent conversation on an embedded AWS, with request counts")
    sub.add_parser("validate-template", help="SAM transform + cfn-lint of template.yaml")
    sub.add_parser("openapi", help="write docs/openapi.json from the API's routes")
    faults = sub.add_parser("faults", help="the contract workflows under injected faults, on a fresh moto server")
    faults.add_argument("--rate", type=float, default=0.1, help="share of requests that fail (0.1 = 10%%)")
    faults.add_argument("--sessions", type=int, default=5)
    faults.add_argument("--turns", type=int, default=10)
    faults.add_argument("--seed", type=int, default=1)
    sub.add_parser("check", help="check the invariants of the tables and bucket named by the environment")
    migrate = sub.add_parser("migrate", help="copy another library's histories into the store (idempotent)")
    migrate.add_argument("source", choices=["langchain"], help="langchain: a DynamoDBChatMessageHistory table")
    migrate.add_argument("--table", required=True, help="the source table")
    migrate.add_argument("--owner", default="langchain", help="the owner of the copied sessions")
    migrate.add_argument("--key-attribute", default="SessionId", help="the table's session id attribute")
    migrate.add_argument("--history-attribute", default="History", help="the attribute holding the messages")
    crash = sub.add_parser("crash", help="SIGKILL a writer mid-workflow again and again; check after each")
    crash.add_argument("--kills", type=int, default=20)
    crash.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.command == "local":
        from infra.local import local_environment
        from infra.local_api import serve

        local_environment()

        serve(args.port, args.sub)
        return 0
    if args.command == "demo":
        from infra.demo import run

        run()
        return 0
    if args.command in ("faults", "check", "crash"):
        from infra.local import local_environment

        local_environment()
        if args.command == "check":
            from infra.invariants import main as check

            return check()
        if args.command == "crash":
            from infra.crash import main as crash_test

            return crash_test(args.kills, args.seed)
        from infra.chaos import main as chaos

        return chaos(args.rate, args.sessions, args.turns, args.seed)
    if args.command == "migrate":
        return migrate_langchain(args.table, args.owner, args.key_attribute, args.history_attribute)
    if args.command == "openapi":
        from infra.openapi import main as write_openapi

        write_openapi()
        return 0
    from infra.validate import main as validate

    return validate()


def migrate_langchain(table: str, owner: str, key_attribute: str, history_attribute: str) -> int:
    """`agent-store migrate langchain`: the store from the environment (SESSIONS_TABLE, ...), the source
    table through the same AWS settings; progress on stderr, a summary on stdout."""
    import sys

    import boto3

    from store import SessionStore
    from store.integrations.langchain import Migrated, migrate_langchain_table, scan_table

    store = SessionStore.from_env()

    def progress(done: Migrated) -> None:
        if done.sessions % 100 == 0:
            print(f"  {done.sessions} sessions, {done.messages_copied} messages copied", file=sys.stderr, flush=True)

    source = boto3.client("dynamodb")
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
