"""Claude Code plugins: the bundle's layout read as it is, installed copies in caretz's
data dir, and marketplaces (docs/plugins.md)."""
