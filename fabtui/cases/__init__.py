"""The case library: cases as markdown, SQLite as the source of truth, a derived search index,
filing from sessions and similar-case matching."""
