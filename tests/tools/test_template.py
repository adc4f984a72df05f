"""template.yaml is the single source of truth: the code's key layout must match it, and it must be valid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from infra.deploy.template import load, matches, stream_mappings, tables
from infra.deploy.validate import cfn_lint, transformed
from infra.local.aws import create_tables
from store.aws import keys
from store.core.lexical import LEXICAL_DIMENSIONS


def _index(props: dict[str, Any], kind: str, name: str) -> dict[str, Any]:
    return next(i for i in props[kind] if i["IndexName"] == name)


def _key(schema: list[dict[str, str]]) -> tuple[str, ...]:
    return tuple(k["AttributeName"] for k in sorted(schema, key=lambda k: k["KeyType"]))  # HASH before RANGE


def test_code_key_layout_matches_template() -> None:
    t = tables()
    sessions, messages = t["SessionsTable"].properties, t["MessagesTable"].properties
    assert _key(sessions["KeySchema"]) == (keys.PK, keys.SK)
    assert _key(_index(sessions, "GlobalSecondaryIndexes", keys.BY_OWNER)["KeySchema"]) == (keys.GSI1PK, keys.GSI1SK)
    assert _key(messages["KeySchema"]) == (keys.SID, keys.SEQ)
    assert _key(_index(messages, "LocalSecondaryIndexes", keys.BY_MESSAGE_ID)["KeySchema"]) == (keys.SID, keys.MID)
    assert t["SessionsTable"].ttl_attribute == keys.TTL == t["MessagesTable"].ttl_attribute
    types = {a["AttributeName"]: a["AttributeType"] for a in messages["AttributeDefinitions"]}
    assert types[keys.SEQ] == "N"


def test_tables_are_durable_encrypted_and_streamed() -> None:
    resources = transformed()["Resources"]
    for name in ("SessionsTable", "MessagesTable"):
        props = resources[name]["Properties"]
        assert props["BillingMode"] == "PAY_PER_REQUEST"
        assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
        assert props["SSESpecification"]["SSEEnabled"] is True
        assert props["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}
        assert resources[name]["DeletionPolicy"] == "Retain"
    assert resources["SessionsTable"]["Properties"]["StreamSpecification"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"


def test_template_lints_clean_before_and_after_the_sam_transform(tmp_path: Path) -> None:
    out = tmp_path / "transformed.json"
    out.write_text(json.dumps(transformed(), default=str))
    result = cfn_lint(Path("template.yaml"), out)
    assert result.returncode == 0, result.stdout + result.stderr


def test_local_tables_are_created_from_the_template(dynamodb_client: Any) -> None:
    created = create_tables(dynamodb_client, prefix="tmpl")
    desc = dynamodb_client.describe_table(TableName=created.sessions)["Table"]
    assert [i["IndexName"] for i in desc["GlobalSecondaryIndexes"]] == [keys.BY_OWNER]
    assert desc["StreamSpecification"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    ttl = dynamodb_client.describe_time_to_live(TableName=created.messages)["TimeToLiveDescription"]
    assert ttl["AttributeName"] == keys.TTL and ttl["TimeToLiveStatus"] == "ENABLED"
    msgs = dynamodb_client.describe_table(TableName=created.messages)["Table"]
    assert [i["IndexName"] for i in msgs["LocalSecondaryIndexes"]] == [keys.BY_MESSAGE_ID]


def test_bucket_is_private_encrypted_tls_only_and_cleans_up() -> None:
    resources = transformed()["Resources"]
    bucket = resources["ArtifactsBucket"]
    props = bucket["Properties"]
    assert bucket["DeletionPolicy"] == "Retain"
    (rule,) = props["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] in ("AES256", "aws:kms")
    assert set(props["PublicAccessBlockConfiguration"].values()) == {True}
    assert len(props["PublicAccessBlockConfiguration"]) == 4
    assert props["OwnershipControls"]["Rules"] == [{"ObjectOwnership": "BucketOwnerEnforced"}]
    lifecycle = props["LifecycleConfiguration"]["Rules"]
    assert any(
        r["Status"] == "Enabled" and r["AbortIncompleteMultipartUpload"]["DaysAfterInitiation"] >= 1 for r in lifecycle
    )
    statements = resources["ArtifactsBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    tls = [
        s
        for s in statements
        if s["Effect"] == "Deny" and "aws:SecureTransport" in s.get("Condition", {}).get("Bool", {})
    ]
    assert tls and tls[0]["Action"] == "s3:*" and tls[0]["Principal"] == "*"
    assert tls[0]["Condition"]["Bool"]["aws:SecureTransport"] == "false"
    assert len(tls[0]["Resource"]) == 2  # the bucket and its objects


def test_local_bucket_is_created_from_the_template(dynamodb_client: Any, s3_client: Any) -> None:
    created = create_tables(dynamodb_client, prefix="tmplb", s3=s3_client)
    assert created.bucket == "tmplb-artifactsbucket"
    rules = s3_client.get_bucket_lifecycle_configuration(Bucket=created.bucket)["Rules"]
    assert rules[0]["AbortIncompleteMultipartUpload"] == {"DaysAfterInitiation": 1}
    block = s3_client.get_public_access_block(Bucket=created.bucket)["PublicAccessBlockConfiguration"]
    assert all(block.values())


def _resources() -> dict[str, Any]:
    resources: dict[str, Any] = transformed()["Resources"]
    return resources


def test_every_route_but_health_openapi_and_the_console_needs_the_jwt_authorizer() -> None:
    resources = _resources()
    paths = resources["HttpApi"]["Properties"]["Body"]["paths"]
    public = {"/health", "/openapi.json", "/console", "/console/{file+}"}  # the console's data calls carry a token
    for path, operations in paths.items():
        for operation in operations.values():
            expected: list[dict[str, list[str]]] = [{"NONE": []}] if path in public else [{"JwtAuthorizer": []}]
            assert operation["security"] == expected, path
    costly = {
        "/search",
        "/sessions/{session_id}/full",
        "/sessions/{session_id}",
        "/sessions/{session_id}/artifact-uploads",
        "/sessions/{session_id}/artifact-uploads/{upload_id}/confirm",
        "/sessions/{session_id}/fork",
        "/sessions/{session_id}/rewind",
        "/v1/traces",
        "/memories/search",
        "/mcp",  # the MCP function's one route
    }
    assert set(paths) == public | costly | {"/{proxy+}"}
    auth = resources["HttpApi"]["Properties"]["Body"]["components"]["securitySchemes"]["JwtAuthorizer"]
    assert auth["x-amazon-apigateway-authorizer"]["type"] == "jwt"
    assert auth["x-amazon-apigateway-authorizer"]["jwtConfiguration"]["issuer"] == {"Ref": "JwtIssuer"}


def test_stream_mapping_reports_batch_failures_and_has_a_failure_destination() -> None:
    resources = _resources()
    mappings = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::Lambda::EventSourceMapping"]
    streams = {m["EventSourceArn"]["Fn::GetAtt"] for m in mappings}
    assert streams == {"SessionsTable.StreamArn", "MemoriesTable.StreamArn"}
    for mapping in mappings:
        assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
        assert 0 < mapping["MaximumRetryAttempts"] <= 10
        assert mapping["DestinationConfig"]["OnFailure"]["Destination"] == {"Fn::GetAtt": "CascadeFailures.Arn"}
    assert resources["CascadeFailures"]["Type"] == "AWS::SQS::Queue"


def test_functions_runtime_tracing_and_least_privilege() -> None:
    resources = _resources()
    functions = {k: r["Properties"] for k, r in resources.items() if r["Type"] == "AWS::Lambda::Function"}
    assert set(functions) == {"ApiFunction", "CascadeFunction", "CopyFunction", "ExtractionFunction", "McpFunction"}
    for props in functions.values():
        assert props["Runtime"] == "python3.12" and props["Architectures"] == ["arm64"]
        assert props["TracingConfig"] == {"Mode": "Active"}
        assert "POWERTOOLS_SERVICE_NAME" in props["Environment"]["Variables"]
    for name in ("ApiRole", "CascadeRole", "ExtractionRole", "McpRole"):
        role = resources[name]["Properties"]
        assert role["ManagedPolicyArns"] == [{"Ref": "ClientPolicy"}], "no broad AWS managed policies"
        for policy in role["Policies"]:
            for statement in _unconditional(policy["PolicyDocument"]["Statement"]):
                if statement["Resource"] == "*":
                    assert set(statement["Action"]) <= {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}
    client = _unconditional(resources["ClientPolicy"]["Properties"]["PolicyDocument"]["Statement"])
    assert all(s["Resource"] != "*" and "*" not in str(s["Action"]) for s in client)


def test_the_extraction_function_exists_only_with_a_model_and_may_invoke_that_model_only() -> None:
    doc = load()
    params, resources = doc["Parameters"], _resources()
    assert params["ExtractionModelId"]["Default"] == "" and doc["Conditions"]["ExtractsMemories"]
    for name in ("ExtractionFunction", "ExtractionRole", "ExtractionLogs", "ExtractionFunctionErrorsAlarm"):
        assert doc["Resources"][name]["Condition"] == "ExtractsMemories", name
    function = resources["ExtractionFunction"]["Properties"]
    assert function["Environment"]["Variables"]["EXTRACTION_MODEL"] == {"Fn::Sub": "bedrock:${ExtractionModelId}"}
    (mapping,) = [
        r["Properties"]
        for r in resources.values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
        and r["Properties"]["FunctionName"] == {"Ref": "ExtractionFunction"}
    ]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": "SessionsTable.StreamArn"}
    assert '"HEAD"' in mapping["FilterCriteria"]["Filters"][0]["Pattern"]  # session heads' changes only
    statements = [
        s for p in resources["ExtractionRole"]["Properties"]["Policies"] for s in p["PolicyDocument"]["Statement"]
    ]
    bedrock = [s for s in statements if s["Action"] == "bedrock:InvokeModel"]
    assert len(bedrock) == 2
    named = bedrock[0]["Resource"]
    assert all("${ExtractionModelId}" in r["Fn::Sub"] for r in named)
    routed = bedrock[1]  # any Region's copy of a model, only through the stack's inference profile
    assert "${ExtractionModelId}" in routed["Condition"]["StringEquals"]["bedrock:InferenceProfileArn"]["Fn::Sub"]
    # the API hands a run asked for to that function, and may invoke nothing else
    api = [
        s
        for p in resources["ApiRole"]["Properties"]["Policies"]
        for s in _unconditional(p["PolicyDocument"]["Statement"])
    ]
    for role in ("ApiRole", "McpRole"):  # the MCP endpoint's extract_memories tool hands a run on as the API does
        api = [
            s
            for p in resources[role]["Properties"]["Policies"]
            for s in _unconditional(p["PolicyDocument"]["Statement"])
        ]
        assert [s["Resource"] for s in api if s["Action"] == "lambda:InvokeFunction"] == [
            {"Fn::GetAtt": "ExtractionFunction.Arn"}
        ]


def _unconditional(statements: list[Any]) -> list[dict[str, Any]]:
    """A policy's statements, those under a condition (`Fn::If`) in each of its branches."""
    out: list[dict[str, Any]] = []
    for statement in statements:
        if "Fn::If" in statement:
            _, *branches = statement["Fn::If"]
            out += [b for b in branches if b != {"Ref": "AWS::NoValue"}]
        else:
            out.append(statement)
    return out


