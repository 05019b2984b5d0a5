"""Tournaments: schedule (pure) -> runner (async) -> standings (pure) -> publish."""
