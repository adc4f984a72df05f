"""What every domain part of the public front relies on: the backend, the settings, and what a layer above the
store asks `forget_owner` to rewrite."""

from __future__ import annotations

from typing import ClassVar

from store.backend import Backend
from store.core.forgetting import ForgetReducers
from store.settings import Settings


class Domain:
    """The base of each domain's operations: `SessionStore` (through `StoreFront`) sets these. A layer above
    the store that keeps session records naming memories (memory extraction's runs) gives `forget_reducers`:
    for each such record kind, what a forget leaves of it (`store.core.forgetting`)."""

    _backend: Backend
    settings: Settings
    forget_reducers: ClassVar[ForgetReducers] = {}
