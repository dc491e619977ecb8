"""Widgets of the fabric screen."""
