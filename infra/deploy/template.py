"""Read template.yaml (the single source of truth) and turn its tables into create_table requests."""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"

# Logical id in template.yaml -> the environment variable the library reads.
TABLE_ENV = {"SessionsTable": "SESSIONS_TABLE", "MessagesTable": "MESSAGES_TABLE", "MemoriesTable": "MEMORIES_TABLE"}
BUCKET_ENV = {"ArtifactsBucket": "ARTIFACTS_BUCKET"}


class _CfnLoader(yaml.SafeLoader):
    """A YAML loader that accepts CloudFormation's short-form intrinsics (!Ref, !Sub, ...) as plain data."""


def _intrinsic(loader: yaml.SafeLoader, tag_suffix: str, node: yaml.Node) -> Any:
    name = "Ref" if tag_suffix == "Ref" else f"Fn::{tag_suffix}"
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    return {name: value}


_CfnLoader.add_multi_constructor("!", _intrinsic)


def load(path: Path = TEMPLATE) -> dict[str, Any]:
    """The template as data (intrinsic functions left as {"Ref": ...} / {"Fn::X": ...}): a copy of its own,
    parsed once per version of the file (every local table and bucket is created from it)."""
    stat = path.stat()
    return copy.deepcopy(_parsed(path.resolve(), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=8)
def _parsed(path: Path, mtime_ns: int, size: int) -> dict[str, Any]:
    with path.open(encoding="utf-8") as fh:
        doc: dict[str, Any] = yaml.load(fh, Loader=_CfnLoader)
    return doc


@dataclass(frozen=True)
class TableSpec:
    """One AWS::DynamoDB::Table of the template, ready to create under a chosen name."""

    logical_id: str
    properties: dict[str, Any]

    @property
    def ttl_attribute(self) -> str | None:
        spec = self.properties.get("TimeToLiveSpecification") or {}
        return spec.get("AttributeName") if spec.get("Enabled") else None

    def create_request(self, table_name: str) -> dict[str, Any]:
        """CreateTable parameters for this table (keys, indexes, billing, stream, encryption)."""
        p = self.properties
        req: dict[str, Any] = {
            "TableName": table_name,
            "AttributeDefinitions": p["AttributeDefinitions"],
            "KeySchema": p["KeySchema"],
            "BillingMode": p.get("BillingMode", "PAY_PER_REQUEST"),
        }
        for prop in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
            if p.get(prop):
                req[prop] = [
                    {"IndexName": i["IndexName"], "KeySchema": i["KeySchema"], "Projection": i["Projection"]}
                    for i in p[prop]
                ]
        if p.get("VectorIndexes"):
            req["VectorIndexes"] = p["VectorIndexes"]
        stream = p.get("StreamSpecification")
        if stream:
            req["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": stream["StreamViewType"]}
        if (p.get("SSESpecification") or {}).get("SSEEnabled"):
            req["SSESpecification"] = {"Enabled": True}
        return req


def parameters(doc: dict[str, Any] | None = None, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The template's parameters as a deployment sets them: each its default unless overridden (a Number
    parameter as a number). A name the template does not declare is refused, as CloudFormation refuses it."""
    doc = doc if doc is not None else load()
    declared = doc.get("Parameters", {})
    unknown = sorted(set(overrides or {}) - set(declared))
    if unknown:
        raise ValueError(f"template.yaml declares no parameter {', '.join(unknown)}")
    out: dict[str, Any] = {}
    for name, spec in declared.items():
        value = (overrides or {}).get(name, spec.get("Default"))
        out[name] = int(value) if spec.get("Type") == "Number" and value is not None else value
    return out


def _resolved(value: Any, values: dict[str, Any], mappings: dict[str, Any] | None = None) -> Any:
    """`value` with each {"Ref": <a parameter>} replaced by the parameter's value, and each
    {"Fn::FindInMap": [map, key, name]} by the template's mapping (`mappings`)."""
    if isinstance(value, dict):
        if set(value) == {"Ref"} and value["Ref"] in values:
            return values[value["Ref"]]
        if set(value) == {"Fn::FindInMap"} and mappings is not None:
            table, top, second = (str(_resolved(v, values, mappings)) for v in value["Fn::FindInMap"])
            return mappings[table][top][second]
        return {k: _resolved(v, values, mappings) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolved(v, values, mappings) for v in value]
    return value


def _evaluate(expr: Any, values: dict[str, Any]) -> Any:
    """A rule's condition or assertion, as CloudFormation evaluates it (Ref, Equals, Contains, Not, And, Or)."""
    if not isinstance(expr, dict):
        return expr
    ((fn, args),) = expr.items()
    if fn == "Ref":
        value = values[args]
        return str(value) if isinstance(value, int) else value
    given = [_evaluate(a, values) for a in args] if isinstance(args, list) else [_evaluate(args, values)]
    if fn == "Fn::Equals":
        return given[0] == given[1]
    if fn == "Fn::Contains":
        return given[1] in given[0]
    if fn == "Fn::Not":
        return not given[0]
    if fn == "Fn::And":
        return all(given)
    if fn == "Fn::Or":
        return any(given)
    raise ValueError(f"a rule uses {fn}, which this reader does not evaluate")


def broken_rules(doc: dict[str, Any] | None = None, overrides: dict[str, Any] | None = None) -> list[str]:
    """What CloudFormation would refuse a deployment with these parameters for: the description of each of
    the template's rules (`Rules`) whose condition holds and an assertion of which fails."""
    doc = doc if doc is not None else load()
    values = parameters(doc, overrides)
    out = []
    for name, spec in doc.get("Parameters", {}).items():
        allowed = spec.get("AllowedValues")
        if allowed and str(values[name]) not in [str(a) for a in allowed]:
            out.append(f"{name} must be one of {', '.join(str(a) for a in allowed)}")
    for rule in doc.get("Rules", {}).values():
        if "RuleCondition" in rule and not _evaluate(rule["RuleCondition"], values):
            continue
        out += [
            " ".join(a["AssertDescription"].split()) for a in rule["Assertions"] if not _evaluate(a["Assert"], values)
        ]
    return out


def tables(doc: dict[str, Any] | None = None, overrides: dict[str, Any] | None = None) -> dict[str, TableSpec]:
    """Every DynamoDB table of the template, by logical id, its parameters as a deployment sets them."""
    doc = doc if doc is not None else load()
    values = parameters(doc, overrides)
    return {
        logical_id: TableSpec(logical_id, _resolved(resource.get("Properties", {}), values, doc.get("Mappings", {})))
        for logical_id, resource in doc.get("Resources", {}).items()
        if resource.get("Type") == "AWS::DynamoDB::Table"
    }


def with_embedding_dimensions(doc: dict[str, Any], dimensions: int, words: int) -> dict[str, Any]:
    """A copy of the template that also allows an embedder of `dimensions` (its index: those and `words`):
    the edit docs/operations.md describes for a model whose size the template does not list."""
    out = copy.deepcopy(doc)
    allowed = out["Parameters"]["MemoryEmbeddingDimensions"]["AllowedValues"]
    if dimensions not in allowed:
        allowed.append(dimensions)
    out["Mappings"]["MemoryVectorIndex"][str(dimensions)] = {"Dimensions": dimensions + words}
    return out


def memory_dimensions(doc: dict[str, Any] | None = None, overrides: dict[str, Any] | None = None) -> int:
    """The dimensions of the memories table's vector index, as a deployment sets them (the embedding's and
    the words')."""
    (index,) = tables(doc, overrides)["MemoriesTable"].properties["VectorIndexes"]
    return int(index["Dimensions"])


@dataclass(frozen=True)
class BucketSpec:
    """One AWS::S3::Bucket of the template, ready to create under a chosen name."""

    logical_id: str
    properties: dict[str, Any]

    def setup_requests(self, bucket: str) -> list[tuple[str, dict[str, Any]]]:
        """(S3 client method, parameters) that give a new bucket the template's configuration."""
        p = self.properties
        out: list[tuple[str, dict[str, Any]]] = []
        if p.get("BucketEncryption"):
            rules = [
                {
                    ("ApplyServerSideEncryptionByDefault" if k == "ServerSideEncryptionByDefault" else k): v
                    for k, v in r.items()
                }
                for r in p["BucketEncryption"]["ServerSideEncryptionConfiguration"]
            ]
            out.append(("put_bucket_encryption", {"ServerSideEncryptionConfiguration": {"Rules": rules}}))
        if p.get("PublicAccessBlockConfiguration"):
            out.append(
                ("put_public_access_block", {"PublicAccessBlockConfiguration": p["PublicAccessBlockConfiguration"]})
            )
        if p.get("OwnershipControls"):
            out.append(("put_bucket_ownership_controls", {"OwnershipControls": p["OwnershipControls"]}))
        lifecycle = (p.get("LifecycleConfiguration") or {}).get("Rules") or []
        if lifecycle:
            converted = [
                {
                    "ID": r["Id"],
                    "Status": r["Status"],
                    "Filter": {"Prefix": r.get("Prefix", "")},
                    **{k: v for k, v in r.items() if k not in ("Id", "Status", "Prefix")},
                }
                for r in lifecycle
            ]
            out.append(("put_bucket_lifecycle_configuration", {"LifecycleConfiguration": {"Rules": converted}}))
        return [(op, {"Bucket": bucket, **params}) for op, params in out]


def buckets(doc: dict[str, Any] | None = None) -> dict[str, BucketSpec]:
    """Every S3 bucket of the template, by logical id."""
    doc = doc if doc is not None else load()
    return {
        logical_id: BucketSpec(logical_id, resource.get("Properties", {}))
        for logical_id, resource in doc.get("Resources", {}).items()
        if resource.get("Type") == "AWS::S3::Bucket"
    }


@dataclass(frozen=True)
class StreamMapping:
    """One event source mapping of a function on a table's stream, as the template declares it: the function's
    handler (`module.function`), its batch size, its filter patterns, the table (its logical id) and the
    function's timeout (seconds)."""

    function: str
    handler: str
    batch_size: int
    patterns: tuple[dict[str, Any], ...]
    table: str = "SessionsTable"
    timeout: int = 29

    def wants(self, record: dict[str, Any]) -> bool:
        """Whether Lambda would hand `record` to the function (no pattern: every record)."""
        return not self.patterns or any(matches(p, record) for p in self.patterns)


def matches(pattern: Any, value: Any) -> bool:
    """Lambda's event filtering, the part a template may use: at a leaf, a list of allowed values,
    `{"exists": true|false}` or `{"prefix": "..."}`; an object, matched key by key below."""
    if isinstance(pattern, dict):
        if not isinstance(value, dict):
            return False
        for key, below in pattern.items():
            if key not in value:
                if below != [{"exists": False}]:
                    return False
            elif not matches(below, value[key]):
                return False
        return True
    return any(
        alt == {"exists": True}
        or alt == value
        or (isinstance(alt, dict) and "prefix" in alt and isinstance(value, str) and value.startswith(alt["prefix"]))
        for alt in pattern
    )


def stream_mappings(doc: dict[str, Any] | None = None) -> list[StreamMapping]:
    """Every function's DynamoDB stream event of the template, in the order the template lists them."""
    doc = doc if doc is not None else load()
    found: list[StreamMapping] = []
    for logical_id, resource in doc.get("Resources", {}).items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        props = resource["Properties"]
        for event in props.get("Events", {}).values():
            if event.get("Type") != "DynamoDB":
                continue
            spec = event["Properties"]
            filters = spec.get("FilterCriteria", {}).get("Filters", [])
            patterns = tuple(json.loads(f["Pattern"]) for f in filters)
            stream = spec["Stream"]["Fn::GetAtt"]
            table = stream.split(".")[0] if isinstance(stream, str) else stream[0]
            batch = int(spec.get("BatchSize", 100))
            timeout = int(props.get("Timeout", doc.get("Globals", {}).get("Function", {}).get("Timeout", 29)))
            found.append(StreamMapping(logical_id, props["Handler"], batch, patterns, table, timeout))
    return found
