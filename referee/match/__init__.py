"""One match: pure rules of judging (rules) and the play loop that asks seats (play). Imports bots, config, games and the bottom."""
