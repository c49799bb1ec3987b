"""Strategy builders memoized on their arguments.

A composite strategy (or any builder) called inside a draw with fresh arguments is rebuilt,
validated and has its cached properties computed anew on every draw, which costs more than
the draws it makes. The same arguments build an equal strategy, so reusing it changes nothing
that is drawn (the derandomized profiles draw exactly the same examples).

Arguments the builders get are the loaded contract (a frozen but unhashable dataclass), an
oracle, strings, and lists or tuples of strings: hashable ones are keys as they are, lists
and tuples by their items, anything else by identity (the cache keeps it alive, so its id is
not reused).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def _key(value: Any) -> Hashable:
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, *map(_key, value))
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    key: Hashable = value
    return key


def memo(builder: F) -> F:
    """``builder`` returning the strategy it built the first time for equal arguments."""
    built: dict[Hashable, tuple[Any, tuple[Any, ...], dict[str, Any]]] = {}

    @functools.wraps(builder)
    def cached(*args: Any, **kwargs: Any) -> Any:
        key = (tuple(map(_key, args)), tuple(sorted((k, _key(v)) for k, v in kwargs.items())))
        found = built.get(key)
        if found is None:
            found = built[key] = (builder(*args, **kwargs), args, kwargs)  # args kept alive: ids stay theirs
        return found[0]

    return cached  # type: ignore[return-value]
