# gridpath: `make run` serves on 127.0.0.1:8000, `make test` runs lint and every test.
# Both create .venv on first use; later runs reinstall only when pyproject.toml changes.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000
DATA   ?= ./data
# make loadtest USERS=20 SPAWN_RATE=10 DURATION=15s
USERS      ?= 20
SPAWN_RATE ?= 10
DURATION   ?= 60s

.PHONY: run test lint pytest cluster-test bench loadtest schemathesis clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "gridpath needs Python 3.11 or newer; set PYTHON=python3.x" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Runtime dependencies only (make run).
$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

# Runtime plus the dev extra: test tools, linters, benchmark peers (make test, make bench),
# and the Python client (clients/python, its own distribution), which tests/client drives.
$(VENV)/.installed-dev: pyproject.toml clients/python/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]' -e clients/python
	@touch $@ $(VENV)/.installed-run

run: $(VENV)/.installed-run
	$(BIN)/python -m service --host $(HOST) --port $(PORT) --data-dir $(DATA)

test: lint pytest cluster-test

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check service tests loadtests clients/python
	$(BIN)/ruff format --check service tests loadtests clients/python
	$(BIN)/mypy

pytest: $(VENV)/.installed-dev
	$(BIN)/python -m pytest

# Redis (valkey-server from the dev extra, or Debian's redis-server), three replicas
# and HAProxy on loopback: uploads, edits, a replica killed under load, Redis
# restarted (tests/cluster). Skips, saying why, without haproxy; .ci/run installs it.
cluster-test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -m cluster tests/cluster

# Engine benchmark against pyastar2d and tcod, the cluster tables (build cost,
# cluster vs plain heuristics), JPS vs A*, landmarks vs octile, unit sizes vs
# one-cell units, movement profiles vs the default, links, the A* variants and path repair,
# what each answer format costs a batch,
# the per-call floor, gridpath against warthog
# (WARTHOG_BENCH_ARGS="--warthog DIR", the C++ binaries built outside the
# repository), auto's pick and what traces cost; all print tables
# (see docs/benchmarks.md, "How they are run").
bench: $(VENV)/.installed-dev
	$(BIN)/python -m loadtests.bench_engine $(BENCH_ARGS)
	$(BIN)/python -m loadtests.bench_clusters $(CLUSTER_BENCH_ARGS)
	$(BIN)/python -m loadtests.bench_jps $(JPS_BENCH_ARGS)
	$(BIN)/python -m loadtests.bench_landmarks $(LANDMARK_BENCH_ARGS)
	$(BIN)/python -m loadtests.bench_units $(UNIT_BENCH_ARGS)
	$(BIN)/python -m loadtests.bench_profiles $(PROFILE_BENCH_ARGS)
	$(BIN)/python -m loadtests.bench_links $(LINK_BENCH_ARGS)
	$(BIN)/python -m loadtests.bench_toolbox $(TOOLBOX_BENCH_ARGS)
	$(BIN)/python -m loadtests.bench_formats
	$(BIN)/python -m loadtests.bench_floor
	$(BIN)/python -m loadtests.bench_warthog --repeat 1 $(WARTHOG_BENCH_ARGS)
	$(BIN)/python -m loadtests.bench_auto
	$(BIN)/python -m loadtests.bench_trace --rounds 1

# Starts the service on loopback, runs locust headless, writes loadtests/results/*.csv,
# fails on any failed request or a p99 above the threshold (see loadtests/loadtest.py).
loadtest: $(VENV)/.installed-dev
	$(BIN)/python -m loadtests.loadtest --users $(USERS) --spawn-rate $(SPAWN_RATE) --duration $(DURATION)

# The API against its own OpenAPI document: schemathesis on a real server (all
# operations, the stateful phase, deterministic cases; see .ci/schemathesis).
schemathesis: $(VENV)/.installed-dev
	.ci/schemathesis

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
