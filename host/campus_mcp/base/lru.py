"""One bounded cache for every in-process cache of the host and its plugins: at most ``size``
entries, the one used longest ago dropped first.

Not thread-safe on its own: a cache read from worker threads holds its own lock around it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar, overload

Key = TypeVar("Key", bound=Hashable)
Value = TypeVar("Value")
Default = TypeVar("Default")


class LRU(Generic[Key, Value]):
    """A mapping of at most ``size`` entries; a read or a write makes an entry the newest."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"an LRU holds at least one entry, not {size}")
        self.size = size
        self._entries: OrderedDict[Key, Value] = OrderedDict()

    @overload
    def get(self, key: Key) -> Value | None: ...

    @overload
    def get(self, key: Key, default: Default) -> Value | Default: ...

    def get(self, key: Key, default: object = None) -> object:
        """The value of ``key`` (now the newest), else ``default``. A key that cannot be hashed
        raises TypeError, as a dict's would."""
        try:
            value = self._entries[key]
        except KeyError:
            return default
        self._entries.move_to_end(key)
        return value

    def put(self, key: Key, value: Value) -> Value:
        """Keep ``value`` as the newest, dropping the oldest past ``size``; returns ``value``."""
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        self._entries.clear()

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)
