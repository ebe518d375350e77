# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Secrets across roles: one converge of GitLab pools and ARC scale sets at -vvv, their removals at -v.

Recognisable fake credentials (a GitLab token, a GitHub token, a GitHub App
private key, each with a unique marker) must appear only in the Secrets the
roles made for them: never in the ansible output, a ConfigMap, a Helm
release record (values and manifest, decoded), any other Secret, or the
canary's proof report. Never in any form either: each is looked for as it
is and in base64, the form a Secret's data takes (a deleted Secret comes
back whole from the API server), at each offset of a larger value
(secret_forms.py). The roles' own tests check their role alone; this
one converges them together with site.yml (restricted by tags to the two
runner roles: the GPU Operator is the other tests'), whose one task applies
every role's Secrets, then runs each role's own playbook, which must find
nothing to change and reads the Secrets back, all at -vvv. Then the
removals, at -v: site.yml with a GitLab pool and an ARC scale set marked
absent (their token and credentials Secrets deleted), and the teardown of
the canary and both roles (state absent), every output checked too.

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

import subprocess
import uuid
from pathlib import Path

import pytest
import yaml

from gitlab_runner_support import configmap_texts, secret_texts
from helpers import ansible_cli, helm_releases
from secret_forms import forms_found, leaks

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
    state: {{dri_app_state}}
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
# The removals, in order, each at -v: (its name, playbook, extra vars over EXTRA_VARS, its scale sets file).
# The first marks the cpu pool and the dri-app scale set absent, so it deletes their Secrets.
POOL_REMOVAL = "site.yml, a pool and a scale set absent"
REMOVED_POOL = [EXTRA_VARS["gitlab_runner_pools"][0], dict(EXTRA_VARS["gitlab_runner_pools"][1], state="absent")]
REMOVALS = (
    (POOL_REMOVAL, SITE, {"gitlab_runner_pools": REMOVED_POOL}, "scale_sets_removal"),
    ("canary.yml, absent", CANARY, {"gpu_canary_state": "absent"}, "scale_sets"),
    ("arc_runners.yml, absent", "arc_runners.yml", {"arc_runners_state": "absent"}, "scale_sets"),
    ("gitlab_runner.yml, absent", "gitlab_runner.yml", {"gitlab_runner_state": "absent"}, "scale_sets"),
)
# The Secrets the removal deletes, whose markers it must not show.
REMOVED_HOLDERS = {(NAMESPACES["gitlab"], f"gitlab-runner-{PREFIX}-cpu-token"),
                   (NAMESPACES["arc"], f"{PREFIX}-dri-app-github-config")}


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
    """The credentials in Ansible Vault, and the arguments that open them: vars_files and vault_password_file.

    ``removal_vars_files``: the same, with the dri-app scale set marked absent.
    """
    folder = tmp_path_factory.mktemp("vault")
    password = folder / "vault-password"
    password.write_text(uuid.uuid4().hex)
    tokens = folder / "gitlab_tokens.yml"
    tokens.write_text(yaml.safe_dump({"hygiene_gitlab_tokens": GITLAB_TOKENS}))
    _vault("encrypt", "--vault-password-file", str(password), str(tokens))
    files = {}
    for name, dri_app_state in (("scale_sets", "present"), ("scale_sets_removal", "absent")):
        files[name] = folder / f"{name}.yml"
        files[name].write_text(SCALE_SETS.format(github_token=_inline_vault(GITHUB_TOKEN, password),
                                                 private_key=_inline_vault(PRIVATE_KEY, password),
                                                 dri_app_state=dri_app_state))
    written = tokens.read_text() + "".join(path.read_text() for path in files.values())
    assert written.startswith("$ANSIBLE_VAULT") and not leaks(written, MARKERS), "not encrypted"
    return {"vars_files": (tokens, files["scale_sets"]), "vault_password_file": password,
            "removal_vars_files": {name: (tokens, path) for name, path in files.items()}}


def _options(vault: dict) -> dict:
    """The arguments of playbooks.run that open the Vault."""
    return {"vars_files": vault["vars_files"], "vault_password_file": vault["vault_password_file"]}


@pytest.fixture(scope="module")
def converged(testbed, playbooks, vault, tmp_path_factory) -> dict:
    """Both runner roles and the canary run at -vvv, removed again at the end; facts kept in a jsonfile cache."""
    report_dir = tmp_path_factory.mktemp("canary_report")
    fact_cache = tmp_path_factory.mktemp("fact_cache")
    cache_env = {"ANSIBLE_CACHE_PLUGIN": "ansible.builtin.jsonfile", "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(fact_cache)}
    options = dict(_options(vault), env=cache_env)
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
    state = {"runs": runs, "report_dir": report_dir, "fact_cache": cached, "cache_text": cache_text,
             "cache_env": cache_env, "torn_down": False}
    yield state
    if not state["torn_down"]:  # the removals' own teardown did not run, or failed
        for _name, playbook, extra_vars, _scale_sets in REMOVALS[1:]:
            playbooks.run(playbook, extra_vars={**EXTRA_VARS, **extra_vars}, **_options(vault))


@pytest.fixture(scope="module")
def removed(converged, playbooks, vault, testbed) -> dict:
    """After every check of the converge: the removals at -v, in order; the Secrets left after the first.

    Its tests come last in this file, so they run after the converge's.
    """
    runs, cached = {}, {}
    secrets_after = {}
    for name, playbook, extra_vars, scale_sets in REMOVALS:
        runs[name] = playbooks.run(playbook, extra_vars={**EXTRA_VARS, **extra_vars}, verbosity=1,
                                   tags=SITE_TAGS if playbook == SITE else None,
                                   vars_files=vault["removal_vars_files"][scale_sets],
                                   vault_password_file=vault["vault_password_file"], env=converged["cache_env"])
        cached[name] = converged["cache_text"]()
        if name == POOL_REMOVAL:
            secrets_after = secret_texts(testbed)
    converged["torn_down"] = all(run.rc == 0 for run in runs.values())
    return {"runs": runs, "fact_cache": cached, "secrets_after_removal": secrets_after}


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
    leaked = leaks({f"{playbook} -vvv": run.output}, MARKERS)
    assert not leaked, leaked


def test_no_secret_in_any_configmap(converged, testbed):
    leaked = leaks({"ConfigMap %s/%s" % key: text for key, text in configmap_texts(testbed).items()}, MARKERS)
    assert not leaked


def test_no_secret_in_any_helm_release(converged, testbed):
    records = helm_releases(testbed)
    ours = [r for r in records if r["namespace"] in NAMESPACES.values()]
    assert len({(r["namespace"], r["name"]) for r in ours}) == 5, "expected 2 GitLab pools, the ARC controller, 2 scale sets"
    leaked = leaks({"release %s/%s v%s" % (r["namespace"], r["name"], r["version"]): repr(r["config"]) + r["manifest"]
                    for r in records}, MARKERS)
    assert not leaked


def test_secrets_only_where_the_roles_put_them(converged, testbed):
    texts = secret_texts(testbed)
    for marker, holders in EXPECTED_HOLDERS.items():
        found = {key for key, text in texts.items() if forms_found(text, marker)}
        assert found == holders, f"{marker[:20]}... is in {sorted(found)}, expected only {sorted(holders)}"


def test_no_secret_in_the_proof_report(converged):
    files = [p for p in Path(converged["report_dir"]).rglob("*") if p.is_file()]
    assert files, "the canary wrote no report"
    leaked = leaks({str(p): p.read_text(errors="replace") for p in files}, MARKERS)
    assert not leaked


@pytest.mark.parametrize("playbook", [*PLAYBOOKS, CANARY])
def test_no_secret_in_the_fact_cache(converged, playbook):
    """Neither plans nor decisions are facts: a persistent fact cache would keep the Secrets they hold."""
    cached = converged["fact_cache"][playbook]
    leaked = leaks({f"the fact cache after {playbook}": cached}, MARKERS)
    assert not leaked, leaked
    assert "__converge_changes" not in cached and "_plan" not in cached, f"after {playbook}: {cached[:300]}"


# The removals: these tests come last (the fixture `removed` tears down what the converge made).

def test_the_removals_succeeded_and_deleted_the_secrets_of_what_they_removed(removed):
    for name, run in removed["runs"].items():
        assert run.rc == 0, f"{name} failed (rc={run.rc}):\n{run.output[-6000:]}"
    left = removed["secrets_after_removal"]
    assert left, "the Secrets after the pool removal were not read"
    assert not REMOVED_HOLDERS & set(left), sorted(REMOVED_HOLDERS & set(left))
    # What stayed declared keeps its Secret: the removal was of the two marked absent only.
    assert (NAMESPACES["gitlab"], f"gitlab-runner-{PREFIX}-l40s-token") in left
    assert removed["runs"][POOL_REMOVAL].changed > 0


@pytest.mark.parametrize("name", [name for name, _playbook, _vars, _scale_sets in REMOVALS])
def test_no_secret_in_the_removals_v_output(removed, name):
    run = removed["runs"][name]
    # -v is the verbosity that shows each task's result (a deletion's answer holds the Secret deleted).
    assert "as config file" in run.output, "the run did not log at -v"
    leaked = leaks({f"{name} -v": run.output}, MARKERS)
    assert not leaked, leaked


@pytest.mark.parametrize("name", [name for name, _playbook, _vars, _scale_sets in REMOVALS])
def test_no_secret_in_the_fact_cache_after_a_removal(removed, name):
    leaked = leaks({f"the fact cache after {name}": removed["fact_cache"][name]}, MARKERS)
    assert not leaked, leaked
