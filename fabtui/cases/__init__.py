"""The case library: past incidents as cases, their store, markdown files and search."""
