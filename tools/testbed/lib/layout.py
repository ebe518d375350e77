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
# The real node: its name, and the address of its bridge (the node IP: kubelet
# refuses loopback). Pods get addresses from POD_SUBNET on that bridge.
REAL_NODE = "real-0"
REAL_NODE_IP = "10.89.0.1"
POD_SUBNET = "10.89.0.0/24"
NODE_BRIDGE = "gpuci0"


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


@dataclass(frozen=True)
class Layout(ProcessFolders):
    state: Path
    charts_dir: Path
    apiserver_port: int
    etcd_port: int
    chart_repo_port: int
    # One real node per machine (it owns a bridge, an address and a port 443):
    # private instances on other ports (benchmarks) run with simulated nodes only.
    real_node: bool = True
    # The testbed's Prometheus (lib/prometheus.py), started only when asked.
    prometheus_port: int = 19090

    @classmethod
    def from_environment(cls) -> "Layout":
        env = os.environ.get
        return cls(
            state=Path(env("GPUCI_TESTBED_STATE", str(REPO_ROOT / ".testbed"))).resolve(),
            charts_dir=charts_dir(),
            apiserver_port=int(env("GPUCI_TESTBED_APISERVER_PORT", "16443")),
            etcd_port=int(env("GPUCI_TESTBED_ETCD_PORT", "12379")),
            chart_repo_port=int(env("GPUCI_CHART_REPO_PORT", "18879")),
            real_node=env("GPUCI_TESTBED_REAL_NODE", "1") != "0",
            prometheus_port=int(env("GPUCI_PROMETHEUS_PORT", "19090")),
        )

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
