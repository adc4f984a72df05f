"""The `agent-store` command line, installed with the library: what an operator runs to look at and move
sessions, against the local stack or a deployed API (`--api URL`, a token) or the tables directly (the
environment's, as one `--owner`). Human-readable tables by default, `--json` for scripts; an expected
failure is one line on stderr and a non-zero status, never a traceback.

    agent-store sessions list | search Q | show ID | export ID | import FILE | delete ID
    agent-store sessions fork ID [--at SEQ] | rewind ID --to SEQ | branches ID | restore ID BRANCH
    agent-store messages tail ID [--follow]
    agent-store traces show ID [RUN]
    agent-store artifacts list ID | get ID NAME
    agent-store memories list [--namespace NS] | search Q | get NS KEY | put NS KEY VALUE | delete NS KEY | export
    agent-store memories show NS KEY | correct NS KEY TEXT | forget --yes
    agent-store memories extract SESSION [--strategy S] | runs SESSION | extraction [--on|--off]
    agent-store context SESSION [-q QUESTION] | mcp [--read-only] [--print-config]
    agent-store migrate langchain --table NAME

The repository's own tooling (the local stack, deployment checks, reliability runs) is `python -m
infra.cli` in a checkout, never part of the installed package."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from importlib import metadata
from typing import TYPE_CHECKING, Any, TextIO, cast

from store.extraction.strategies import BUILT_IN

if TYPE_CHECKING:
    from store.session_store import SessionStore


def version() -> str:
    """The installed distribution's version ("unknown" when run from a tree that is not installed)."""
    try:
        return metadata.version("agent-session-store")
    except metadata.PackageNotFoundError:
        return "unknown"


def _common() -> argparse.ArgumentParser:
    """The options every store command takes: where the store is, as whom, and how to print."""
    common = argparse.ArgumentParser(add_help=False)
    where = common.add_argument_group("where the store is")
    where.add_argument("--api", metavar="URL", help="the stack's HTTP API (default: $AGENT_STORE_API); else the tables")
    where.add_argument("--token", help="a bearer token for --api (default: $AGENT_STORE_TOKEN)")
    where.add_argument("--owner", help="without --api: the owner to act as (default: $AGENT_STORE_OWNER)")
    where.add_argument(
        "--unscoped",
        action="store_true",
        help="without --api: the owner's sessions with ids as stored, not as the API names them",
    )
    where.add_argument(
        "--any-owner",
        action="store_true",
        help="without --api: act as the operator on any owner's session, ids as stored (--owner still names "
        "whose sessions are listed, and whose an import writes)",
    )
    where.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for each API request (30)")
    common.add_argument("--json", action="store_true", help="print JSON for scripts instead of tables")
    return common


