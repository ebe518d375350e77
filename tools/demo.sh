#!/usr/bin/env bash
# The main job on the embedded default: start the local testbed, converge
# inventories/local (site.yml), run the canary and print the proof report.
# The testbed is stopped at the end unless GPUCI_KEEP_TESTBED=1.
set -euo pipefail
cd "$(dirname "$0")/.."
export ANSIBLE_CONFIG=$PWD/ansible.cfg
report_dir=${GPUCI_REPORT_DIR:-$PWD/reports}

.venv/bin/python tools/testbed/testbed.py up
if [ -z "${GPUCI_KEEP_TESTBED:-}" ]; then
  trap '.venv/bin/python tools/testbed/testbed.py down' EXIT
fi

step() { printf '\n== %s\n' "$*"; }
step "converge inventories/local (GPU Operator, GitLab runner pools, ARC scale sets)"
.venv/bin/ansible-playbook -i inventories/local playbooks/site.yml
step "canary: one proof job per lane"
.venv/bin/ansible-playbook -i inventories/local playbooks/canary.yml -e "gpu_canary_report_dir=$report_dir"
step "proof report ($report_dir)"
cat "$report_dir/proof-report.md"
