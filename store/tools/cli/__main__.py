"""`python -m store.tools.cli`: the `agent-store` command where its script is not on the PATH."""

from store.tools.cli import main

raise SystemExit(main())
