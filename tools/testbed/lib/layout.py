# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where the testbed keeps its state, which ports it uses, where its binaries are."""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

TOOLS_DIR = Path(__file__).resolve().parent.parent
REPO_ROOT = TOOLS_DIR.parent.parent
BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok", "helm")
# The real node's binaries (kubelet comes with the control plane's build).
NODE_BINARIES = ("kubelet", "containerd", "containerd-shim-runc-v2", "ctr", "runc", "bridge", "host-local", "loopback")
# GPU mode's (lib/gpu.py): the toolkit from its Go module and our device plugin stand-in.
GPU_BINARIES = ("nvidia-ctk", "nvidia-container-runtime", "nvidia-cdi-hook", "gpuci-device-plugin")
# The real node's name; every testbed instance has one, in its own cluster.
REAL_NODE = "real-0"
# Testbeds side by side (the integration tier's workers): instance N takes the
# ports below plus N * PORT_STRIDE, its own state folder and its own network
# (Layout.node_bridge and the addresses after it). Instance 0 is the default
# testbed of `make testbed-up` and `make demo`.
PORT_STRIDE = 10
DEFAULT_PORTS = {"apiserver": 16443, "etcd": 12379, "chart_repo": 18879, "prometheus": 19090}
# The GitLab stand-in (gitlab_standin.py) listens on the node bridge's address,
# where the real node's pods reach it: inventories/local points its pools there.
GITLAB_STANDIN_PORT = 18880


# What every tool, test and the bench find the same way, each from its
# variable or its default; the shell scripts read the same variables with the
# same defaults (lib/common.sh, tools/gpu/proof.sh, the Makefile).
def charts_dir() -> Path:
    """The upstream charts the testbed serves and the tests read: GPUCI_CHARTS_DIR, else ../shared/charts."""
    return Path(os.environ.get("GPUCI_CHARTS_DIR", REPO_ROOT.parent / "shared" / "charts")).resolve()


def crds_dir() -> Path:
    """Upstream CRDs the testbed installs (never copied into the repository): GPUCI_CRDS_DIR, else ../shared/crds."""
    return Path(os.environ.get("GPUCI_CRDS_DIR", REPO_ROOT.parent / "shared" / "crds")).resolve()


def cache_dir() -> Path:
    """Where built binaries and image archives are kept between runs: GPUCI_TESTBED_CACHE, else ~/.cache."""
    return Path(os.environ.get("GPUCI_TESTBED_CACHE", Path.home() / ".cache" / "gpuci-testbed"))


def component_bin_dirs(*components: str, env=None) -> list[Path]:
    """Each component's bin folder, as tools/testbed/build.sh names it (`--print-dir`); nothing is built.

    build.sh alone knows its cache layout (versions, source hashes); asking it
    keeps that in one place. env: build.sh's environment (GPUCI_HELM=4: helm 4).
    """
    printed = subprocess.run(["bash", str(TOOLS_DIR / "build.sh"), "--print-dir", *components],
                             check=True, capture_output=True, text=True, env=env).stdout
    return [Path(line) for line in printed.splitlines()]


def ansible_playbook() -> Path:
    """The ansible-playbook the tests and the bench run: GPUCI_ANSIBLE_PLAYBOOK, else the venv's.

    A GPU machine runs them from the unpacked bundle, without the venv
    (tools/gpu/bundle.py env, docs/gpu-mode.md).
    """
    return Path(os.environ.get("GPUCI_ANSIBLE_PLAYBOOK") or REPO_ROOT / ".venv" / "bin" / "ansible-playbook")


class ProcessFolders:
    """Where processes started by lib.processes record their PIDs and logs: under `state`."""
    state: Path

    @property
    def logs(self) -> Path:
        return self.state / "logs"

    @property
    def pids(self) -> Path:
        return self.state / "pids"


def instance_from_environment() -> int:
    """GPUCI_TESTBED_INSTANCE, else 0 (the default testbed)."""
    return int(os.environ.get("GPUCI_TESTBED_INSTANCE") or 0)


