"""How the CLI prints: aligned tables, a transcript's messages (text, tool calls with their arguments, tool
results), progress on stderr, and JSON for scripts."""

from __future__ import annotations

import io
import json
import re
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from pydantic import BaseModel

from store.conversation import CanonicalMessage, canonical
from store.models import MessageRecord

PREVIEW = 160  # characters of a text or an argument list shown in a table
# what a terminal acts on instead of showing: C0 controls but tab and newline (ESC starts CSI and OSC
# sequences: clear the screen, set the title or the clipboard), DEL, C1 controls (0x9b is CSI itself), and
# the bidirectional overrides and isolates that reorder what is shown
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """`text` with every character a terminal would act on written as its escape (`\\u001b`): what an agent
    stored (a tool's output, say) cannot drive the operator's terminal. In JSON the escape means the same
    character, so JSON output stays equal to what it was."""
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class VisibleOutput(io.TextIOBase):
    """A text stream that writes through `inner` with control characters made visible (`visible`)."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        self.inner.write(visible(text))
        return len(text)

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return self.inner.isatty()


def as_json(value: Any) -> str:
    """Models, lists of them and plain values as one JSON document."""

    def plain(v: Any) -> Any:
        if isinstance(v, BaseModel):
            return v.model_dump(mode="json", exclude_none=True)
        if isinstance(v, list | tuple):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v

    return json.dumps(plain(value), ensure_ascii=False, default=str, indent=2)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], out: TextIO) -> None:
    """Rows under headers, columns padded to their widest cell (the last column is not padded)."""
    cells = [[str(c) for c in headers]] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        line = "  ".join(c.ljust(widths[i]) if i < len(row) - 1 else c for i, c in enumerate(row))
        out.write(line.rstrip() + "\n")
        if n == 0:
            out.write("  ".join("-" * w for w in widths) + "\n")


def short(text: str, limit: int = PREVIEW) -> str:
    """One line of at most `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _args(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def parts(message: MessageRecord, view: CanonicalMessage | None = None) -> list[tuple[str, str]]:
    """What a message holds, as (label, text) pairs, read from its canonical view (`store.conversation`):
    text, reasoning, each tool call (name and arguments), each tool result, images and files, whatever
    framework wrote it."""
    return [_labelled(part) for part in (view or canonical(message)).parts]


def _labelled(part: Any) -> tuple[str, str]:
    """One canonical part as (label, text)."""
    if part.type in ("text", "reasoning"):
        return part.type, part.text or ""
    if part.type == "tool_call":
        return "tool call", f"{part.name or '?'}({_args(part.arguments if part.arguments is not None else {})})"
    if part.type == "tool_result":
        label = "tool error" if part.is_error else "tool result"
        return label, (f"{part.name}: " if part.name else "") + (part.content or "")
    if part.type in ("image", "file"):
        return part.type, _media_text(part)
    return "content", _args(part.data)


def _media_text(part: Any) -> str:
    """An image's or a file's name, type and where it is (a URL, or inline)."""
    where = part.url or ("inline" if part.inline else "")
    return " ".join(x for x in (part.name, part.media_type, where) if x) or str(part.type)


def message_lines(message: MessageRecord, *, full: bool = False) -> list[str]:
    """A message as printed by `sessions show` and `messages tail`: seq, role (and the author or the
    framework's own role when they say more), model and usage, then each part."""
    view = canonical(message)
    head = f"#{message.seq} {view.role}"
    if view.author and view.author != view.role:
        head += f" ({view.author})"
    if message.kind == "compaction":
        head += "  [compaction: the live context starts here]"
    if view.model:
        head += f"  model {view.model}"
    if view.usage is not None and view.usage.numbers():
        head += "  (" + ", ".join(f"{k} {v}" for k, v in view.usage.numbers().items()) + ")"
    lines = [head]
    for label, text in parts(message, view):
        shown = text if full else short(text)
        lines.append(f"    {label}: {shown}" if label != "text" else f"    {shown}")
    return lines


class Progress:
    """Progress on stderr: a bar when the total is known, a count otherwise; redrawn in place on a terminal,
    a line at most every 2 s elsewhere; nothing with `quiet`."""

    def __init__(self, what: str, total: int | None = None, *, quiet: bool = False, out: TextIO | None = None) -> None:
        self.what, self.total, self.quiet = what, total, quiet
        self.out = out or sys.stderr
        self.tty = self.out.isatty()
        self.last = 0.0

    def __call__(self, kind: str, count: int) -> None:
        now = time.monotonic()
        if self.quiet or (now - self.last < (0.1 if self.tty else 2.0) and kind != "done"):
            return
        self.last = now
        if self.total and kind in ("messages", "done"):
            share = min(1.0, count / self.total)
            bar = "#" * int(share * 30)
            text = f"{self.what}: [{bar.ljust(30, '.')}] {share:4.0%} {count:,}/{self.total:,} messages"
        else:
            text = f"{self.what}: {count:,} {kind}"
        self.out.write(("\r" + text) if self.tty else text + "\n")
        self.out.flush()

    def finish(self) -> None:
        if self.tty and not self.quiet:
            self.out.write("\n")
