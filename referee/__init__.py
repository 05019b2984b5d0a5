"""referee: a tournament referee for card-game bots that talk over HTTP."""

__version__ = "0.1.0"
