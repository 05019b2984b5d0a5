"""Sample bots: real HTTP servers, one module per game, runnable as
``python -m sample_bots.<module> STRATEGY --port N``."""
