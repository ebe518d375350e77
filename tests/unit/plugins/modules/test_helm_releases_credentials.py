# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpuci.runners.helm_releases run by ansible-playbook at -vvv with a chart repository URL holding credentials.

A stand-in helm (binary_path) records the arguments of each of its runs, as
`ps` would show them, and installs nothing; no cluster is needed. Neither
the password nor the URL holding it may be in any helm argv, and the
password is masked in the task's output, the invocation's copy of the
arguments included.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]
PASSWORD = "s3cret-MODULE-pass"
URL = f"https://ci-reader:{PASSWORD}@charts.example.com/stable"
# Answers helm's version, list, repo update, pull (an empty chart file), upgrade; appends its argv to a log.
FAKE_HELM = '''#!{python}
import json, os, sys
args = sys.argv[1:]
with open({log!r}, "a") as log:
    log.write(json.dumps(args) + "\\n")
if args[0] == "version":
    print("v3.22.0")
elif args[0] == "list":
    print("[]")
elif args[0] == "pull":
    destination = args[args.index("--destination") + 1]
    open(os.path.join(destination, "gitlab-runner-0.86.0.tgz"), "w").close()
'''


def test_the_password_is_in_no_helm_argv_and_masked_in_the_output(tmp_path):
    log = tmp_path / "argv.log"
    helm = tmp_path / "helm"
    helm.write_text(FAKE_HELM.format(python=sys.executable, log=str(log)))
    helm.chmod(0o755)
    task = {"name": "releases", "gpuci.runners.helm_releases": {
        "binary_path": str(helm), "releases": [{"name": "gitlab-runner-l40s", "namespace": "ci", "chart": "gitlab-runner",
                                                "chart_version": "0.86.0", "chart_repo_url": URL}]}}
    playbook = tmp_path / "releases.yml"
    playbook.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "tasks": [task]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           "-e", "ansible_python_interpreter=" + sys.executable, str(playbook), "-vvv"],
                          cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-3000:]
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert [args[0] for args in runs] == ["version", "list", "repo", "pull", "upgrade"], runs
    assert not [args for args in runs if PASSWORD in " ".join(args) or "ci-reader" in " ".join(args)]
    # At -vvv Ansible shows the task's invocation: the URL is there, its password masked.
    assert "https://ci-reader:********@charts.example.com/stable" in output, output[-3000:]
    assert PASSWORD not in output
