"""Drawing model data as plain text for the terminal (no Textual, no rich, no click)."""
