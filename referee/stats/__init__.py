"""Numbers from the journal's columns (pure, numpy): standings, intervals, ratings, sequential tests. Imports store and below."""
