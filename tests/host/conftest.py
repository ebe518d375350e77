"""A real Debian root for roles/container_toolkit, reached through chroot.

One root per test session: the cached mmdebstrap tarball (tests/host/root.sh)
unpacked into a temporary folder, plus a signed apt repository of stand-in
toolkit packages at /srv/gpuci-apt inside it. Ansible reaches the root with
the community.general.chroot connection; pytest-testinfra's ansible backend
uses the same inventory. Nothing is mounted into the root (apt and dpkg work
without /proc here), so teardown only deletes the folder.
"""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import testinfra

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VENV_BIN = REPO / ".venv" / "bin"
HOST = "gpu-root"
# The Kubeflow-like settings the tests converge with are the example's own.
EXAMPLE_VARS = REPO / "inventories/examples/kubeflow-a10-arc/group_vars/gpu_hosts/container_toolkit.yml"

# Files the role writes; check mode must leave all of them as they were.
ROLE_FILES = (
    "/etc/apt/keyrings/nvidia-container-toolkit.asc",
    "/etc/apt/sources.list.d/nvidia-container-toolkit.sources",
    "/etc/apt/preferences.d/nvidia-container-toolkit",
    "/etc/docker/daemon.json",
    "/etc/nvidia-container-runtime/config.toml",
    "/etc/cdi/nvidia.yaml",
)

os.environ["ANSIBLE_CONFIG"] = str(REPO / "ansible.cfg")
os.environ["PATH"] = f"{VENV_BIN}:{os.environ['PATH']}"


@dataclass
class Run:
    """One ansible-playbook run, read from the ansible.posix.json callback."""

    rc: int
    report: dict = field(repr=False)
    stderr: str = field(repr=False)

    @property
    def changed(self):
        return self.report["stats"][HOST]["changed"] if self.report else None

    def results(self):
        """(task name, result) for every task of the run, in order."""
        for play in self.report.get("plays", []):
            for task in play["tasks"]:
                if HOST in task["hosts"]:
                    yield task["task"]["name"], task["hosts"][HOST]

    def changed_tasks(self):
        return [name for name, result in self.results() if result.get("changed")]

    def messages(self):
        return [r.get("msg", "") for _host, r in self.results()]


class DebianRoot:
    def __init__(self, path, inventory):
        self.path = path
        self.inventory = inventory
        self.host = testinfra.get_host(f"ansible://{HOST}?force_ansible=True", ansible_inventory=str(inventory))

    def chroot(self, *argv, check=True):
        return subprocess.run(("chroot", str(self.path), *argv), check=check, capture_output=True, text=True,
                              env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))

    def read(self, path):
        target = self.path / path.lstrip("/")
        return target.read_text() if target.exists() else None

    def versions(self):
        """Installed toolkit package -> version."""
        out = self.chroot("dpkg-query", "-W", "-f=${Package} ${Version} ${db:Status-Abbrev}\\n", check=False).stdout
        return {p: v for p, v, status in (line.split(" ", 2) for line in out.splitlines())
                if "nvidia" in p and status[1:2] == "i"}  # "hi": held and installed

    def snapshot(self):
        """Digest of the role's files and the package database."""
        state = {path: self.read(path) for path in ROLE_FILES}
        state["dpkg"] = self.chroot("dpkg", "--get-selections").stdout + repr(sorted(self.versions().items()))
        return {k: hashlib.sha256((v or "<absent>").encode()).hexdigest() for k, v in state.items()}

    def playbook(self, name="converge.yml", check=False, **overrides):
        """Run tests/host/<name> with the example's settings plus overrides."""
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(overrides, f)
        argv = [str(VENV_BIN / "ansible-playbook"), "-i", str(self.inventory), str(HERE / name),
                "-e", f"@{EXAMPLE_VARS}", "-e", f"@{f.name}", "--diff"]
        if check:
            argv.append("--check")
        env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_NOCOLOR="1")
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO, check=False)
        os.unlink(f.name)
        try:
            report = json.loads(proc.stdout)
        except ValueError:
            report = {}
        run = Run(proc.returncode, report, proc.stderr + proc.stdout[-4000:])
        print(f"{name} check={check} {overrides}: rc={run.rc} changed={run.changed} {run.changed_tasks()}")
        return run


def _write_inventory(folder, root):
    inventory = folder / "hosts.yml"
    # JSON is YAML; the repository and its key live inside the root itself.
    inventory.write_text(json.dumps({"all": {"children": {"gpu_hosts": {"hosts": {HOST: {
        "ansible_connection": "community.general.chroot",
        "ansible_host": str(root),
        "ansible_python_interpreter": "/usr/bin/python3",
        "container_toolkit_repo_url": "file:/srv/gpuci-apt/stable/deb/$(ARCH)",
        "container_toolkit_repo_key_url": "file:///srv/gpuci-apt/key.asc",
    }}}}}}, indent=2))
    return inventory


@pytest.fixture(scope="session")
def debian_root():
    if os.geteuid() != 0:
        pytest.fail("tests/host needs root (chroot); run tests/host/run.sh as root")
    folder = Path(tempfile.mkdtemp(prefix="gpuci-host-"))
    try:
        root = folder / "root"
        subprocess.run(("bash", str(HERE / "root.sh"), "unpack", str(root)), check=True)
        subprocess.run(("bash", str(HERE / "root.sh"), "repo", str(root)), check=True)
        yield DebianRoot(root, _write_inventory(folder, root))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
