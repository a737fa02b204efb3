# The two commands a fresh machine needs: `make run` (the app) and `make test` (the tests).
# Both create .venv on first use. torch is pinned to the local CPU build before anything else, so
# sentence-transformers never pulls a multi-GB CUDA wheel.
VENV ?= .venv
PY := $(VENV)/bin/python
CORPUS ?= $(abspath ../shared/corpus/papers.jsonl.gz)
TORCH ?= torch==2.13.0
HOST ?= 127.0.0.1
PORT ?= 7860

.PHONY: install run check test bench clean

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "$(TORCH)"
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed

run: install
	PILOT_CORPUS="$(CORPUS)" GRADIO_SERVER_NAME="$(HOST)" GRADIO_SERVER_PORT="$(PORT)" $(PY) app.py

# lint + import order + format, the layering contract of DESIGN.md, types: each must be clean
check: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

test: install check
	bash scripts/ensure-browser.sh
	bash scripts/ensure-redis.sh
	$(PY) -m pytest -q

bench: install
	$(PY) -m pilot.cli bench corpus --corpus "$(CORPUS)"
	$(PY) -m pilot.cli bench workflows --corpus "$(CORPUS)"

clean:
	rm -rf $(VENV) .pilot-cache
