# Quick start: `make build` (the main job) and `make test` (the tests); each sets itself up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
MIRROR ?= $(if $(SEMREL_MIRROR),$(SEMREL_MIRROR),$(wildcard ../shared/upstream))

.PHONY: setup build test bench clean

EXTRAS := dev,train,crowd,report,spaces

# torch==2.13.0 first: it resolves to the local CPU wheel; any other spec pulls CUDA wheels.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[$(EXTRAS)]'
	touch $@

setup: $(VENV)/.installed

build: setup
	$(BIN)/python upload.py build --all $(if $(MIRROR),--mirror $(MIRROR))

test: setup
	$(BIN)/python -m pytest -q

clean:
	rm -rf build $(VENV)
