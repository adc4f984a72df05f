"""Template validation: aws-sam-translator's transform, then cfn-lint on its output and on the source.

cfn-lint 1.54 and newer no longer runs the SAM transform itself, so errors that only show after the
transform (event sources, generated roles) would go unseen without the first step.
Run: python -m infra.deploy.validate  (exit status 0 when both lints are clean)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from infra.deploy.template import TEMPLATE, broken_rules, load


class _NoManagedPolicies:
    """The transform asks for AWS managed policy ARNs only when a function names one by its short name;
    this project names none, so no IAM call is ever needed (none is possible here)."""

    def load(self) -> dict[str, str]:
        return {}


def transformed(path: Path = TEMPLATE, parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    """The CloudFormation template the SAM transform produces from `path` (region us-east-1)."""
    import boto3
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator

    params = {"AWS::AccountId": "123456789012", "AWS::StackName": "agent-store", **(parameters or {})}
    translator = Translator(None, Parser(), boto_session=boto3.Session(region_name="us-east-1"))
    result: dict[str, Any] = translator.translate(
        packaged(load(path)), parameter_values=params, get_managed_policy_map=_NoManagedPolicies().load
    )
    return result


def packaged(doc: dict[str, Any]) -> dict[str, Any]:
    """The template as `sam package` leaves it: local CodeUri folders replaced by S3 locations (the
    transform accepts only those; what is in the folder does not matter to it)."""
    out = copy.deepcopy(doc)
    sections = [out.get("Globals", {}).get("Function", {})]
    sections += [
        r.get("Properties", {})
        for r in out.get("Resources", {}).values()
        if r.get("Type") == "AWS::Serverless::Function"
    ]
    for props in sections:
        if isinstance(props.get("CodeUri"), str) and not props["CodeUri"].startswith("s3://"):
            props["CodeUri"] = "s3://packaged-by-sam/agent-session-store.zip"
    return out


def cfn_lint(*paths: Path) -> subprocess.CompletedProcess[str]:
    """cfn-lint's verdict on the given templates."""
    exe = Path(sys.executable).with_name("cfn-lint")
    return subprocess.run([str(exe), *map(str, paths)], capture_output=True, text=True, check=False)


def overrides(given: list[str]) -> dict[str, str]:
    """`Name=Value` pairs (as `sam deploy --parameter-overrides` takes them) as a dict; ValueError otherwise."""
    pairs = [g.partition("=") for g in given]
    bad = [g for g, (name, eq, _) in zip(given, pairs, strict=True) if not name or not eq]
    if bad:
        raise ValueError(f"parameter overrides are Name=Value, not {', '.join(bad)}")
    return {name: value for name, _, value in pairs}


def main(given: list[str] | None = None) -> int:
    """Lint the template (source and transformed); with parameter overrides, also refuse what CloudFormation
    would refuse a deployment with them for (the template's `Rules`, a parameter it does not declare)."""
    try:
        chosen = overrides(given or [])
        broken = broken_rules(overrides=chosen)
    except ValueError as exc:
        print(f"template: {exc}")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "transformed.json"
        out.write_text(json.dumps(transformed(), indent=1, default=str))
        result = cfn_lint(TEMPLATE, out)
    sys.stdout.write(result.stdout + result.stderr)
    for reason in broken:
        print(f"template: a deployment with these parameters is refused: {reason}")
    ok = result.returncode == 0 and not broken
    print("template: OK" if ok else "template: problems found")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
