# Every target sets up .venv itself: a fresh machine needs only `make demo` or `make test`.
VENV   := .venv
PY     := $(VENV)/bin/python
DEPS   := $(VENV)/.deps-installed
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
# Exact pins: anything looser lets pip pull a multi-GB CUDA torch.
PIP_DEPS := torch==2.13.0 torch-mlir==20261001 numpy pytest pytest-timeout lit filecheck \
            ninja cmake scikit-build-core pybind11 expecttest

.PHONY: build demo test test-runtime test-lit test-py bench clean

$(DEPS): pyproject.toml Makefile
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q $(PIP_DEPS)
	touch $@

# flock: helpers and humans may build from several shells at once.
build: $(DEPS)
	flock build.lock $(PY) -m pip install -q --no-build-isolation --no-deps -e .

demo: build
	$(PY) examples/demo.py

test-runtime: $(DEPS)
	cmake -S runtime -B build/runtime-tests -G Ninja -DNPURT_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build build/runtime-tests
	ctest --test-dir build/runtime-tests --output-on-failure --timeout 120

test-lit: build
	lit -sv test/lit

test-py: build
	$(PY) -m pytest -q test/py --timeout=600 --durations=12

test: test-runtime test-lit test-py

bench: build
	$(PY) bench/run.py

clean:
	rm -rf build build.lock
