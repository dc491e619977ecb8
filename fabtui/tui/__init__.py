"""The Textual app: the live fabric view and its screens.

Only this package imports Textual (import-linter keeps the rest headless). Screens read
workspace objects and its live status model (`fabtui.views.status`); the I/O runs in workers
that report back by messages.
"""
