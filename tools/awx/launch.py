# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run one AWX job template of awx/job_templates.yml the way AWX runs it: in the EE, through ansible-runner.

TEST HARNESS. There is no AWX here; this does, in the same order, what AWX
does for a job launch, with ansible-runner (the engine AWX's receptor workers
run) and the EE image (tools/awx/build_ee.py):
1. project sync: the checkout's files (tracked and untracked, not ignored)
   copied to <private data dir>/project;
2. inventory update: `ansible-inventory --list --export` of the inventory
   source run inside the EE, its JSON served to the job by an inventory
   script, as AWX serves imported inventories;
3. credentials: each credential type's injectors (awx/credential_types.yml)
   rendered with the credential's inputs: files under env/ (what AWX calls
   tower.filename), environment variables, extra vars;
4. survey: the answers, or each question's default (awx/surveys/<template>.yml),
   as gpuci_survey_* extra vars;
5. the job: the template's playbook in the EE container, cwd the project,
   ANSIBLE_COLLECTIONS_PATH set as AWX sets it (so the EE's installed
   collection is used, not the project's development link).

    launch.py site --image gpuci-runners-ee:... --inventory inventories/local/hosts.yml \
        --kubeconfig .testbed/kubeconfig [--answer gpu_canary_report_dir=x]
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import ansible_runner
import jinja2
import yaml

REPO = Path(__file__).resolve().parents[2]
AWX_DIR = REPO / "awx"
CONTAINER_ROOT = "/runner"  # where ansible-runner mounts the private data dir
# What AWX puts in front of the EE's own collection paths (see AWX's docs/collections.md).
COLLECTIONS_PATHS = f"{CONTAINER_ROOT}/requirements_collections:~/.ansible/collections:/usr/share/ansible/collections"


@dataclass
class JobResult:
    template: str
    status: str
    rc: int
    private_data_dir: Path
    events: list[dict] = field(default_factory=list)

    @property
    def stats(self) -> dict:
        """The playbook_on_stats event's counters (ok, changed, failures...) per host."""
        for event in reversed(self.events):
            if event.get("event") == "playbook_on_stats":
                data = event["event_data"]
                return {key: data.get(key) or {} for key in ("ok", "changed", "failures", "dark", "skipped")}
        return {}

    @property
    def project(self) -> Path:
        return self.private_data_dir / "project"


def job_template(key: str) -> dict:
    return yaml.safe_load((AWX_DIR / "job_templates.yml").read_text())["job_templates"][key]


def sync_project(destination: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def container_options(image: str) -> dict:
    return {"process_isolation": True, "process_isolation_executable": "docker", "container_image": image,
            # The private engine makes no bridge; the testbed's API server is on 127.0.0.1.
            "container_options": ["--network=host"]}


def import_inventory(project: Path, source: str, image: str) -> dict:
    """AWX's inventory update: the source read by ansible-inventory inside the EE."""
    out, err = ansible_runner.get_inventory(
        action="list", inventories=[f"{CONTAINER_ROOT}/project/{source}"], response_format="json", export=True,
        private_data_dir=str(project.parent), quiet=True, **container_options(image))
    if not isinstance(out, dict):
        raise SystemExit(f"launch: inventory update of {source} failed: {err or out}")
    return out


def write_inventory_script(private_data_dir: Path, inventory: dict) -> None:
    script = private_data_dir / "inventory" / "hosts"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text("#!/usr/bin/env python3\nimport sys\n"
                      f"print({json.dumps(json.dumps(inventory))} if '--list' in sys.argv else '{{}}')\n")
    script.chmod(0o755)


def inject_credential(kind: str, inputs: dict, private_data_dir: Path) -> tuple[dict, dict]:
    """A credential's injectors rendered as AWX renders them: (environment, extra vars)."""
    credential_type = yaml.safe_load((AWX_DIR / "credential_types.yml").read_text())["credential_types"][kind]
    injectors, fields = credential_type["injectors"], credential_type["inputs"]
    missing = set(fields.get("required", [])) - set(inputs)
    if missing:
        raise SystemExit(f"launch: a {kind} credential needs {sorted(missing)} (AWX refuses to save it without)")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
    # AWX renders an optional input left empty as an empty string.
    context = {field["id"]: "" for field in fields["fields"]} | inputs
    if "file" in injectors:
        name = f"credential_{kind}"
        (private_data_dir / "env").mkdir(parents=True, exist_ok=True)
        path = private_data_dir / "env" / name
        path.write_text(env.from_string(injectors["file"]["template"]).render(**context))
        path.chmod(0o600)
        context["tower"] = {"filename": f"{CONTAINER_ROOT}/env/{name}"}

    def render(values: dict) -> dict:
        return {key: env.from_string(template).render(**context) for key, template in values.items()}

    return render(injectors.get("env", {})), render(injectors.get("extra_vars", {}))


def survey_extra_vars(key: str, answers: dict[str, str]) -> dict:
    """gpuci_survey_* extra vars: the given answers, else each question's default."""
    survey = yaml.safe_load((AWX_DIR / "surveys" / f"{key}.yml").read_text())["survey_spec"]["spec"]
    by_role_variable = {q["variable"].removeprefix("gpuci_survey_"): q for q in survey}
    unknown = set(answers) - set(by_role_variable)
    if unknown:
        raise SystemExit(f"launch: the {key} survey has no question for {sorted(unknown)}")
    values = {q["variable"]: q["default"] for q in survey if "default" in q}
    values.update({by_role_variable[name]["variable"]: value for name, value in answers.items()})
    return values


def self_contained_kubeconfig(path: Path) -> str:
    """The kubeconfig with its CA inlined, as a user pastes it into AWX's credential."""
    config = yaml.safe_load(path.read_text())
    for cluster in config["clusters"]:
        ca = cluster["cluster"].pop("certificate-authority", None)
        if ca:
            cluster["cluster"]["certificate-authority-data"] = base64.b64encode(Path(ca).read_bytes()).decode()
    return yaml.safe_dump(config)


def _progress(started: float, template: str):
    def handler(event: dict) -> bool:
        data = event.get("event_data", {})
        if event.get("event") in ("playbook_on_play_start", "playbook_on_task_start"):
            name = data.get("task") or f"PLAY {data.get('play')}"
            print(f"launch [{template} {time.monotonic() - started:4.0f}s] {name}", flush=True)
        return True
    return handler


def launch(key: str, image: str, inventory_source: str, credentials: dict[str, dict], work: Path,
           answers: dict[str, str] | None = None, verbosity: int = 0) -> JobResult:
    """Run job template ``key`` as AWX would; ``verbosity`` as the template's (0 Normal, 1 Verbose, ...)."""
    template = job_template(key)
    private_data_dir = work / key
    shutil.rmtree(private_data_dir, ignore_errors=True)
    sync_project(private_data_dir / "project")
    write_inventory_script(private_data_dir, import_inventory(private_data_dir / "project", inventory_source, image))
    envvars, extravars = {"ANSIBLE_COLLECTIONS_PATH": COLLECTIONS_PATHS}, survey_extra_vars(key, answers or {})
    for kind in template["credential_types"]:
        if kind in credentials:
            env, extra = inject_credential(kind, credentials[kind], private_data_dir)
            envvars.update(env)
            extravars.update(extra)
    started = time.monotonic()
    print(f"launch: job template {template['name']!r} ({template['playbook']}) in {image}", flush=True)
    runner = ansible_runner.run(
        # The inventory is private_data_dir/inventory (the script), as ansible-runner reads by default.
        private_data_dir=str(private_data_dir), playbook=template["playbook"],
        envvars=envvars, extravars=extravars, quiet=True, event_handler=_progress(started, key), verbosity=verbosity,
        **container_options(image))
    result = JobResult(key, runner.status, runner.rc, private_data_dir, list(runner.events))
    print(f"launch: {key} {result.status} (rc {result.rc}) in {time.monotonic() - started:.0f}s; "
          f"changed {result.stats.get('changed')}, failures {result.stats.get('failures')}", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("template", choices=sorted(yaml.safe_load((AWX_DIR / "job_templates.yml").read_text())["job_templates"]))
    parser.add_argument("--image", required=True)
    parser.add_argument("--inventory", default="inventories/local/hosts.yml")
    parser.add_argument("--kubeconfig", type=Path, default=REPO / ".testbed" / "kubeconfig")
    parser.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "gpuci-awx-jobs")
    parser.add_argument("--answer", action="append", default=[], help="role_variable=value survey answer")
    args = parser.parse_args()
    answers = dict(a.split("=", 1) for a in args.answer)
    result = launch(args.template, args.image, args.inventory,
                    {"kubeconfig": {"kubeconfig": self_contained_kubeconfig(args.kubeconfig)}}, args.work, answers)
    sys.exit(0 if result.status == "successful" else 1)


if __name__ == "__main__":
    main()
