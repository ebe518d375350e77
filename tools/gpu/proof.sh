#!/usr/bin/env bash
# make gpu-proof: on a host with an NVIDIA GPU, prove its lane (h100, h200) for real.
# Starts the testbed in GPU mode (real-0 gets the host's GPU: container_toolkit
# role, NVIDIA runtime, CDI, device plugin), converges inventories/gpu-proof
# (a GitLab pool and an ARC scale set of the host GPU's built-in class, and a
# cpu-control pool), runs the canary in GitLab mode (the GPU pool's job through the
# real GitLab Runner, its negative control on the cpu-control pool; the ARC lane by
# the canary Job), runs the runtime-class negative control, looks for
# /dev/dri, prints the report, stops everything. GPUCI_PROOF_GPU_CLASS names the class instead
# (a FAKE-driver try, with the class's product in GPUCI_PROOF_EXTRA_VARS).
# Tools come from the venv, or from an unpacked bundle (docs/gpu-mode.md):
# GPUCI_PYTHON and GPUCI_ANSIBLE_PLAYBOOK name them.
set -euo pipefail
cd "$(dirname "$0")/../.."
export ANSIBLE_CONFIG=$PWD/ansible.cfg
export GPUCI_TESTBED_GPU=${GPUCI_TESTBED_GPU:-on}
python=${GPUCI_PYTHON:-.venv/bin/python}
playbook=${GPUCI_ANSIBLE_PLAYBOOK:-.venv/bin/ansible-playbook}
report_dir=${GPUCI_REPORT_DIR:-$PWD/reports/gpu-proof}
# Extra variables (JSON) for both playbooks, e.g. to try the flow on the FAKE driver.
extra_vars=${GPUCI_PROOF_EXTRA_VARS:-"{}"}
started=$SECONDS
# helm and kubectl of the testbed's build cache (GPUCI_TESTBED_CACHE: the bundle's)
PATH="$(bash tools/testbed/build.sh --print-paths):$PATH"
# The collection runs from this checkout (what `make venv` links, for a bundle run too).
if [ ! -e .collections/ansible_collections/gpuci/runners ]; then
  mkdir -p .collections/ansible_collections/gpuci
  ln -sfn ../../.. .collections/ansible_collections/gpuci/runners
fi

step() { printf '\n== [%4ds] %s\n' $((SECONDS - started)) "$*"; }

# The lane's class is the host GPU's built-in class (the lent machine is an H100 or an H200).
gpu_class=${GPUCI_PROOF_GPU_CLASS:-$("$python" tools/gpu/gpu_class.py)}
extra_vars=$("$python" -c 'import json, sys; print(json.dumps({**json.loads(sys.argv[1]), "gpuci_proof_gpu_class": sys.argv[2]}))' "$extra_vars" "$gpu_class")

step "testbed up in GPU mode (the $gpu_class lane)"
"$python" tools/testbed/testbed.py up --ttl 1200
if [ -z "${GPUCI_KEEP_TESTBED:-}" ]; then
  trap '"$python" tools/testbed/testbed.py down' EXIT
fi
step "converge inventories/gpu-proof ($gpu_class GitLab pool, $gpu_class ARC scale set)"
"$playbook" -i inventories/gpu-proof playbooks/site.yml -e "$extra_vars"
step "canary: the GitLab pipeline (GPU job, negative control) and one canary Job per lane"
"$playbook" -i inventories/gpu-proof playbooks/canary.yml -e "$extra_vars" -e "gpu_canary_report_dir=$report_dir"
step "negative control"
"$python" tools/gpu/negative_control.py | tee "$report_dir/negative-control.txt"
step "render nodes for the dri lane"
if ls /dev/dri/renderD* >/dev/null 2>&1; then
  echo "render nodes: $(ls /dev/dri/renderD*); the dri lane is not wired into GPU mode yet" | tee "$report_dir/dri.txt"
else
  echo "no /dev/dri/renderD* on this host: the dri lane cannot be proved here" | tee "$report_dir/dri.txt"
fi
step "proof report ($report_dir), $((SECONDS - started)) s since start"
cat "$report_dir/proof-report.md"
