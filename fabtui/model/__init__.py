"""Pydantic models shared by every layer. Imports nothing from the rest of fabtui."""
