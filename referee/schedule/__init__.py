"""Which matches a tournament plays (pure, lazy): one class per format. Imports config and the bottom."""
