"""The referee command: parse, call one function, print, exit (the only place with exit codes). Imports every layer."""
