"""caretz: a terminal coding agent with a measured loop guard."""

__version__ = "0.1.0"
