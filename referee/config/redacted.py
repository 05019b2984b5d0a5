"""A secret value (a bot's token) that no repr, str or log line shows."""

from __future__ import annotations


class Secret:
    """A token: usable as a string by the HTTP layer, never shown by repr or str."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The token itself, for the Authorization header only."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


__all__ = ["Secret"]
