# Two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV ?= .venv
PY := $(VENV)/bin/python
CLIP ?=
OUT ?= demo_out
# Older Blender releases for the compatibility run (.ci/run): make test-blender BPY=4.5.15
BPY ?= 4.5.15
# Blender 5.1+ runs Python 3.13 with numpy 2 (make test-bpy5.2): python3.13 on PATH, else pyenv's.
# A candidate counts only if it runs (a pyenv shim on PATH may exist without 3.13 being selected).
PYTHON313 ?= $(shell for p in "$$(command -v python3.13)" "$${PYENV_ROOT:-$$HOME/.pyenv}"/versions/3.13*/bin/python \
	/root/.pyenv/versions/3.13*/bin/python; do [ -x "$$p" ] && "$$p" -c 'import sys; assert sys.version_info[:2] == (3, 13)' \
	>/dev/null 2>&1 && { echo "$$p"; break; }; done)
VENV52 := .venv-bpy5.2

.PHONY: demo test test-core test-blender test-bpy5.2 lint format build clean

$(VENV)/.installed: requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

demo: $(VENV)/.installed
	$(PY) scripts/extract_keyframes.py $(if $(CLIP),"$(CLIP)",--demo) -o $(OUT) --report $(OUT)/report.json --plot $(OUT)/error.png --sheet $(OUT)/sheet.png

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

# The whole suite (core, Blender, scripts) on bpy 5.2 / Python 3.13 / numpy 2.x (requirements-bpy5.2.txt).
test-bpy5.2: $(VENV52)/.installed
	$(VENV52)/bin/python -m pytest -q

$(VENV52)/.installed: requirements-bpy5.2.txt
	@test -n "$(PYTHON313)" || { echo "make test-bpy5.2: Python 3.13 not found (tried python3.13 on PATH and" \
		"~/.pyenv/versions/3.13*); install it (pyenv install 3.13) or pass PYTHON313=/path/to/python3.13" >&2; exit 1; }
	$(PYTHON313) -m venv $(VENV52)
	$(VENV52)/bin/python -m pip install --quiet --upgrade pip
	$(VENV52)/bin/python -m pip install --quiet -r requirements-bpy5.2.txt
	touch $@

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
