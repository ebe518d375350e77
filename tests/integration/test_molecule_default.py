# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""`molecule test` of the default scenario runs whole against the testbed, as a user runs it.

create reuses the running testbed (and destroy leaves it running, since
create did not start it); check, converge, idempotence (Molecule fails it on
any change), verify. teardown.yml then removes what converge made, and the
cluster must hold nothing it did not hold before but the charts' CRDs, which
Helm keeps by design.
"""
from __future__ import annotations

import os
import re
import subprocess

import helpers
from helpers import REPO_ROOT, helm_releases

STAGES = ["destroy", "syntax", "create", "check", "converge", "idempotence", "verify", "destroy"]
# API definitions the charts bring: Helm keeps them, and teardown.yml removes
# them only when asked (*_remove_crds), so they may outlive the scenario.
KEPT_BY_DESIGN = ("CustomResourceDefinition", "APIService")


def test_molecule_test_runs_every_stage_and_teardown_leaves_nothing(testbed, playbooks):
    before = set(testbed.snapshot())
    env = dict(os.environ, PY_COLORS="0", NO_COLOR="1", ANSIBLE_FORCE_COLOR="0",
               PATH=f"{REPO_ROOT / '.venv' / 'bin'}:{helpers.testbed_bin_path()}:{os.environ.get('PATH', '')}")
    proc = subprocess.run([str(REPO_ROOT / ".venv" / "bin" / "molecule"), "test", "-s", "default"], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=1200, check=False)
    output = proc.stdout + proc.stderr
    try:
        assert proc.returncode == 0, output[-4000:]
        assert re.findall(r"\[default > (\w+)\] Executing", output) == STAGES, output[-4000:]
        assert helm_releases(testbed), "converge made no Helm release"
    finally:
        playbooks.run("teardown.yml").assert_ok()
    assert not helm_releases(testbed)
    left = sorted(key for key in set(testbed.snapshot()) - before if not key[0].endswith(KEPT_BY_DESIGN))
    assert not left, left
