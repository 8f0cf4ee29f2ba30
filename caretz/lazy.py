"""Lazy module imports, declared at the top of the module that uses them.

In the spirit of PEP 810's `lazy import` (Python 3.15), for Python 3.11:

    store = lazy_module("caretz.session.store")  # not needed before the first request

names the import where every other import of the module is, so the import graph stays
declared in one place (tests/test_architecture.py reads it), while the module itself is
imported only when an attribute is first read (`store.SessionStore`). A module already
imported when the declaration runs is returned as it is.

The type checker is given the module itself, by the same name, and never runs the declaration:

    if TYPE_CHECKING:
        from caretz.session import store
    else:
        store = lazy_module("caretz.session.store")  # not needed before the first request
"""

from __future__ import annotations

import sys
from types import ModuleType


class LazyModule:
    """A stand-in for a module not imported yet: the first attribute read imports it (under
    the import system's lock for that module, so threads that race get the one module), and
    every read goes to the module, so a later change to it (a test's patch) is seen."""

    __slots__ = ("_lazy_name", "_lazy_loaded")

    def __init__(self, name: str) -> None:
        self._lazy_name = name
        self._lazy_loaded: ModuleType | None = None

    def __getattr__(self, attribute: str) -> object:
        # Only names the stand-in lacks get here, that is every name but its two slots.
        return getattr(self._lazy_module(), attribute)

    def __dir__(self) -> list[str]:
        return dir(self._lazy_module())

    def __repr__(self) -> str:
        state = "loaded" if self._lazy_loaded is not None else "not loaded yet"
        return f"<lazy module {self._lazy_name!r} ({state})>"

    def _lazy_module(self) -> ModuleType:
        if self._lazy_loaded is None:
            # The import statement's own path, not importlib.import_module: only it is seen
            # by `python -X importtime`, which the start-up checks read.
            __import__(self._lazy_name)
            self._lazy_loaded = sys.modules[self._lazy_name]
        return self._lazy_loaded


def lazy_module(name: str) -> object:
    """The module `name` (absolute), imported when one of its attributes is first read.

    Typed `object`, so a declaration the type checker is not given the module's own import
    for (see the module's doc) fails the check at its first use instead of reading as Any."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    return LazyModule(name)