@dataclass(frozen=True)
class Layout(ProcessFolders):
    state: Path
    charts_dir: Path
    apiserver_port: int
    etcd_port: int
    chart_repo_port: int
    # Private instances on other ports (benchmarks) may run with simulated nodes only.
    real_node: bool = True
    # The testbed's Prometheus (lib/prometheus.py), started only when asked.
    prometheus_port: int = DEFAULT_PORTS["prometheus"]
    # Which of the testbeds side by side this is: it picks the real node's
    # bridge, addresses and cgroup root, so two real nodes never share one.
    instance: int = 0

    @classmethod
    def from_environment(cls) -> "Layout":
        """Instance N (GPUCI_TESTBED_INSTANCE) by default; each variable below still overrides its part."""
        env = os.environ.get
        instance = instance_from_environment()

        def port(variable: str, name: str) -> int:
            return int(env(variable) or DEFAULT_PORTS[name] + PORT_STRIDE * instance)

        default_state = REPO_ROOT / (".testbed" if instance == 0 else f".testbed-{instance}")
        return cls(
            state=Path(env("GPUCI_TESTBED_STATE") or default_state).resolve(),
            charts_dir=charts_dir(),
            apiserver_port=port("GPUCI_TESTBED_APISERVER_PORT", "apiserver"),
            etcd_port=port("GPUCI_TESTBED_ETCD_PORT", "etcd"),
            chart_repo_port=port("GPUCI_CHART_REPO_PORT", "chart_repo"),
            real_node=env("GPUCI_TESTBED_REAL_NODE", "1") != "0",
            prometheus_port=port("GPUCI_PROMETHEUS_PORT", "prometheus"),
            instance=instance,
        )

    def client_environment(self) -> dict[str, str]:
        """What playbooks and tools run against this instance need: the variables
        inventories/local and the tests read (its kubeconfig, chart repository,
        GitLab stand-in and state folder)."""
        return {
            "GPUCI_TESTBED_INSTANCE": str(self.instance),
            "GPUCI_TESTBED_STATE": str(self.state),
            "GPUCI_KUBECONFIG": str(self.kubeconfig),
            "GPUCI_CHART_REPO_URL": self.chart_repo_url,
            "GPUCI_GITLAB_STANDIN_URL": self.gitlab_standin_url,
            "GPUCI_PROMETHEUS_PORT": str(self.prometheus_port),
        }

    # The real node's network, one per instance: its bridge, the node IP on it
    # (kubelet refuses loopback), the pods' subnet there, and the Service range
    # whose first address (the `kubernetes` Service) the bridge also carries
    # for the service proxy (service_proxy.py).
    @property
    def node_bridge(self) -> str:
        return f"gpuci{self.instance}"

    @property
    def real_node_ip(self) -> str:
        return f"10.89.{self.instance}.1"

    @property
    def pod_subnet(self) -> str:
        return f"10.89.{self.instance}.0/24"

    @property
    def service_cidr(self) -> str:
        return f"10.{96 + self.instance}.0.0/16"

    @property
    def service_host(self) -> str:
        """The `kubernetes` Service's ClusterIP: the first address of service_cidr."""
        return f"10.{96 + self.instance}.0.1"

    @property
    def gitlab_standin_url(self) -> str:
        return f"http://{self.real_node_ip}:{GITLAB_STANDIN_PORT}"

    @property
    def cgroup_root(self) -> str:
        """The real node's kubelet cgroup root: its pods' cgroups under <root>/kubepods. A kubelet removes pod
        cgroups it does not know under its own root, so two real nodes must not share one."""
        return "/" if self.instance == 0 else f"/gpuci-testbed-{self.instance}"

    # Files and folders under the state directory.
    @property
    def kubeconfig(self) -> Path:
        return self.state / "kubeconfig"

    @property
    def pki(self) -> Path:
        return self.state / "pki"

    @property
    def etcd_data(self) -> Path:
        return self.state / "etcd"

    @property
    def apiserver_url(self) -> str:
        return f"https://127.0.0.1:{self.apiserver_port}"

    @property
    def prometheus_url(self) -> str:
        return f"http://127.0.0.1:{self.prometheus_port}"

    @property
    def prometheus_dir(self) -> Path:
        """The Prometheus's configuration, rule files, token and data."""
        return self.state / "prometheus"

    @property
    def chart_repo_url(self) -> str:
        return f"http://127.0.0.1:{self.chart_repo_port}"

    def component_kubeconfig(self, user: str) -> Path:
        return self.state / f"{user}.kubeconfig"

    def reset(self) -> None:
        self.remove_state()
        for folder in (self.pki, self.logs, self.pids, self.etcd_data):
            folder.mkdir(parents=True, mode=0o700)

    def remove_state(self) -> None:
        shutil.rmtree(self.state, ignore_errors=True)

    @property
    def node_dir(self) -> Path:
        return self.state / "node"

    @property
    def containerd_socket(self) -> Path:
        return self.node_dir / "containerd" / "containerd.sock"

    @property
    def kubelet_port(self) -> int:
        return self.apiserver_port - 200  # 16243 by default, off kubelet's 10250

    def binaries(self, names=BINARIES, env=None) -> dict[str, Path]:
        """Find binaries in the build cache; fail naming the build command if one is missing.

        env: build.sh's environment (GPUCI_HELM=4 finds helm 4), this process's by default.
        """
        printed = subprocess.run(["bash", str(TOOLS_DIR / "build.sh"), "--print-paths"],
                                 check=True, capture_output=True, text=True, env=env).stdout.strip()
        folders = [Path(p) for p in printed.split(":") if p]
        found: dict[str, Path] = {}
        for name in names:
            for folder in folders:
                if (folder / name).is_file():
                    found[name] = folder / name
                    break
            else:
                raise SystemExit(f"testbed binary {name!r} is not built; run: bash tools/testbed/build.sh")
        return found
