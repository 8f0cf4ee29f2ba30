"""caretz: a terminal coding agent with a measured loop guard.

`from caretz import Session` is the Python API (caretz.api, docs/python-api.md); it is
loaded on that first use, so `import caretz` and the CLI's start-up never load it.
"""

import importlib  # loaded with the import system itself

__version__ = "0.1.0"

# The API's names, found in caretz.api when first asked for.
_API = ("Session", "RunResult")


def __getattr__(name: str) -> object:
    if name in _API:
        # By name, not lazy_module: the package's root stays a leaf of the import graph.
        return getattr(importlib.import_module("caretz.api"), name)
    raise AttributeError(f"module 'caretz' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
