"""The `agent-store` command line."""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agent-store", description="agent-session-store tools")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="run the demo conversation on an embedded AWS (what `make run` does)")
    sub.add_parser("validate-template", help="SAM transform + cfn-lint of template.yaml")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from infra.demo import run

        run()
        return 0
    from infra.validate import main as validate

    return validate()


if __name__ == "__main__":
    raise SystemExit(main())
