"""The repository's tooling as one command, run from a checkout: `python -m infra.cli COMMAND` (the
Makefile's targets use it). The installed `agent-store` command is `store.tools.cli`."""

from __future__ import annotations

import argparse
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.cli", description="agent-session-store repository tools")
    sub = parser.add_subparsers(dest="command", required=True)
    local = sub.add_parser("local", help="the local stack: moto, tables and bucket, the HTTP API on :8000 (`make run`)")
    local.add_argument("--port", type=int, default=8000, help="the API's port on 127.0.0.1 (0: any free port)")
    local.add_argument("--sub", default="dev-user", help="the owner the printed development token stands for")
    local.add_argument(
        "--aws-port", type=int, default=8001, help="moto's port on 127.0.0.1, fixed so exported endpoints stay valid"
    )
    local.add_argument("--data", type=Path, help="a directory that keeps the stack's data across restarts")
    local.add_argument("--no-browser", action="store_true", help="do not open the console in a browser")
    sub.add_parser("demo", help="a scripted agent conversation on an embedded AWS, with request counts")
    validate = sub.add_parser("validate-template", help="SAM transform + cfn-lint of template.yaml")
    validate.add_argument(
        "--parameter-overrides",
        nargs="*",
        default=[],
        metavar="NAME=VALUE",
        help="the parameters you will deploy with: what CloudFormation would refuse them for is refused here",
    )
    sub.add_parser("openapi", help="write docs/openapi.json from the API's routes")
    sub.add_parser(
        "reembed", help="embed again the memories another embedder embedded (MEMORIES_TABLE, MEMORY_EMBEDDER)"
    )
    faults = sub.add_parser("faults", help="the contract workflows under injected faults, on a fresh moto server")
    faults.add_argument("--rate", type=float, default=0.1, help="share of requests that fail (0.1 = 10%%)")
    faults.add_argument("--sessions", type=int, default=5)
    faults.add_argument("--turns", type=int, default=10)
    faults.add_argument("--seed", type=int, default=1)
    sub.add_parser("check", help="check the invariants of the tables and bucket named by the environment")
    crash = sub.add_parser("crash", help="SIGKILL a writer mid-workflow again and again; check after each")
    crash.add_argument("--kills", type=int, default=20)
    crash.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.command == "local":
        from infra.local.aws import local_environment
        from infra.local.stack import serve

        local_environment()
        return serve(args.port, args.sub, aws_port=args.aws_port, data=args.data, browser=not args.no_browser)
    if args.command == "demo":
        from infra.local.demo import run

        run()
        return 0
    if args.command in ("faults", "check", "crash"):
        from infra.local.aws import local_environment

        local_environment()
        if args.command == "check":
            from infra.reliability.invariants import main as check

            return check()
        if args.command == "crash":
            from infra.reliability.crash import main as crash_test

            return crash_test(args.kills, args.seed)
        from infra.reliability.chaos import main as chaos

        return chaos(args.rate, args.sessions, args.turns, args.seed)
    if args.command == "reembed":
        from infra.deploy.reembed import main as reembed

        return reembed()
    if args.command == "openapi":
        from infra.deploy.openapi import main as write_openapi

        write_openapi()
        return 0
    from infra.deploy.validate import main as validate_template

    return validate_template(args.parameter_overrides)


if __name__ == "__main__":
    raise SystemExit(main())
