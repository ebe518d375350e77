# One entry point for set-up, the demo, tests and benchmarks.
# `make demo` and `make test` install what they need themselves.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
CHARTS_DIR ?= $(abspath ../shared/charts)
TESTBED := $(BIN)/python tools/testbed/testbed.py
export GPUCI_CHARTS_DIR ?= $(CHARTS_DIR)
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
# The venv's tools and the testbed's helm/kubectl come first on PATH.
export PATH := $(CURDIR)/$(BIN):$(shell bash tools/testbed/build.sh --print-paths 2>/dev/null):$(PATH)

.PHONY: help venv build-testbed testbed-up testbed-down demo test units lint sanity rules-tests integration helm4-tests host-tests \
	docker-tests gpu-mode-tests gpu-bundle gpu-proof bench clean

help:
	@echo "make demo          converge inventories/local on the local testbed, run the canary, print the proof report"
	@echo "make test          all tests: units, lint, sanity, rules-tests, integration, ... (builds what it needs)"
	@echo "make units | lint | sanity | rules-tests | integration | helm4-tests | host-tests | docker-tests | gpu-mode-tests"
	@echo "make gpu-proof     on a host with an NVIDIA GPU: prove an h100 lane (docs/gpu-mode.md)"
	@echo "make gpu-bundle    pack what gpu-proof needs for a GPU host without network (docs/gpu-mode.md)"
	@echo "make testbed-up | testbed-down   start / stop the local cluster"
	@echo "make bench         converge benchmarks (not part of make test)"

$(BIN)/.installed: requirements.txt requirements-test.txt
	@echo "== creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --progress-bar off -r requirements-test.txt
	touch $@

.collections/ansible_collections/gpuci/runners:
	mkdir -p .collections/ansible_collections/gpuci
	ln -sfn ../../.. .collections/ansible_collections/gpuci/runners

venv: $(BIN)/.installed .collections/ansible_collections/gpuci/runners

build-testbed:
	bash tools/testbed/build.sh
	bash tools/testbed/build-images.sh

testbed-up: venv build-testbed
	$(TESTBED) up

testbed-down: venv
	$(TESTBED) down

# Some unit tests run the testbed's helm and nvidia-ctk: built first (cached after), so none skips.
units: venv
	bash tools/testbed/build.sh helm nvidia-ctk
	$(BIN)/pytest -q tests/unit tests/roles tests/awx

lint: venv
	$(BIN)/yamllint -s .
	$(BIN)/ansible-lint
	$(BIN)/antsibull-changelog lint
	$(BIN)/python tools/awx/surveys.py --check

sanity: venv
	bash tests/sanity/run.sh

# The alert rules under promtool (tests/rules): promtool is built first, so a
# machine without it fails here instead of skipping the rules' tests.
rules-tests: venv
	bash tools/testbed/build.sh prometheus
	$(BIN)/pytest -q tests/rules

# Testbeds side by side: each of INTEGRATION_WORKERS pytest-xdist workers has a testbed of its own
# and runs whole modules on it, longest first (tests/integration/conftest.py).
INTEGRATION_WORKERS ?= $(or $(GPUCI_INTEGRATION_WORKERS),2)
integration: venv build-testbed
	$(BIN)/pytest -q --durations=25 -n $(INTEGRATION_WORKERS) --dist loadfile --no-loadscope-reorder tests/integration

# The tests that drive helm, again with helm 4 (HELM4_VERSION in tools/testbed/versions.env):
# its flags and the way it sends objects differ from helm 3's. Jobs through the
# real GitLab Runner are left out (marker real_runner): helm's version changes
# nothing the runner does, and they cost minutes; so are those whose outcome
# no helm call decides (marker helm_agnostic: refused input, the tests' own
# pods, a second setup making the same helm calls).
HELM4_TESTS := $(addprefix tests/integration/,test_helm_field_validation.py test_gitlab_runner.py \
	test_arc_runners.py test_gpu_operator.py test_faults.py test_helm_repository_credentials.py)
helm4-tests: venv build-testbed
	GPUCI_HELM=4 bash tools/testbed/build.sh helm
	GPUCI_HELM=4 PATH="$$(GPUCI_HELM=4 bash tools/testbed/build.sh --print-paths):$$PATH" \
		$(BIN)/pytest -q --durations=10 -m "not real_runner and not helm_agnostic" $(HELM4_TESTS)

# Every tier below, the waiting ones beside the computing ones, ending with one table (tools/test_suite.py).
test: venv
	$(BIN)/python tools/test_suite.py

demo: venv build-testbed
	bash tools/demo.sh

bench: venv build-testbed
	$(BIN)/python tools/testbed/bench.py --json benchmarks/results/testbed.json
	$(BIN)/python benchmarks/converge.py

clean:
	rm -rf $(VENV) .collections .testbed

host-tests: venv
	bash tests/host/run.sh

# GPU mode of the real node: a FAKE driver here, the host's GPU where there is
# one (then the tests marked gpu run too).
gpu-mode-tests: venv build-testbed
	$(BIN)/pytest -q tests/gpu_mode

# Stripped binaries, image archives and wheels in parts that fit a device call.
gpu-bundle: venv build-testbed
	$(BIN)/python tools/gpu/bundle.py build --out .gpu-bundle
	$(BIN)/python tools/gpu/bundle.py check --bundle .gpu-bundle

# With GPUCI_PYTHON and GPUCI_ANSIBLE_PLAYBOOK from an unpacked bundle nothing is built.
gpu-proof: $(if $(GPUCI_PYTHON),,venv build-testbed)
	bash tools/gpu/proof.sh

# The execution environment built by ansible-builder, running the AWX job
# templates against the testbed, in a private Docker engine (docs/testing.md).
docker-tests: venv build-testbed
	bash tests/docker/run.sh
