"""Headless view models: what the faces show, computed without a face.

The fabric map (`fabricmap`), the live status model and its poller (`status`), the links between
findings, runbooks and cases (`crosslinks`), a guided session as a screen draws it (`guided`), and
the probe console's tallies (`console`). They never import Textual, rich or click, and none needs
a `Workspace`: the workspace feeds them, the app draws them.
"""
