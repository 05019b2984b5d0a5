"""The files of an output folder: journal, tournament.json, transcripts, timings, atomic writes. Imports schedule and below."""
