"""The test suite: one package, imported from the repository root (``tests.support...``)."""
