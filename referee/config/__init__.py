"""The tournament file: keys declared once, validated into frozen dataclasses. Imports games and the bottom (errors, record)."""
