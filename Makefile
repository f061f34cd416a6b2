# Two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV ?= .venv
PY := $(VENV)/bin/python
CLIP ?=
OUT ?= demo_out
# Older Blender releases for the compatibility run (.ci/run): make test-blender BPY=4.5.15
BPY ?= 4.5.15

.PHONY: demo test test-core test-blender lint format build clean

$(VENV)/.installed: requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

demo: $(VENV)/.installed
	$(PY) scripts/extract_keyframes.py $(if $(CLIP),"$(CLIP)",--demo) -o $(OUT) --report $(OUT)/report.json --plot $(OUT)/error.png

test: $(VENV)/.installed
	$(PY) -m ruff check .
	$(PY) -m pytest -q

test-core: $(VENV)/.installed
	$(PY) -m pytest -q tests/core

# Blender tests on another bpy release, in its own environment (4.2 needs numpy < 2).
test-blender:
	$(PYTHON) -m venv .venv-bpy$(BPY)
	.venv-bpy$(BPY)/bin/python -m pip install --quiet --upgrade pip
	.venv-bpy$(BPY)/bin/python -m pip install --quiet bpy==$(BPY) numpy==1.26.4 scipy==1.17.1 pytest==9.2.0 hypothesis==6.170.15
	.venv-bpy$(BPY)/bin/python -m pytest -q tests/blender

lint: $(VENV)/.installed
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: $(VENV)/.installed
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

build: $(VENV)/.installed
	mkdir -p dist
	$(PY) scripts/build_extension.py dist

clean:
	rm -rf $(VENV) .venv-bpy* dist $(OUT)