def parser() -> argparse.ArgumentParser:
    """Every command and option, each with its help text."""
    common = _common()
    top = argparse.ArgumentParser(
        prog="agent-store", description="agent-session-store: look at, move and migrate an agent's sessions"
    )
    top.add_argument("--version", action="version", version=f"agent-store {version()}")
    groups = top.add_subparsers(dest="group", required=True, metavar="COMMAND")

    sessions = groups.add_parser(
        "sessions", help="list, search, show, export, import, delete, fork and rewind sessions"
    )
    sub = sessions.add_subparsers(dest="command", required=True, metavar="ACTION")
    p = sub.add_parser("list", parents=[common], help="my sessions, most recently updated first")
    p.add_argument("--limit", type=int, default=50, help="sessions per page (50)")
    p.add_argument("--cursor", help="continue from a previous page's cursor")
    p.add_argument("--all", action="store_true", help="every page, not only the first")
    p.add_argument(
        "--internal", action="store_true", help="also the sessions adapters keep for themselves (checkpoint logs, ...)"
    )
    p = sub.add_parser("search", parents=[common], help="search titles and messages (bounded per call)")
    p.add_argument("query", help="the text to find")
    p.add_argument("--limit", type=int, default=20, help="hits to return (20)")
    p.add_argument("--cursor", help="continue into older sessions from a previous call's cursor")
    p = sub.add_parser("show", parents=[common], help="a session: transcript, state, artifacts, trace runs")
    p.add_argument("session_id", help="the session's id")
    p.add_argument("--last", type=int, help="only the last N messages (a window that keeps tool calls whole)")
    p.add_argument("--full", action="store_true", help="print texts and tool arguments whole, not shortened")
    p = sub.add_parser("export", parents=[common], help="a session as JSON lines (docs/export-format.md)")
    p.add_argument("session_id", help="the session's id")
    p.add_argument("-o", "--output", help="a new file to write (default: stdout)")
    p.add_argument("--records", help="comma-separated kinds of records to include")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p = sub.add_parser("import", parents=[common], help="an export into this store (idempotent)")
    p.add_argument("file", help="the export's file, or - for stdin")
    p.add_argument("--as", dest="as_id", metavar="ID", help="the id to import it as (default: the exported id)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p = sub.add_parser("delete", parents=[common], help="delete a session and everything it owns")
    p.add_argument("session_id", help="the session's id")
    p.add_argument("-y", "--yes", action="store_true", help="do not ask first")
    p = sub.add_parser("fork", parents=[common], help="a new session holding a session's messages up to a point")
    p.add_argument("session_id", help="the session to fork")
    p.add_argument("--at", type=int, metavar="SEQ", help="the fork's last message (default: the session's last)")
    p.add_argument("--id", dest="new_id", metavar="ID", help="the fork's id (default: a new one)")
    p.add_argument("--title", help="the fork's title (default: the session's)")
    p = sub.add_parser(
        "rewind", parents=[common], help="continue a session from a message; later ones kept as a branch"
    )
    p.add_argument("session_id", help="the session's id")
    p.add_argument("--to", type=int, required=True, metavar="SEQ", help="the message the session continues from")
    p.add_argument("--branch", help="the name the transcript as it was is kept under (default: a new one)")
    p = sub.add_parser("branches", parents=[common], help="the branches a session keeps (from its rewinds)")
    p.add_argument("session_id", help="the session's id")
    p = sub.add_parser("restore", parents=[common], help="make a branch a session's transcript again")
    p.add_argument("session_id", help="the session's id")
    p.add_argument("branch", help="the branch to restore")
    p.add_argument("--keep-as", help="the name the transcript it replaces is kept under (default: a new one)")

    messages = groups.add_parser("messages", help="follow a transcript")
    sub = messages.add_subparsers(dest="command", required=True, metavar="ACTION")
    p = sub.add_parser("tail", parents=[common], help="the last messages, and new ones with --follow")
    p.add_argument("session_id", help="the session's id")
    p.add_argument("-n", type=int, default=20, help="how many of the latest messages to print first (20)")
    p.add_argument("-f", "--follow", action="store_true", help="keep printing messages as they are appended")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between polls with --follow (1)")
    p.add_argument("--for", dest="for_seconds", type=float, help="stop following after this many seconds")
    p.add_argument("--full", action="store_true", help="print texts and tool arguments whole")
    p = sub.add_parser("search", parents=[common], help="search my messages by meaning or words (every session)")
    p.add_argument("query", help="what to look for")
    p.add_argument("--session", help="only this session's messages")
    p.add_argument("--mode", choices=["auto", "semantic", "keyword", "hybrid"], default="auto")
    p.add_argument("--limit", type=int, default=10, help="at most this many (10)")

    context = groups.add_parser(
        "context", parents=[common], help="what the model sees for a session's next turn, under a token budget"
    )
    context.add_argument("session_id", help="the session's id")
    context.add_argument("-q", "--query", help="the question (default: the last user message)")
    context.add_argument("--budget", type=int, default=2000, help="tokens (2000)")
    context.add_argument("--no-memories", action="store_true", help="leave the owner's memories out")
    context.add_argument("--text", action="store_true", help="print the text a model reads")

    mcp = groups.add_parser(
        "mcp", parents=[common], help="serve the store to an MCP host over stdio (as the token's owner, or --owner)"
    )
    mcp.add_argument("--read-only", action="store_true", help="offer the reading tools only")
    mcp.add_argument(
        "--print-config", action="store_true", help="print the entry a desktop host's config takes, and exit"
    )

    traces = groups.add_parser("traces", help="a run's timeline")
    sub = traces.add_subparsers(dest="command", required=True, metavar="ACTION")
    p = sub.add_parser("show", parents=[common], help="a run's events as a waterfall")
    p.add_argument("session_id", help="the session's id")
    p.add_argument("run", nargs="?", help="the run's id (default: the latest run)")
    p.add_argument("--width", type=int, default=40, help="characters of the time axis (40)")
    p = sub.add_parser("export", parents=[common], help="runs as OTLP/JSON (for Langfuse, Phoenix, a collector)")
    p.add_argument("session_id", help="the session's id")
    p.add_argument("run", nargs="?", help="one run's id (default: every run)")
    p.add_argument("-o", "--output", help="a new file to write (default: stdout)")

    artifacts = groups.add_parser("artifacts", help="a session's artifacts")
    sub = artifacts.add_subparsers(dest="command", required=True, metavar="ACTION")
    p = sub.add_parser("list", parents=[common], help="the latest version of each artifact")
    p.add_argument("session_id", help="the session's id")
    p = sub.add_parser("get", parents=[common], help="download a version's bytes")
    p.add_argument("session_id", help="the session's id")
    p.add_argument("name", help="the artifact's name")
    p.add_argument("--version", type=int, help="the version (default: the latest)")
    p.add_argument("-o", "--output", help="a new file to write (default: stdout, when it is not a terminal)")

    memories = groups.add_parser("memories", help="the owner's long-term memories")
    sub = memories.add_subparsers(dest="command", required=True, metavar="ACTION")
    p = sub.add_parser("list", parents=[common], help="namespaces, or the memories of one (--namespace)")
    p.add_argument("--namespace", help='a namespace as labels joined by "/" (or a JSON array), e.g. projects/lisbon')
    p.add_argument("--limit", type=int, default=100, help="at most this many (100)")
    p = sub.add_parser("search", parents=[common], help="search by meaning or words (scores shown)")
    p.add_argument("query", help="what to look for")
    p.add_argument("--namespace", help="only under this namespace prefix")
    p.add_argument("--mode", choices=["auto", "semantic", "keyword", "hybrid"], default="auto")
    p.add_argument("--limit", type=int, default=10, help="at most this many (10)")
    p = sub.add_parser("get", parents=[common], help="one memory's value")
    p.add_argument("namespace", help='labels joined by "/" (or a JSON array)')
    p.add_argument("key", help="the memory's key")
    p = sub.add_parser("put", parents=[common], help='put a memory (a JSON object, or text as {"text": ...})')
    p.add_argument("namespace", help='labels joined by "/" (or a JSON array)')
    p.add_argument("key", help="the memory's key")
    p.add_argument("value", help="a JSON object, or plain text")
    p.add_argument("--ttl", type=int, help="seconds until it expires")
    p = sub.add_parser("delete", parents=[common], help="delete a memory")
    p.add_argument("namespace", help='labels joined by "/" (or a JSON array)')
    p.add_argument("key", help="the memory's key")
    p = sub.add_parser("export", parents=[common], help="every memory (under --namespace) as JSON lines")
    p.add_argument("--namespace", help="only under this namespace prefix")
    p = sub.add_parser("show", parents=[common], help="one memory, where it came from and its earlier texts")
    p.add_argument("namespace", help='labels joined by "/" (or a JSON array)')
    p.add_argument("key", help="the memory's key")
    p = sub.add_parser("correct", parents=[common], help="correct a memory's text (the old one kept in its history)")
    p.add_argument("namespace", help='labels joined by "/" (or a JSON array)')
    p.add_argument("key", help="the memory's key")
    p.add_argument("text", help="the corrected text")
    p = sub.add_parser("forget", parents=[common], help="forget every memory of the owner (--yes)")
    p.add_argument("--yes", action="store_true", help="yes, forget them all")
    p = sub.add_parser("extract", parents=[common], help="extract memories from a session now ($EXTRACTION_MODEL)")
    p.add_argument("session_id", help="the session's id")
    p.add_argument(
        "--strategy",
        action="append",
        choices=list(BUILT_IN),
        help="a strategy to run (repeat; default: facts and preferences)",
    )
    p = sub.add_parser("runs", parents=[common], help="a session's extraction runs")
    p.add_argument("session_id", help="the session's id")
    p = sub.add_parser("extraction", parents=[common], help="the owner's choice about extraction (--on, --off)")
    switch = p.add_mutually_exclusive_group()
    switch.add_argument("--on", action="store_true", help="extract the owner's sessions")
    switch.add_argument("--off", action="store_true", help="never extract the owner's sessions")
    p.add_argument(
        "--strategy",
        action="append",
        choices=list(BUILT_IN),
        help="the owner's strategies (repeat; with --on)",
    )

    token = groups.add_parser(
        "token", parents=[common], help="the local stack only: a development token for another owner"
    )
    token.add_argument("--sub", required=True, help="the owner the new token stands for")
    token.add_argument("--export", action="store_true", help="print an export line for AGENT_STORE_TOKEN")
    token.add_argument(
        "--operator-key", help="the key the local stack printed at start (default: $AGENT_STORE_OPERATOR_KEY)"
    )

    migrate = groups.add_parser("migrate", help="copy another library's histories into the store (idempotent)")
    migrate.add_argument("source", choices=["langchain"], help="langchain: a DynamoDBChatMessageHistory table")
    migrate.add_argument("--table", required=True, help="the source table")
    migrate.add_argument("--owner", default="langchain", help="the owner of the copied sessions")
    migrate.add_argument("--key-attribute", default="SessionId", help="the table's session id attribute")
    migrate.add_argument("--history-attribute", default="History", help="the attribute holding the messages")
    return top


def _commands() -> dict[tuple[str, str | None], Callable[[Any, Any, TextIO], int]]:
    from store.tools.cli import commands as c
    from store.tools.cli import extraction as x
    from store.tools.cli import mcp as m
    from store.tools.cli import recall as r

    return {
        ("sessions", "list"): c.sessions_list,
        ("sessions", "search"): c.sessions_search,
        ("sessions", "show"): c.sessions_show,
        ("sessions", "export"): c.sessions_export,
        ("sessions", "import"): c.sessions_import,
        ("sessions", "delete"): c.sessions_delete,
        ("sessions", "fork"): c.sessions_fork,
        ("sessions", "rewind"): c.sessions_rewind,
        ("sessions", "branches"): c.sessions_branches,
        ("sessions", "restore"): c.sessions_restore,
        ("messages", "tail"): c.messages_tail,
        ("messages", "search"): r.messages_search,
        ("context", None): r.context,
        ("mcp", None): m.mcp_serve,
        ("traces", "show"): c.traces_show,
        ("traces", "export"): c.traces_export,
        ("artifacts", "list"): c.artifacts_list,
        ("artifacts", "get"): c.artifacts_get,
        ("memories", "list"): c.memories_list,
        ("memories", "search"): c.memories_search,
        ("memories", "get"): c.memories_get,
        ("memories", "put"): c.memories_put,
        ("memories", "delete"): c.memories_delete,
        ("memories", "export"): c.memories_export,
        ("memories", "show"): x.memories_show,
        ("memories", "correct"): x.memories_correct,
        ("memories", "forget"): x.memories_forget,
        ("memories", "extract"): x.memories_extract,
        ("memories", "runs"): x.memories_runs,
        ("memories", "extraction"): x.memories_extraction,
    }


def main(argv: list[str] | None = None, *, store: SessionStore | None = None, out: TextIO | None = None) -> int:
    """Run one command; returns the process's exit status: 0 done, 1 an expected failure (one line on
    stderr: a store error, a missing extra, a file that cannot be read), 2 a usage error, 130 interrupted.
    `store`: use this store (seen as --owner) instead of the environment's (tests, embedding)."""
    from store.errors import StoreError
    from store.tools.cli.show import VisibleOutput, visible

    args = parser().parse_args(argv)
    sink = cast(TextIO, VisibleOutput(out or sys.stdout))  # nothing stored reaches the terminal as a control
    try:
        if args.group == "migrate":
            from store.tools.cli.migrate import migrate_langchain

            return migrate_langchain(args, sink)
        if args.group == "token":
            from store.tools.cli.commands import mint_token

            return mint_token(args, sink)
        from store.tools.cli.target import resolve

        target = resolve(args, store)
        return _commands()[(args.group, getattr(args, "command", None))](args, target, sink)
    except ImportError as exc:
        print(
            f"agent-store: {exc.name or 'a module'} is missing: pip install 'agent-session-store[langchain]'",
            file=sys.stderr,
        )
    except StoreError as exc:
        print(f"agent-store: {visible(str(exc))}", file=sys.stderr)
    except KeyboardInterrupt:
        print("", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `agent-store ... | head`: the reader has what it wanted
        return 0
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
