# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Secrets across roles: one converge of GitLab pools and ARC scale sets at -vvv.

Recognisable fake credentials (a GitLab token, a GitHub token, a GitHub App
private key, each with a unique marker) must appear only in the Secrets the
roles made for them: never in the ansible output, a ConfigMap, a Helm
release record (values and manifest, decoded), any other Secret, or the
canary's proof report. The roles' own tests check their role alone; this
one converges them together with site.yml (restricted by tags to the two
runner roles: the GPU Operator is the other tests'), whose one task applies
every role's Secrets, then runs each role's own playbook, which must find
nothing to change and reads the Secrets back, all at -vvv.

The credentials are kept in Ansible Vault, as getting-started.md tells
users to keep them, and opened with --vault-password-file: the GitLab
tokens in an encrypted vars file that the pools reference by template, the
GitHub credentials as inline `!vault` values of the scale sets themselves
(encrypted strings that reach the roles' plans untemplated). That they are
found in their Secrets shows each was decrypted on its way there.

Every run keeps Ansible's facts in a jsonfile fact cache, as an AWX job
template with fact storage does (AWX then keeps them in its database and
shows them with the host): the cache must hold none of the credentials.
"""
from __future__ import annotations

import base64
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml

from gitlab_runner_support import configmap_texts, secret_texts
from helpers import PlaybookRun, ansible_cli, helm_releases

PREFIX = "rh"
MARK = uuid.uuid4().hex[:12]
GITLAB_TOKENS = {"cuda": f"glrt-HYGIENE-{MARK}-cuda", "cpu": f"glrt-HYGIENE-{MARK}-cpu"}
GITHUB_TOKEN = f"ghp_HYGIENE{MARK}"
PEM_MARKER = f"HYGIENE-PEM-{MARK}"
PRIVATE_KEY = ("-----BEGIN RSA PRIVATE KEY-----\n"
               f"MIIEowIBAAKCAQEA{PEM_MARKER}\nbm90LWEta2V5LWp1c3QtYS1tYXJrZXI=\n"
               "-----END RSA PRIVATE KEY-----\n")
MARKERS = [*GITLAB_TOKENS.values(), GITHUB_TOKEN, PEM_MARKER]

NAMESPACES = {"gitlab": f"{PREFIX}-gitlab-runner", "arc_controller": f"{PREFIX}-arc-systems",
              "arc": f"{PREFIX}-arc-runners", "canary": f"{PREFIX}-canary"}
EXTRA_VARS = {
    "gitlab_runner_namespace": NAMESPACES["gitlab"],
    "gitlab_runner_fleet": PREFIX,
    "gitlab_runner_pools": [
        {"name": f"{PREFIX}-l40s", "gpu_class": "l40s", "gpus": 1, "token": "{{ hygiene_gitlab_tokens.cuda }}"},
        {"name": f"{PREFIX}-cpu", "token": "{{ hygiene_gitlab_tokens.cpu }}"},
    ],
    "arc_runners_controller_namespace": NAMESPACES["arc_controller"],
    "arc_runners_controller_release_name": f"{PREFIX}-arc",
    "arc_runners_scale_set_namespace": NAMESPACES["arc"],
    "gpu_canary_namespace": NAMESPACES["canary"],
    "gpu_canary_job_timeout": 30,
    "gpu_canary_fail_on_failed_lane": False,
}
# arc_runners_scale_sets, in a vars file of its own: its credentials are inline !vault values.
SCALE_SETS = f"""\
arc_runners_scale_sets:
  - name: {PREFIX}-a10
    github_config_url: https://github.com/example-org
    github_token: {{github_token}}
    gpu_class: a10
    max_runners: 1
  - name: {PREFIX}-dri-app
    github_config_url: https://github.com/example-org
    github_app_id: 123456
    github_app_installation_id: 654321
    github_app_private_key: {{private_key}}
    gpu_class: dri
    gpu_access: dri
    max_runners: 1
"""
# The Secrets that must hold each marker: (namespace, name).
EXPECTED_HOLDERS = {
    GITLAB_TOKENS["cuda"]: {(NAMESPACES["gitlab"], f"gitlab-runner-{PREFIX}-l40s-token")},
    GITLAB_TOKENS["cpu"]: {(NAMESPACES["gitlab"], f"gitlab-runner-{PREFIX}-cpu-token")},
    GITHUB_TOKEN: {(NAMESPACES["arc"], f"{PREFIX}-a10-github-config")},
    PEM_MARKER: {(NAMESPACES["arc"], f"{PREFIX}-dri-app-github-config")},
}
SITE = "site.yml"
SITE_TAGS = "gitlab_runner,arc_runners"
ROLE_PLAYBOOKS = ("gitlab_runner.yml", "arc_runners.yml")
PLAYBOOKS = (SITE, *ROLE_PLAYBOOKS)
CANARY = "canary.yml"


def _vault(*args: str, plaintext: str | None = None) -> str:
    return subprocess.run([ansible_cli("ansible-vault"), *args], input=plaintext, capture_output=True, text=True,
                          check=True).stdout


def _inline_vault(value: str, password: Path, indent: int = 6) -> str:
    """`value` as ansible-vault encrypt_string writes it, a block indented for a key of a list item."""
    envelope = _vault("encrypt_string", "--vault-password-file", str(password), plaintext=value).splitlines()
    assert envelope[0].strip() == "!vault |", envelope[0]
    return "!vault |\n" + "\n".join(" " * indent + line.strip() for line in envelope[1:] if line.strip())


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> dict:
    """The credentials in Ansible Vault, and the arguments that open them: vars_files and vault_password_file."""
    folder = tmp_path_factory.mktemp("vault")
    password = folder / "vault-password"
    password.write_text(uuid.uuid4().hex)
    tokens = folder / "gitlab_tokens.yml"
    tokens.write_text(yaml.safe_dump({"hygiene_gitlab_tokens": GITLAB_TOKENS}))
    _vault("encrypt", "--vault-password-file", str(password), str(tokens))
    scale_sets = folder / "scale_sets.yml"
    scale_sets.write_text(SCALE_SETS.format(github_token=_inline_vault(GITHUB_TOKEN, password),
                                            private_key=_inline_vault(PRIVATE_KEY, password)))
    written = tokens.read_text() + scale_sets.read_text()
    assert written.startswith("$ANSIBLE_VAULT") and not [m for m in MARKERS if m in written], "not encrypted"
    return {"vars_files": (tokens, scale_sets), "vault_password_file": password}


@pytest.fixture(scope="module")
def converged(testbed, playbooks, vault, tmp_path_factory) -> dict[str, PlaybookRun]:
    """Both runner roles and the canary run at -vvv, removed again at the end; facts kept in a jsonfile cache."""
    report_dir = tmp_path_factory.mktemp("canary_report")
    fact_cache = tmp_path_factory.mktemp("fact_cache")
    options = dict(vault, env={"ANSIBLE_CACHE_PLUGIN": "ansible.builtin.jsonfile",
                               "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(fact_cache)})
    # What the fact cache holds after each run: a later run may replace what an earlier one left.
    cached = {}

    def cache_text():
        return "".join(path.read_text(errors="replace") for path in sorted(fact_cache.rglob("*")) if path.is_file())

    runs = {SITE: playbooks.run(SITE, extra_vars=EXTRA_VARS, verbosity=3, tags=SITE_TAGS, **options)}
    cached[SITE] = cache_text()
    for name in ROLE_PLAYBOOKS:
        runs[name] = playbooks.run(name, extra_vars=EXTRA_VARS, verbosity=3, **options)
        cached[name] = cache_text()
    # The testbed runs no containers, so lanes may fail; only the report's contents matter here.
    runs[CANARY] = playbooks.run(CANARY, verbosity=3, **options,
                                 extra_vars={**EXTRA_VARS, "gpu_canary_report_dir": str(report_dir)})
    cached[CANARY] = cache_text()
    yield {"runs": runs, "report_dir": report_dir, "fact_cache": cached}
    playbooks.run(CANARY, extra_vars={**EXTRA_VARS, "gpu_canary_state": "absent"}, **vault)
    playbooks.run("arc_runners.yml", extra_vars={**EXTRA_VARS, "arc_runners_state": "absent"}, **vault)
    playbooks.run("gitlab_runner.yml", extra_vars={**EXTRA_VARS, "gitlab_runner_state": "absent"}, **vault)


def test_the_converge_succeeded(converged):
    for name in PLAYBOOKS:
        converged["runs"][name].assert_ok()
    assert converged["runs"][SITE].changed > 0, "site.yml should have made the Secrets"


@pytest.mark.parametrize("playbook", ROLE_PLAYBOOKS)
def test_each_role_alone_finds_what_site_yml_made(converged, playbook):
    run = converged["runs"][playbook]
    assert run.changed == 0, run.output[-4000:]


@pytest.mark.parametrize("playbook", [*PLAYBOOKS, CANARY])
def test_no_secret_in_the_vvv_output(converged, playbook):
    run = converged["runs"][playbook]
    # Only -vvv says how the inventory was parsed (a no-op run may start no module, so no connection is logged).
    assert "inventory source with yaml plugin" in run.output, "the run did not log at -vvv"
    leaked = [marker for marker in MARKERS if marker in run.output]
    assert not leaked, f"{playbook} output shows {leaked}"


def test_no_secret_in_any_configmap(converged, testbed):
    leaked = {key: marker for key, text in configmap_texts(testbed).items() for marker in MARKERS if marker in text}
    assert not leaked


def test_no_secret_in_any_helm_release(converged, testbed):
    records = helm_releases(testbed)
    ours = [r for r in records if r["namespace"] in NAMESPACES.values()]
    assert len({(r["namespace"], r["name"]) for r in ours}) == 5, "expected 2 GitLab pools, the ARC controller, 2 scale sets"
    leaked = {(r["namespace"], r["name"], r["version"]): marker for r in records
              for marker in MARKERS if marker in repr(r["config"]) or marker in r["manifest"]}
    assert not leaked


def test_secrets_only_where_the_roles_put_them(converged, testbed):
    texts = secret_texts(testbed)
    for marker, holders in EXPECTED_HOLDERS.items():
        found = {key for key, text in texts.items() if marker in text}
        assert found == holders, f"{marker[:20]}... is in {sorted(found)}, expected only {sorted(holders)}"


def test_no_secret_in_the_proof_report(converged):
    files = [p for p in Path(converged["report_dir"]).rglob("*") if p.is_file()]
    assert files, "the canary wrote no report"
    leaked = {str(p): m for p in files for m in MARKERS if m in p.read_text(errors="replace")}
    assert not leaked


@pytest.mark.parametrize("playbook", [*PLAYBOOKS, CANARY])
def test_no_secret_in_the_fact_cache(converged, playbook):
    """Neither plans nor decisions are facts: a persistent fact cache would keep the Secrets they hold."""
    cached = converged["fact_cache"][playbook]
    encoded = [base64.b64encode(marker.encode()).decode() for marker in (*GITLAB_TOKENS.values(), GITHUB_TOKEN)]
    leaked = [marker for marker in (*MARKERS, *encoded) if marker in cached]
    assert not leaked, f"after {playbook} the fact cache holds {leaked}"
    assert "__converge_changes" not in cached and "_plan" not in cached, f"after {playbook}: {cached[:300]}"
