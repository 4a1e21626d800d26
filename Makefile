# Quick start: `make build` (the main job) and `make test` (every test not marked slow, minutes);
# each sets itself up. `make test-slow`: the tests marked slow (trainings, servers, fresh
# virtualenvs, the docs' pages run as written). CI (.ci/run) runs make lint, test and test-slow.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup servers build test test-slow lint clean

EXTRAS := dev,train,crowd,report,spaces,mteb,backends

# torch==2.13.0 first: it resolves to the local CPU wheel; any other spec pulls CUDA wheels.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[$(EXTRAS)]'
	touch $@

# Label Studio (the annotation tests' server) pins pyarrow <25 and Django 5.2: a virtualenv of its own.
LS_VENV := .venv-label-studio
$(LS_VENV)/.installed:
	$(PYTHON) -m venv $(LS_VENV)
	$(LS_VENV)/bin/pip install -q --upgrade pip
	$(LS_VENV)/bin/pip install -q label-studio==1.23.2
	touch $@

# Potato (the Potato round trip's server): its own Flask, pandas and scikit-learn pins, a virtualenv of its own.
POTATO_VENV := .venv-potato
$(POTATO_VENV)/.installed:
	$(PYTHON) -m venv $(POTATO_VENV)
	$(POTATO_VENV)/bin/pip install -q --upgrade pip
	$(POTATO_VENV)/bin/pip install -q potato-annotation==2.12.1
	touch $@

setup: $(VENV)/.installed

servers: $(LS_VENV)/.installed $(POTATO_VENV)/.installed

build: $(VENV)/.installed  # the annotation tools' servers are for the tests only
	$(BIN)/semrel build  # the mirror: $$SEMREL_MIRROR, else ../shared/upstream, else the upstream URLs

# pytest-xdist: a worker per core (at most 4); the tests of one file stay in one worker (each docs
# page is a unit of its own), the costliest units first (tests/conftest.py), the rest as collected.
XDIST := -n auto --maxprocesses 4 --dist loadfile --no-loadscope-reorder

test: setup
	$(BIN)/python -m pytest -q -m "not slow" --durations=15 $(XDIST)

test-slow: setup servers
	$(BIN)/python -m pytest -q -m slow --durations=25 $(XDIST)

lint: $(VENV)/.installed
	$(BIN)/ruff check .

clean:
	rm -rf build $(VENV) $(LS_VENV) $(POTATO_VENV)
