"""Context-manager plumbing shared by the objects that hold connections."""

from __future__ import annotations

from typing import Any, Self


class AsyncClosing:
    """`async with obj:` closes `obj` with `await obj.aclose()` on the way out."""

    async def aclose(self) -> Any:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