def test_alarms_and_outputs() -> None:
    doc = transformed()
    alarms = [r["Properties"] for r in doc["Resources"].values() if r["Type"] == "AWS::CloudWatch::Alarm"]
    metrics = {(a.get("Namespace"), a.get("MetricName")) for a in alarms}
    assert ("AWS/ApiGateway", "5xx") in metrics
    assert sum(1 for a in alarms if a.get("MetricName") == "Errors") == 5  # one per function
    assert ("AWS/Lambda", "IteratorAge") in metrics
    assert ("AWS/SQS", "ApproximateNumberOfMessagesVisible") in metrics
    throttles = [a for a in alarms if "Metrics" in a]
    assert len(throttles) == 2 and all("ThrottleEvents" in str(a["Metrics"]) for a in throttles)
    assert {"SessionsTableName", "MessagesTableName", "ArtifactsBucketName", "ApiUrl", "ClientPolicyArn"} <= set(
        doc["Outputs"]
    )


def test_abuse_limits() -> None:
    """Per-route throttles (the unauthenticated and the costly routes below the default), a reserved
    concurrency that is optional, the request budget and the required scopes handed to the function."""
    doc = transformed()
    resources = doc["Resources"]
    stage = next(r["Properties"] for r in resources.values() if r["Type"] == "AWS::ApiGatewayV2::Stage")
    routes = stage["RouteSettings"]
    for key in ("GET /health", "GET /openapi.json"):
        assert routes[key]["ThrottlingRateLimit"] == {"Ref": "PublicRouteRateLimit"}, key
    for key in ("GET /search", "GET /sessions/{session_id}/full", "DELETE /sessions/{session_id}", "POST /v1/traces"):
        assert routes[key]["ThrottlingBurstLimit"] == {"Ref": "CostlyRouteBurstLimit"}, key
    assert stage["DefaultRouteSettings"]["ThrottlingRateLimit"] == {"Ref": "ApiRateLimit"}
    params = load()["Parameters"]
    defaults = {
        name: params[name]["Default"] for name in ("PublicRouteRateLimit", "CostlyRouteRateLimit", "ApiRateLimit")
    }
    assert defaults["PublicRouteRateLimit"] < defaults["CostlyRouteRateLimit"] < defaults["ApiRateLimit"]
    api = resources["ApiFunction"]["Properties"]
    assert api["ReservedConcurrentExecutions"] == {
        "Fn::If": ["HasReservedConcurrency", {"Ref": "ApiReservedConcurrency"}, {"Ref": "AWS::NoValue"}]
    }
    env = api["Environment"]["Variables"]
    assert env["REQUEST_BUDGET_SECONDS"] == {"Ref": "RequestBudgetSeconds"}
    assert params["RequestBudgetSeconds"]["MaxValue"] < api["Timeout"] <= 29
    assert env["JWT_SCOPES"] == {"Fn::Join": [",", {"Ref": "JwtScopes"}]}
    assert params["JwtScopes"]["Default"] == ""


