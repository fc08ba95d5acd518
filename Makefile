PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test check-samples snapshot-samples symbolic-matrix fuzz-programs coverage bench reach lint clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/tracecli run sample_programs/seed_cse.py

test: install
	$(BIN)/python -m pytest
	$(MAKE) check-samples

# The workflow the README's "In CI" section describes, on our own samples: their traces
# after dce, cse and rename against the snapshots committed in tests/snapshots.
SAMPLES := seed_cse seed_sincos mlp cnn gpt_block main_block dynamic_shapes train_step moe_routing
check-samples: install
	$(BIN)/tracecli check $(SAMPLES:%=sample_programs/%.py) --dir tests/snapshots --junit $(VENV)/samples-junit.xml

snapshot-samples: install
	$(BIN)/tracecli snapshot $(SAMPLES:%=sample_programs/%.py) --dir tests/snapshots -p dce,cse,rename --depth 0

# Every case of the op matrix under symbolic shapes (make test checks a sample): the
# count of each class per family, and the floors test_symbolic_ops.py keeps.
symbolic-matrix: install
	TRACECLI_SYMBOLIC_MATRIX=1 $(BIN)/python -m pytest -q -s -W ignore::UserWarning tests/test_symbolic_ops.py

# Generated programs, many more than make test's sample: FUZZ_EXAMPLES per test of
# tests/test_fuzz_programs.py (programs that break among them). Through the command line,
# by seed, with the failures kept: python -m tests.test_fuzz_programs 0 300 fuzz-failures.
FUZZ_EXAMPLES ?= 200
fuzz-programs: install
	TRACECLI_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest -q tests/test_fuzz_programs.py

# Every OpInfo of torch's op database through tracecli (make test checks a sample): the
# count of each class per family, the defects, and the opaque ops ranked by what they block;
# then the gradients of the modeled ones against torch.autograd, and the ops refused.
coverage: install
	$(BIN)/python -m tests.opinfo.coverage
	$(BIN)/python -m tests.opinfo.gradients

bench: install
	$(BIN)/python benchmarks/run.py

# The reach sets (benchmarks/reach): timm and torchvision models and small functions in
# the style of compiler test suites, through tracecli and through torch.compile; a
# summary table. timm and torchvision are for measuring only, not requirements.
# Options through REACH_ARGS, e.g. make reach REACH_ARGS="--set functions -k numpy".
reach: install
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps timm==1.0.31 torchvision==0.28.0 pillow
	$(BIN)/python -m benchmarks.reach.run $(REACH_ARGS)

lint: install
	$(BIN)/ruff check tracecli tests benchmarks sample_programs

clean:
	rm -rf $(VENV) build *.egg-info
