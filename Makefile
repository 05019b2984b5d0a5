# Quick start: `make run` plays configs/nimmt_plus.toml with the sample bots; `make test` runs the suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CONFIG ?= configs/nimmt_plus.toml

.PHONY: run test check bench games clean

$(BIN)/referee: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(BIN)/referee

run: $(BIN)/referee
	$(BIN)/referee run $(CONFIG)

test: $(BIN)/referee
	$(BIN)/python -m pytest

check: $(BIN)/referee
	$(BIN)/referee check $(CONFIG)

games: $(BIN)/referee
	$(BIN)/referee games

bench: $(BIN)/referee
	$(BIN)/python -m referee.bench

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
