# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A cluster whose API server cannot be reached fails the run at its first read, saying so, before any change.

There is no probe of its own: the roles' first read (gpuci.runners.k8s_reads)
names the kubeconfig and context it used. The kubeconfig here points at a
port nothing listens on, so no cluster is needed.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def test_site_fails_at_the_first_read_naming_the_kubeconfig(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "gpuci-testbed",
        "clusters": [{"name": "closed", "cluster": {"server": "https://127.0.0.1:9", "insecure-skip-tls-verify": True}}],
        "users": [{"name": "nobody", "user": {"token": "not-a-real-token"}}],
        "contexts": [{"name": "gpuci-testbed", "context": {"cluster": "closed", "user": "nobody"}}],
    }))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               GPUCI_KUBECONFIG=str(kubeconfig))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(REPO / "inventories" / "local"),
           str(REPO / "playbooks" / "site.yml")]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output[-4000:]
    assert f"Cannot reach the Kubernetes API server with kubeconfig {kubeconfig}" in output, output[-4000:]
    assert "Connection refused" in output, output[-4000:]
    assert re.search(r"testbed\s*:.*changed=0 ", output), output[-2000:]
    assert "not-a-real-token" not in output
