"""A bounded map shared by the store's caches (positions, turn times, adapters' learned places)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")


class Lru(Generic[V]):
    """A bounded map, least recently used dropped first. Safe to share between threads (a long-lived
    Lambda container may touch many sessions)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def get_or_make(self, key: str, make: Callable[[], V]) -> V:
        """The value of `key`, made by `make` and kept when there is none (at once: two callers get one)."""
        with self._lock:
            value = self._items.get(key)
            if value is None:
                value = self._items[key] = make()
                while len(self._items) > self._size:
                    self._items.popitem(last=False)
            self._items.move_to_end(key)
            return value

    def put(self, key: str, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def drop(self, key: str) -> None:
        with self._lock:
            self._items.pop(key, None)

    def __len__(self) -> int:
        return len(self._items)
