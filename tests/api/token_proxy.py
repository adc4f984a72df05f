"""A proxy on 127.0.0.1 that adds a bearer token to every request it forwards: how a client that sends no
token (the MCP conformance suite's CLI) reaches the local stack's `/mcp`, which needs one."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "content-length",
    "date",
    "server",
}


def _handler(target: str, token: str) -> type[BaseHTTPRequestHandler]:
    class Forward(BaseHTTPRequestHandler):
        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            headers["Authorization"] = f"Bearer {token}"
            request = urllib.request.Request(target + self.path, data=body, method=self.command, headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=60) as answer:
                    status, out, data = answer.status, answer.headers.items(), answer.read()
            except urllib.error.HTTPError as exc:
                status, out, data = exc.code, exc.headers.items(), exc.read()
            self.send_response(status)
            for name, value in out:
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_DELETE = do_PUT = _forward

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return Forward


@contextmanager
def token_proxy(target: str, token: str) -> Iterator[str]:
    """The proxy's base URL while it runs; it stops on exit."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(target, token))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
