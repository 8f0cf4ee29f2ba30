"""The one line an error people can fix ends in, and its exit code.

A leaf both the commands and the interactive session use, so neither imports the other.
"""

from __future__ import annotations

import sys

USAGE_ERROR = 2
RUNTIME_FAILURE = 1  # the README's code for a run that failed (a data folder it cannot write)


def fail(message: str) -> int:
    """Write `caretz: message` to stderr; returns the usage-error exit code."""
    sys.stderr.write(f"caretz: {message}\n")
    return USAGE_ERROR


def fail_runtime(message: str) -> int:
    """Write `caretz: message` to stderr; returns the runtime-failure exit code."""
    sys.stderr.write(f"caretz: {message}\n")
    return RUNTIME_FAILURE
