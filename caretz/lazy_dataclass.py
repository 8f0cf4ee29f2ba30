"""Dataclasses whose methods are written when the class is first used.

`@dataclass` writes and compiles a class's `__init__`, `__repr__`, `__eq__` (and a frozen
one's `__setattr__`, `__delattr__`, `__hash__`) as the class is defined: about half a
millisecond each, and a run meets some 150 dataclasses on its way to its first model
request, of which it makes fewer than 50 (the records of events not yet written, the
guard's decisions, the tools' results, the permission rules). `@lazy_dataclass(...)` takes
`dataclass`'s options and does that work when the class (or a subclass) is first made,
or `ready(cls)` is called: the class stays the same object, and from then on it is
exactly the dataclass `@dataclass(...)` makes. Type checkers read it as `dataclass`.

Rules: every dataclass that inherits from a lazy one is lazy too (an eager subclass
would not see its base's fields; tests/test_lazy_dataclass.py checks the package), and
`dataclasses.fields`/`is_dataclass` on a class not yet made need `ready(cls)` first.
A class that writes its own `__init__` is made at once.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T", bound=type)

_OPTIONS = "__lazy_dataclass__"  # in a class's own __dict__ while it waits
_LAZY = "__lazy__"  # in a class's own __dict__: it was declared lazy
_lock = threading.RLock()


@overload
def lazy_dataclass(cls: T, /) -> T: ...
@overload
def lazy_dataclass(**options: Any) -> Callable[[T], T]: ...
@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def lazy_dataclass(cls: Any = None, /, **options: Any) -> Any:
    """`@dataclass(**options)`, done when the class is first made (see the module)."""

    def wait(cls: T) -> T:
        if "__init__" in cls.__dict__:
            return dataclasses.dataclass(cls, **options)  # its own __init__: made at once

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            ready(cls)
            cls.__init__(self, *args, **kwargs)  # now the dataclass's own

        setattr(cls, _OPTIONS, options)
        setattr(cls, _LAZY, True)
        cls.__init__ = __init__  # type: ignore[misc]
        return cls

    return wait if cls is None else wait(cls)


def ready(cls: T) -> T:
    """Make `cls` (and the lazy dataclasses it inherits from, first) a dataclass now."""
    with _lock:
        for each in reversed(cls.__mro__):
            options = each.__dict__.get(_OPTIONS)
            if options is None:
                continue
            delattr(each, _OPTIONS)
            del each.__init__  # the waiting __init__: the dataclass writes the real one
            dataclasses.dataclass(each, **options)
    return cls


def waiting(cls: type) -> bool:
    """Whether `cls` is a lazy dataclass not made yet."""
    return _OPTIONS in cls.__dict__


def is_lazy(cls: type) -> bool:
    """Whether `cls` was declared with `@lazy_dataclass` (made since, or not)."""
    return _LAZY in cls.__dict__
