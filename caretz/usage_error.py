"""The one line an error people can fix ends in, and its exit code.

A leaf both the commands and the interactive session use, so neither imports the other.
"""

from __future__ import annotations

import sys

USAGE_ERROR = 2


def fail(message: str) -> int:
    """Write `caretz: message` to stderr; returns the usage-error exit code."""
    sys.stderr.write(f"caretz: {message}\n")
    return USAGE_ERROR
