# Quick start: `make run` plays configs/nimmt_plus.toml with the sample bots; `make test` runs the suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CONFIG ?= configs/nimmt_plus.toml
SUDO := $(shell [ "$$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && echo sudo)

.PHONY: run samples test lint browser bubblewrap check bench bench-scale games clean schemas

# A "compat" editable install puts the repository on sys.path with one .pth line: each Python
# process of the venv starts ~25 ms sooner than with setuptools' default import finder (the
# suite starts ~1,500: bots, runs, workers). Where a setuptools has dropped that mode, the default.
$(BIN)/referee: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install --quiet -e '.[test,fast]' --config-settings editable_mode=compat \
	  || $(BIN)/python -m pip install --quiet -e '.[test,fast]'
	touch $(BIN)/referee

# `make run` writes to out/<config name>/ (ignored by git), so it never rewrites the committed
# samples under leaderboards/; `make samples` re-publishes those from every file in configs/.
RUN_OUTPUT ?= out/$(basename $(notdir $(CONFIG)))

run: $(BIN)/referee bubblewrap
	$(BIN)/referee run $(CONFIG) --output $(RUN_OUTPUT) --fresh

samples: $(BIN)/referee bubblewrap
	for c in configs/*.toml; do $(BIN)/referee run $$c --quiet --fresh || exit 1; done

# Two passes at once. The tests that race no bot's deadline run on every core (two workers
# per core: tests/conftest.py) at idle CPU priority (`chrt --idle 0`: they get a core only
# when nothing else wants it); the ones marked `serial` run one at a time at normal priority,
# so the load of the first never delays an honest answer of the second, which leaves the
# cores to the first while it waits out its deadlines. The serial pass's report follows; it
# keeps its own cache (`pytest -m serial --lf -o cache_dir=.pytest_cache/serial` reruns its failures).
# Each test module declares `pytestmark = pytest.mark.parallel` or `serial` (a test of a
# parallel module may be marked `serial`); tests/conftest.py refuses one that does not.
# The target fails if either pass did.
# The suite starts some 1,500 Python processes (runs, bots, workers): bytecode caches are written
# (in __pycache__/, ignored by git) even where PYTHONDONTWRITEBYTECODE is set, so that each one
# loads the package instead of compiling it, and each pass reuses pytest's rewritten tests.
IDLE := $(shell chrt --idle 0 true 2>/dev/null && echo chrt --idle 0 || echo nice -n 19)

test: $(BIN)/referee browser bubblewrap
	unset PYTHONDONTWRITEBYTECODE; status=0; log=$$(mktemp); \
	$(BIN)/python -m pytest -m serial -o cache_dir=.pytest_cache/serial >$$log 2>&1 & serial=$$!; \
	$(IDLE) $(BIN)/python -m pytest -m "not serial" -n auto || status=1; \
	wait $$serial || status=1; cat $$log; rm -f $$log; \
	exit $$status

lint: $(BIN)/referee
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

# tests/test_page.py opens the leaderboard page in the system Chromium (no `playwright install`).
browser:
	command -v chromium >/dev/null 2>&1 || ($(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

# Managed bots run in a bubblewrap cage (docs/cage.md); without it they are not isolated.
bubblewrap:
	command -v bwrap >/dev/null 2>&1 || ($(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap)

check: $(BIN)/referee bubblewrap
	$(BIN)/referee check $(CONFIG)

games: $(BIN)/referee
	$(BIN)/referee games

# docs/schema/ is a copy of the schemas shipped in the package under their published names:
# referee/schemas/ and each game's referee/games/<id>/schema.json as games/<id>.json; tests/test_schema.py checks it.
schemas:
	rm -rf docs/schema && mkdir -p docs/schema/games && cp -r referee/schemas/. docs/schema/
	for f in referee/games/*/schema.json; do g=$${f%/schema.json}; cp $$f docs/schema/games/$${g##*/}.json; done

bench: $(BIN)/referee bubblewrap
	$(BIN)/python -m benchmarks.speed
	$(BIN)/python -m benchmarks.cage

# Figures as a tournament grows: memory of a 1,000,000-match run vs a 1,000-match one;
# decisions/s and referee CPU per decision on 1, 2 and 4 Dask worker processes (one fast bot server)
bench-scale: $(BIN)/referee
	$(BIN)/python -m benchmarks.scale
	$(BIN)/python -m benchmarks.workers
	$(BIN)/python -m benchmarks.publish
	$(BIN)/python -m benchmarks.verify

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
