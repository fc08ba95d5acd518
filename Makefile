PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test bench lint clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/tracecli run sample_programs/seed_cse.py

test: install
	$(BIN)/python -m pytest

bench: install
	$(BIN)/python benchmarks/run.py

lint: install
	$(BIN)/ruff check tracecli tests benchmarks sample_programs

clean:
	rm -rf $(VENV) build *.egg-info
