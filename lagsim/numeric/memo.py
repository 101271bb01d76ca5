"""Bounded memos of compiled code in one process (issue 23: "every memo of compiled code is
bounded").

A long process (a sweep worker, a notebook running many systems) makes compiled functions and
loads libraries for each model structure, stop expression or compiler it meets; kept in a plain
dict they would grow with every new key. :class:`Memo` keeps at most ``size`` of them and drops
the least recently used, as :func:`functools.lru_cache` does (Python's ``functools``
documentation), but for values made by a callable given at the call, so that one memo serves
makers of different arguments. A value dropped is made again when asked for: the disk cache
(:mod:`lagsim.numeric.cache`) still holds the libraries, so that costs a load, not a build.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Memo(Generic[V]):
    """At most ``size`` values by key, the least recently used dropped first; ``made`` counts
    the values made (how many times a maker was called), so that a caller can tell what a
    memo saved."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a memo holds at least one value, got size {size}")
        self.size = size
        self.made = 0
        self._values: OrderedDict[Hashable, V] = OrderedDict()

    def get(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value of ``key``, made by ``make()`` when it is not held (and then held)."""
        if key in self._values:
            self._values.move_to_end(key)
            return self._values[key]
        value = make()
        self.made += 1
        self.put(key, value)
        return value

    def put(self, key: Hashable, value: V) -> None:
        """Hold ``value`` for ``key`` as the most recently used (the least recently used
        dropped when more than ``size`` are held)."""
        self._values[key] = value
        self._values.move_to_end(key)
        while len(self._values) > self.size:
            self._values.popitem(last=False)

    def take(self, key: Hashable) -> V | None:
        """The value of ``key``, no longer held (None when it was not): a value that one
        caller uses at a time is taken, used and :meth:`put` back, so that a second caller
        meanwhile (another thread, a callback) makes its own."""
        return self._values.pop(key, None)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._values

    def __len__(self) -> int:
        return len(self._values)

    def clear(self) -> None:
        self._values.clear()
