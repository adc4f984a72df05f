"""DynamoDB AttributeValue helpers for the low-level client (the same for boto3 and aiobotocore)."""

from __future__ import annotations

from typing import Any

AV = dict[str, Any]
Item = dict[str, AV]


def s(value: str) -> AV:
    return {"S": value}


def n(value: int | float) -> AV:
    return {"N": repr(value) if isinstance(value, float) else str(value)}


def b(value: bytes) -> AV:
    return {"B": value}


def boolean(value: bool) -> AV:
    return {"BOOL": value}


def str_map(value: dict[str, str]) -> AV:
    return {"M": {k: {"S": v} for k, v in value.items()}}


def get_s(item: Item, name: str) -> str | None:
    av = item.get(name)
    return None if av is None else str(av["S"])


def need_s(item: Item, name: str) -> str:
    return str(item[name]["S"])


def get_n(item: Item, name: str) -> int | float | None:
    av = item.get(name)
    if av is None:
        return None
    text = str(av["N"])
    return float(text) if any(c in text for c in ".eE") else int(text)


def get_int(item: Item, name: str, default: int = 0) -> int:
    value = get_n(item, name)
    return default if value is None else int(value)


def get_b(item: Item, name: str) -> bytes | None:
    av = item.get(name)
    return None if av is None else bytes(av["B"])


def _number_size(text: str) -> int:
    digits = text.lstrip("-").replace(".", "").lstrip("0") or "0"
    return (len(digits) + 1) // 2 + 1


def value_size(av: AV) -> int:
    """Bytes DynamoDB counts for one attribute value (its published sizing rules)."""
    ((kind, value),) = av.items()
    if kind == "S":
        return len(value.encode("utf-8"))
    if kind == "N":
        return _number_size(value)
    if kind == "B":
        return len(value)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "M":
        return 3 + sum(len(k.encode()) + value_size(v) + 1 for k, v in value.items())
    if kind == "L":
        return 3 + sum(value_size(v) + 1 for v in value)
    if kind == "SS":
        return sum(len(x.encode()) for x in value)
    if kind == "NS":
        return sum(_number_size(x) for x in value)
    if kind == "BS":
        return sum(len(x) for x in value)
    raise ValueError(f"unknown attribute type {kind}")


def item_size(item: Item) -> int:
    """Bytes DynamoDB counts for an item: attribute names plus values."""
    return sum(len(name.encode("utf-8")) + value_size(av) for name, av in item.items())


class Expr:
    """Builds expression attribute names and values with placeholders that cannot collide."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, AV] = {}

    def name(self, attr: str) -> str:
        for placeholder, existing in self.names.items():
            if existing == attr:
                return placeholder
        placeholder = f"#n{len(self.names)}"
        self.names[placeholder] = attr
        return placeholder

    def path(self, *parts: str) -> str:
        return ".".join(self.name(p) for p in parts)

    def value(self, av: AV) -> str:
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = av
        return placeholder

    def as_read(self, attr: str, value: int | str | None) -> str:
        """The condition that `attr` is still `value` as read: absent when None, else equal to it."""
        if value is None:
            return f"attribute_not_exists({self.name(attr)})"
        return f"{self.name(attr)} = {self.value(n(value) if isinstance(value, int) else s(value))}"

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.names:
            out["ExpressionAttributeNames"] = dict(self.names)
        if self.values:
            out["ExpressionAttributeValues"] = dict(self.values)
        return out


def action(
    kind: str,
    table: str,
    target: Item,
    expr: Expr | None = None,
    *,
    update: str | None = None,
    condition: str | None = None,
    old: bool = False,
) -> dict[str, Any]:
    """One write as a transaction action, `{kind: body}`: `kind` is "Put" (`target` is the item), "Update",
    "Delete" or "ConditionCheck" (`target` is the key); `update` and `condition` are expressions whose
    placeholders `expr` holds; with `old`, a failed condition returns the item as it was. A single write
    takes the body alone (`write_if("update_item", action(...)["Update"])`)."""
    body: dict[str, Any] = {"TableName": table, "Item" if kind == "Put" else "Key": target}
    if update is not None:
        body["UpdateExpression"] = update
    if condition is not None:
        body["ConditionExpression"] = condition
    if old:
        body["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    if expr is not None:
        body.update(expr.params())
    return {kind: body}