def test_the_memories_stream_feeds_the_cascade_forget_markers_and_released_values() -> None:
    """An owner's forget (more memories than one call deletes) is carried on by the cascade, and the object of a
    value too large for an item is deleted once its memory lets go of it: the memories table's stream feeds the
    cascade those records only, one at a time."""
    resources = _resources()
    every = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::Lambda::EventSourceMapping"]
    (memories,) = [m for m in every if "MemoriesTable" in str(m["EventSourceArn"])]
    assert memories["FunctionName"] == {"Ref": "CascadeFunction"} and memories["BatchSize"] == 1
    table = resources["MemoriesTable"]["Properties"]
    assert table["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert "ref" in table["VectorIndexes"][0]["Projection"]["NonKeyAttributes"]  # a hit's value, in the bucket
    patterns = [json.loads(f["Pattern"]) for f in memories["FilterCriteria"]["Filters"]]
    keys = {"pk": {"S": "O#a"}, "sk": {"S": "F#forget"}}
    marker = {"eventName": "MODIFY", "dynamodb": {"Keys": keys, "NewImage": {**keys, "round": {"S": "r"}}}}
    memory = {"eventName": "INSERT", "dynamodb": {"Keys": {"pk": {"S": "O#a"}, "sk": {"S": "M#notes/|k"}}}}
    gone = {"eventName": "REMOVE", "dynamodb": {"Keys": keys, "OldImage": keys}}
    spilled = {"pk": {"S": "O#a"}, "sk": {"S": "M#n/|k"}, "ref": {"S": "memories/x/payloads/w/h"}}
    its = {"pk": spilled["pk"], "sk": spilled["sk"]}
    released = {"eventName": "REMOVE", "dynamodb": {"Keys": its, "OldImage": spilled}}
    kept = {"eventName": "INSERT", "dynamodb": {"Keys": its, "NewImage": spilled}}
    chosen = [r for r in (marker, memory, gone, released, kept) if any(matches(p, r) for p in patterns)]
    assert chosen == [marker, released]
    (local,) = [m for m in stream_mappings() if m.table == "MemoriesTable"]
    assert local.function == "CascadeFunction" and local.wants(marker) and local.wants(released)
    assert not local.wants(memory) and not local.wants(kept)


def test_the_stream_jobs_are_separate_mappings() -> None:
    """The cascade (purges, handed-on deletes, releases) and the copies have mappings of their own on the
    sessions table's stream: copies one head per invocation, only records of a head that holds a copy."""
    resources = _resources()
    every = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::Lambda::EventSourceMapping"]
    mappings = {m["FunctionName"]["Ref"]: m for m in every if "SessionsTable" in str(m["EventSourceArn"])}
    assert set(mappings) == {"CascadeFunction", "CopyFunction", "ExtractionFunction"}
    copy, cascade = mappings["CopyFunction"], mappings["CascadeFunction"]
    assert copy["BatchSize"] == 1 and cascade["BatchSize"] == 100
    assert copy["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    (only,) = [json.loads(f["Pattern"]) for f in copy["FilterCriteria"]["Filters"]]
    seed = {"t": {"S": "token"}, "th": {"N": "1500"}, "dn": {"N": "0"}}
    copying = {"eventName": "MODIFY", "dynamodb": {"NewImage": {"id": {"S": "f"}, "seed": {"M": seed}}}}
    plain = {"eventName": "MODIFY", "dynamodb": {"NewImage": {"id": {"S": "f"}}}}
    removed = {"eventName": "REMOVE", "dynamodb": {"OldImage": {"id": {"S": "f"}, "seed": {"M": seed}}}}
    assert matches(only, copying) and not matches(only, plain) and not matches(only, removed)
    # the local stack feeds its functions by the same mappings, read from the template
    local = {m.function: m for m in stream_mappings() if m.table == "SessionsTable"}
    assert local["CopyFunction"].batch_size == 1 and local["CopyFunction"].wants(copying)
    assert not local["CopyFunction"].wants(plain) and local["CascadeFunction"].wants(plain)
    assert not local["CascadeFunction"].wants({"eventName": "INSERT", "dynamodb": {}})
    handlers = {name: resources[name]["Properties"]["Handler"] for name in mappings}
    assert handlers == {
        "CascadeFunction": "functions.cascade.app.lambda_handler",
        "CopyFunction": "functions.cascade.app.copy_handler",
        "ExtractionFunction": "functions.extraction.app.lambda_handler",
    }
    head = {"eventName": "MODIFY", "dynamodb": {"Keys": {"pk": {"S": "S#f"}, "sk": {"S": "HEAD"}}, "NewImage": {}}}
    state = {"eventName": "MODIFY", "dynamodb": {"Keys": {"pk": {"S": "S#f"}, "sk": {"S": "STATE"}}, "NewImage": {}}}
    assert local["ExtractionFunction"].wants(head) and not local["ExtractionFunction"].wants(state)
    timer = {"pk": {"S": "C#workflow#xi.s1"}, "sk": {"S": "CP"}}
    by_ttl = {"eventName": "REMOVE", "userIdentity": {"type": "Service", "principalId": "dynamodb.amazonaws.com"}}
    assert local["ExtractionFunction"].wants({**by_ttl, "dynamodb": {"Keys": timer}})  # an idle timer ran out
    assert not local["ExtractionFunction"].wants({"eventName": "REMOVE", "dynamodb": {"Keys": timer}})  # deleted
    other = {"pk": {"S": "C#workflow#other"}, "sk": {"S": "CP"}}
    assert not local["ExtractionFunction"].wants({**by_ttl, "dynamodb": {"Keys": other}})


def test_the_embedder_and_the_memories_index_are_made_of_the_same_two_parameters() -> None:
    """The functions' MEMORY_EMBEDDER and the vector index's dimensions are both made of MemoryEmbeddingModel and
    MemoryEmbeddingDimensions, so a deployment cannot set them apart; the embedder reads what the template says."""
    from infra.deploy.template import memory_dimensions
    from store.embeddings import BedrockEmbedder, embedder_from_env

    doc = load()
    assert doc["Globals"]["Function"]["Environment"]["Variables"]["MEMORY_EMBEDDER"] == {
        "Fn::If": [
            "EmbedsMemories",
            {"Fn::Sub": "bedrock:${MemoryEmbeddingModel}:${MemoryEmbeddingDimensions}"},
            "none",
        ]
    }
    (index,) = doc["Resources"]["MemoriesTable"]["Properties"]["VectorIndexes"]
    assert index["Dimensions"] == {
        "Fn::FindInMap": ["MemoryVectorIndex", {"Ref": "MemoryEmbeddingDimensions"}, "Dimensions"]
    }
    assert index["DistanceFunction"] == "DOT_PRODUCT"
    # the embedding's dimensions and the words' 1,024, for every size the parameter allows
    for dims in doc["Parameters"]["MemoryEmbeddingDimensions"]["AllowedValues"]:
        assert memory_dimensions(overrides={"MemoryEmbeddingDimensions": str(dims)}) == dims + LEXICAL_DIMENSIONS
    assert memory_dimensions() == 256 + 1024
    made = embedder_from_env("bedrock:amazon.titan-embed-text-v2:0:1024")  # what the functions get at 1024
    assert isinstance(made, BedrockEmbedder) and made.dimensions == 1024
    assert made.model_id == "amazon.titan-embed-text-v2:0"
    assert embedder_from_env("none") is None


def test_a_deployment_whose_dimensions_the_model_cannot_make_is_refused(capsys: Any) -> None:
    """CloudFormation refuses it (the template's Rules); `validate-template --parameter-overrides` says so first."""
    from infra.cli import main
    from infra.deploy.template import broken_rules

    assert broken_rules() == []
    for dims in ("256", "512", "1024"):
        assert broken_rules(overrides={"MemoryEmbeddingDimensions": dims}) == []
    (reason,) = broken_rules(overrides={"MemoryEmbeddingDimensions": "1536"})
    assert "256, 512 or 1024" in reason
    assert broken_rules(overrides={"MemoryEmbeddingDimensions": "1536", "MemoryEmbeddingModel": "none"}) == []
    assert main(["validate-template", "--parameter-overrides", "MemoryEmbeddingDimensions=1536"]) == 1
    out = capsys.readouterr().out
    assert "refused: Titan Text Embeddings V2 makes vectors of 256, 512 or 1024" in out
    (reason,) = broken_rules(overrides={"MemoryEmbeddingDimensions": "300", "MemoryEmbeddingModel": "none"})
    assert "MemoryEmbeddingDimensions must be one of 64, 128, 256" in reason
    assert main(["validate-template", "--parameter-overrides", "NoSuchParameter=1"]) == 1
    assert "declares no parameter NoSuchParameter" in capsys.readouterr().out
