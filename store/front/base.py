"""What every domain part of the public front relies on: the backend, and the settings."""

from __future__ import annotations

from store.backend import Backend
from store.settings import Settings


class Domain:
    """The base of each domain's operations: `SessionStore` (through `StoreFront`) sets these."""

    _backend: Backend
    settings: Settings
