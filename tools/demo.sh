#!/usr/bin/env bash
# The main job on the embedded default: start the local testbed, converge
# inventories/local (site.yml), start the testbed's Prometheus on the
# PodMonitors the converge made (with the collection's alert rules), run the
# canary, print the proof report and what Prometheus scraped.
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
step "metrics: the testbed's Prometheus, scraping what the pools' PodMonitors select, with the alert rules"
.venv/bin/ansible-playbook -i inventories/local playbooks/alert_rules.yml -e "gpuci_alert_rules_dir=$report_dir/alert-rules"
.venv/bin/python tools/testbed/testbed.py prometheus start --rules "$report_dir"/alert-rules/*.rules.yml
.venv/bin/python tools/demo_metrics.py targets
step "canary: one proof job per lane"
.venv/bin/ansible-playbook -i inventories/local playbooks/canary.yml -e "gpu_canary_report_dir=$report_dir"
step "proof report ($report_dir)"
cat "$report_dir/proof-report.md"
step "metrics: what Prometheus scraped while the canary ran"
.venv/bin/python tools/demo_metrics.py jobs
