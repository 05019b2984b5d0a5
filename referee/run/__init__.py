"""Runs a tournament: lineup, executors (local, Dask), sink, live publishing, stopping, the run report. Imports report and below."""
