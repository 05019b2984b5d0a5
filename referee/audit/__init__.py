"""Checks after and around a run: verify, replay, check-bot. Imports run and below."""
