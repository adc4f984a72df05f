"""Write the HTTP API's OpenAPI document (generated from the routes) to docs/openapi.json.

Run: python -m infra.deploy.openapi   (make openapi). A test fails when the committed file differs."""

from __future__ import annotations

import os
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def main() -> None:
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    from functions.api.app import openapi_document

    DOC.write_text(openapi_document(), encoding="utf-8")
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
