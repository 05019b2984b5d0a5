"""Benchmarks of the referee (not installed): each module prints figures, never asserts."""
