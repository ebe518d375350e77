# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The testbed's real node: kubelet, containerd, runc and CNI on this machine.

Beside the simulated kwok nodes, one node runs containers for real. It is
tainted `gpuci.runners/real-node=true:NoSchedule`, so only pods that ask for it
(the charts' controllers in inventories/local, canary tests) land there and
the scheduling tests on simulated nodes keep their meaning.

Everything it needs lives under the testbed's state folder: containerd's root,
state and socket, kubelet's root, CNI configuration and IP leases, network
namespaces. Outside it: the node's bridge (gpuci<N>, 10.89.<N>.1/24 for
testbed instance N), which also carries the `kubernetes` Service's address
for the service proxy (see service_proxy.py), and the kubelet's cgroup root
(instance 0: /kubepods; instance N: /gpuci-testbed-<N>/kubepods). So testbeds
side by side each have a real node of their own; only GPU mode's device-plugin
folder (below) is one per machine.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from . import processes
from .api import ApiClient
from .layout import (
    GITLAB_STANDIN_PORT, NODE_BINARIES, REAL_NODE, TOOLS_DIR, Layout, component_bin_dirs,
)

REAL_NODE_TAINT = {"key": "gpuci.runners/real-node", "value": "true", "effect": "NoSchedule"}
REAL_NODE_LABEL = "gpuci.runners/real-node"
# What a pod spec needs to land on the real node (test probes, the proof's negative control).
REAL_NODE_TOLERATION = {**REAL_NODE_TAINT, "operator": "Equal"}
REAL_NODE_PLACEMENT = {"nodeSelector": {REAL_NODE_LABEL: "true"}, "tolerations": [REAL_NODE_TOLERATION]}
# Its projects' bare repositories, and the runners it starts with (lib/gitlab_seed.py), under the node folder.
GITLAB_STANDIN_REPOS = "gitlab-repos"
GITLAB_STANDIN_RUNNERS = "gitlab-runners.json"
# The kubelet serves device-plugin registration at this fixed path, whatever
# its --root-dir (k8s.io/kubelet's DevicePluginPath), and empties it when it
# starts: the one thing the real node writes outside the state folder besides
# its bridge; `down` removes it. A GPU-mode node, whose device plugin
# registers there, runs its containerd and kubelet in a mount namespace of
# their own (MOUNT_NAMESPACE), where a folder of its state is mounted on it,
# so that it can run beside other testbeds' real nodes.
DEVICE_PLUGIN_DIR = Path("/var/lib/kubelet/device-plugins")
DEVICE_CHECKPOINT = DEVICE_PLUGIN_DIR / "kubelet_internal_checkpoint"
MOUNT_NAMESPACE = "mount-namespace"  # its holder's name among the testbed's processes (tools/testbed/mount_namespace.py)
IN_MOUNT_NAMESPACE = ("containerd", "kubelet")  # the kubelet mounts the pods' volumes that containerd's containers use
# CAP_SYS_RESOURCE is capability 24; without it in the bounding set runc needs
# the test-harness wrapper (tools/testbed/runcwrapper).
CAP_SYS_RESOURCE_BIT = 24
RUNC_WRAPPER = "gpuci-runc-wrapper"


def bounding_set_lacks_sys_resource() -> bool:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapBnd:"):
            return not int(line.split()[1], 16) >> CAP_SYS_RESOURCE_BIT & 1
    return False


def cgroup_version() -> int:
    return 2 if Path("/sys/fs/cgroup/cgroup.controllers").exists() else 1


def runc_wrapper_binary() -> Path:
    """The test-harness runc wrapper that build.sh builds (component runc-wrapper)."""
    (bin_dir,) = component_bin_dirs("runc-wrapper")
    wrapper = bin_dir / RUNC_WRAPPER
    if not wrapper.is_file():
        raise SystemExit(f"{wrapper} is not built; run: bash tools/testbed/build.sh runc-wrapper")
    return wrapper


def write_runc_launcher(launcher: Path, runc: Path) -> Path:
    """An executable that runs `runc` behind the test-harness wrapper: containerd and dockerd name one
    binary for a runtime, without arguments."""
    launcher.write_text("#!/bin/sh\n# Test-harness workaround, see tools/testbed/runcwrapper/main.go\n"
                        f'exec {runc_wrapper_binary()} --runc {runc} "$@"\n')
    launcher.chmod(0o755)
    return launcher


def container_runc(layout: Layout, runc: Path) -> Path:
    """The runc containers run with: runc itself, or (on VMs lacking CAP_SYS_RESOURCE) a launcher of the wrapper."""
    if not bounding_set_lacks_sys_resource():
        return runc
    return write_runc_launcher(layout.node_dir / "runc", runc)


def containerd_config(layout: Layout, bins: dict[str, Path], runc_binary: Path, pause_image: str) -> str:
    """containerd 2.x configuration (version 3): everything under the state folder."""
    base = layout.node_dir / "containerd"
    cri_runtime = {
        "cni": {"bin_dirs": [str(bins["bridge"].parent)], "conf_dir": str(layout.node_dir / "cni" / "net.d")},
        # Network namespaces under containerd's state, so `down` finds every mount.
        "netns_mounts_under_state_dir": True,
        "containerd": {"default_runtime_name": "runc", "runtimes": {"runc": {
            "runtime_type": "io.containerd.runc.v2",
            "options": {"BinaryName": str(runc_binary), "SystemdCgroup": False}}}},
    }
    config = {
        "version": 3,
        "root": str(base / "root"),
        "state": str(base / "state"),
        "temp": str(base / "tmp"),
        "grpc": {"address": str(layout.containerd_socket)},
        "plugins": {
            "io.containerd.cri.v1.runtime": cri_runtime,
            # Images come only from archives imported at start (no registry is
            # reachable); the sandbox image is one of them.
            "io.containerd.cri.v1.images": {"snapshotter": "overlayfs",
                                            "pinned_images": {"sandbox": pause_image}},
            "io.containerd.internal.v1.opt": {"path": str(base / "opt")},
            "io.containerd.nri.v1.nri": {"disable": True},
        },
    }
    import tomli_w  # the venv's TOML writer (requirements-test.txt)
    return tomli_w.dumps(config)


def cni_config(layout: Layout) -> dict:
    return {
        "cniVersion": "1.0.0", "name": "gpuci-testbed",
        "plugins": [{
            "type": "bridge", "bridge": layout.node_bridge, "isGateway": True, "ipMasq": False, "hairpinMode": True,
            "ipam": {"type": "host-local", "ranges": [[{"subnet": layout.pod_subnet, "gateway": layout.real_node_ip}]],
                     "routes": [{"dst": "0.0.0.0/0"}]},
        }],
    }


def kubelet_config(layout: Layout) -> dict:
    pki = layout.pki
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
        "address": layout.real_node_ip, "port": layout.kubelet_port, "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1", "healthzPort": layout.kubelet_port + 1,
        "containerRuntimeEndpoint": f"unix://{layout.containerd_socket}",
        "cgroupDriver": "cgroupfs", "cgroupRoot": layout.cgroup_root, "failCgroupV1": False, "failSwapOn": False,
        "tlsCertFile": str(pki / "kubelet.crt"), "tlsPrivateKeyFile": str(pki / "kubelet.key"),
        "authentication": {"anonymous": {"enabled": False}, "webhook": {"enabled": True},
                           "x509": {"clientCAFile": str(pki / "ca.crt")}},
        "authorization": {"mode": "Webhook"},
        "registerWithTaints": [REAL_NODE_TAINT],
        "podLogsDir": str(layout.node_dir / "pod-logs"),
        # No DNS on the testbed (no CoreDNS, no way out): pods get a resolver
        # file without servers, so a lookup fails at once instead of timing out
        # against the host's resolver, which the pod network cannot reach.
        "resolvConf": str(layout.node_dir / "kubelet" / "resolv.conf"),
        "maxPods": 40,
        # Images cannot be pulled again here: never garbage-collect them, and
        # do not evict pods over a nearly full shared disk.
        "imageGCHighThresholdPercent": 100, "imageGCLowThresholdPercent": 99,
        "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%"},
        "serializeImagePulls": False,
    }


def kubelet_kubeconfig(layout: Layout) -> dict:
    token = (layout.pki / "kubelet.token").read_text().strip()
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": "node",
        "clusters": [{"name": "gpuci-testbed", "cluster": {
            "server": layout.apiserver_url, "certificate-authority": str(layout.pki / "ca.crt")}}],
        "users": [{"name": "kubelet", "user": {"token": token}}],
        "contexts": [{"name": "node", "context": {"cluster": "gpuci-testbed", "user": "kubelet"}}],
    }


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


def _netsetup(layout: Layout, *args: str) -> None:
    """The testbed's netlink helper (tools/testbed/netsetup), for hosts without `ip`."""
    helper = layout.binaries(("gpuci-netsetup",))["gpuci-netsetup"]
    subprocess.run([str(helper), *args], check=True, capture_output=True, text=True)


def create_bridge(layout: Layout) -> None:
    """The node's bridge with the node IP, and the Service address for the proxy."""
    remove_bridge(layout)
    bridge = layout.node_bridge
    addresses = (f"{layout.real_node_ip}/{layout.pod_subnet.split('/')[1]}", f"{layout.service_host}/32")
    if not shutil.which("ip"):
        _netsetup(layout, "add-bridge", bridge, *addresses)
        return
    _ip("link", "add", bridge, "type", "bridge")
    for address in addresses:
        _ip("addr", "add", address, "dev", bridge)
    _ip("link", "set", bridge, "up")


def remove_bridge(layout: Layout) -> None:
    if not Path(f"/sys/class/net/{layout.node_bridge}").exists():
        return
    if shutil.which("ip"):
        _ip("link", "del", layout.node_bridge)
    else:
        _netsetup(layout, "del-link", layout.node_bridge)


def prepare(layout: Layout) -> dict[str, Path]:
    """Write every configuration file of the real node; return its binaries."""
    if os.geteuid() != 0:
        raise SystemExit("testbed: the real node needs root (kubelet, containerd, a bridge); "
                         "set GPUCI_TESTBED_REAL_NODE=0 for simulated nodes only")
    bins = layout.binaries(NODE_BINARIES)
    for folder in ("containerd", "cni/net.d", "kubelet", "pod-logs"):
        (layout.node_dir / folder).mkdir(parents=True, exist_ok=True)
    from . import images  # the image archives the real node imports
    (layout.node_dir / "containerd" / "config.toml").write_text(
        containerd_config(layout, bins, container_runc(layout, bins["runc"]), images.PAUSE_IMAGE))
    (layout.node_dir / "cni" / "net.d" / "10-gpuci-testbed.conflist").write_text(json.dumps(cni_config(layout), indent=2))
    (layout.node_dir / "kubelet" / "config.yaml").write_text(yaml.safe_dump(kubelet_config(layout)))
    (layout.node_dir / "kubelet" / "resolv.conf").write_text("# gpuci testbed: no DNS server is reachable from pods\n")
    kubeconfig = layout.node_dir / "kubelet" / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(kubelet_kubeconfig(layout)))
    kubeconfig.chmod(0o600)
    from . import gitlab_seed  # the stand-in's runners: inventories/local's pools, with their tags
    gitlab_seed.write_seed(layout.node_dir / GITLAB_STANDIN_RUNNERS)
    if not DEVICE_PLUGIN_DIR.parent.exists():
        (layout.node_dir / "made-var-lib-kubelet").touch()  # so `down` knows the folder is ours
    # The kubelet keeps its device allocations in a checkpoint in that fixed
    # folder. One left by an earlier real node (GPU mode's device plugin)
    # makes this kubelet refuse every pod requesting nvidia.com/gpu
    # ("cannot allocate unregistered device"), even one advertised by hand.
    if not other_real_nodes(layout):
        DEVICE_CHECKPOINT.unlink(missing_ok=True)
    make_cgroup_root(layout)
    create_bridge(layout)
    return bins


def other_real_nodes(layout: Layout) -> list[Path]:
    """The state folders of the other testbeds whose real node's kubelet runs on this machine."""
    ours = str(layout.node_dir / "kubelet" / "root")
    states = []
    for _pid, cmdline in running_cmdlines():
        argv = cmdline.decode(errors="replace").split("\0")
        if f"--hostname-override={REAL_NODE}" not in argv:
            continue
        for arg in argv:
            if arg.startswith("--root-dir=") and arg[len("--root-dir="):] != ours:
                states.append(Path(arg[len("--root-dir="):]).parents[2])  # <state>/node/kubelet/root
    return states


def private_device_plugin_dir(layout: Layout) -> Path:
    """A GPU-mode node's device-plugin folder: DEVICE_PLUGIN_DIR in its mount namespace."""
    return layout.node_dir / "device-plugins"


def start_mount_namespace(layout: Layout, wait) -> list[str]:
    """Start GPU mode's mount namespace (tools/testbed/mount_namespace.py); return the command that runs a
    process in it (`nsenter`)."""
    folder = private_device_plugin_dir(layout)
    folder.mkdir(parents=True, exist_ok=True)
    DEVICE_PLUGIN_DIR.mkdir(parents=True, exist_ok=True)  # where the bind goes, on the host (`down` removes it)
    holder = processes.start(layout, MOUNT_NAMESPACE, [sys.executable, str(TOOLS_DIR / "mount_namespace.py"),
                                                       "--bind", str(folder), str(DEVICE_PLUGIN_DIR)],
                             via=["unshare", "--mount", "--propagation", "slave", "--"])
    wait(f"{folder} on {DEVICE_PLUGIN_DIR} in the GPU-mode node's mount namespace",
         lambda: f" {DEVICE_PLUGIN_DIR} " in Path(f"/proc/{holder}/mountinfo").read_text(), timeout=30)
    return ["nsenter", f"--mount=/proc/{holder}/ns/mnt", "--"]


def cgroup_root_folders(layout: Layout) -> list[Path]:
    """The kubelet's cgroup root in every hierarchy, for instances that do not use the machine's root."""
    name = layout.cgroup_root.strip("/")
    if not name:
        return []
    base = Path("/sys/fs/cgroup")
    if cgroup_version() == 2:
        return [base / name]
    return [hierarchy / name for hierarchy in base.iterdir()
            if hierarchy.is_dir() and not hierarchy.is_symlink() and (hierarchy / "cgroup.procs").exists()]


def make_cgroup_root(layout: Layout) -> None:
    """The kubelet refuses a cgroup root that does not exist in each hierarchy; cgroup v1's cpuset needs its
    CPUs and memory nodes before a child can hold tasks, so they are copied from the parent."""
    for folder in cgroup_root_folders(layout):
        folder.mkdir(exist_ok=True)
        for name in ("cpuset.cpus", "cpuset.mems"):
            if (folder / name).exists() and not (folder / name).read_text().strip():
                (folder / name).write_text((folder.parent / name).read_text())


def _path_env(bins: dict[str, Path]) -> dict[str, str]:
    # containerd finds its shim (and the shim runc) on PATH.
    folders = dict.fromkeys(str(b.parent) for b in bins.values())
    return {**os.environ, "PATH": ":".join([*folders, os.environ.get("PATH", "/usr/bin:/bin")])}


def commands(layout: Layout, bins: dict[str, Path],
             device_plugin: list[str] | None = None) -> list[tuple[str, list[str], dict[str, str]]]:
    """The real node's processes in start order (name, argv, environment); GPU mode adds its device plugin."""
    env = _path_env(bins)
    kubelet_dir = layout.node_dir / "kubelet"
    plugin = [("device-plugin", device_plugin, env)] if device_plugin else []
    return [
        ("containerd", [str(bins["containerd"]), "--config", str(layout.node_dir / "containerd" / "config.toml"),
                        "--log-level", "warn"], env),
        ("service-proxy", [sys.executable, str(TOOLS_DIR / "service_proxy.py"), "--listen", f"{layout.service_host}:443",
                           "--to", f"127.0.0.1:{layout.apiserver_port}"], env),
        ("gitlab-standin", [sys.executable, str(TOOLS_DIR / "gitlab_standin.py"),
                            "--listen", f"{layout.real_node_ip}:{GITLAB_STANDIN_PORT}",
                            "--record", str(layout.node_dir / "gitlab-standin.jsonl"),
                            "--repos", str(layout.node_dir / GITLAB_STANDIN_REPOS),
                            "--runners", str(layout.node_dir / GITLAB_STANDIN_RUNNERS)], env),
        ("kubelet", [str(bins["kubelet"]), f"--config={kubelet_dir / 'config.yaml'}",
                     f"--kubeconfig={kubelet_dir / 'kubeconfig'}", f"--root-dir={kubelet_dir / 'root'}",
                     f"--hostname-override={REAL_NODE}", f"--node-ip={layout.real_node_ip}",
                     f"--node-labels={REAL_NODE_LABEL}=true", "--v=1"], env),
        *plugin,
    ]


def ctr(layout: Layout, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    ctr_bin = layout.binaries(("ctr",))["ctr"]
    return subprocess.run([str(ctr_bin), "--address", str(layout.containerd_socket), "--namespace", "k8s.io", *args],
                          capture_output=True, text=True, timeout=timeout, check=False)


def wait_containerd(layout: Layout, wait) -> None:
    wait("containerd", lambda: ctr(layout, "version", timeout=5).returncode == 0, timeout=60)


def import_images(layout: Layout, archives: list[Path]) -> None:
    for archive in archives:
        started = time.monotonic()
        done = ctr(layout, "images", "import", "--no-unpack=false", str(archive))
        if done.returncode != 0:
            raise SystemExit(f"testbed: importing {archive} failed: {done.stderr.strip()}")
        print(f"testbed: imported {archive.name} ({archive.stat().st_size / 1e6:.0f} MB, "
              f"{time.monotonic() - started:.1f}s)", flush=True)


def image_references(layout: Layout) -> set[str]:
    """The image references containerd holds for the kubelet."""
    listed = ctr(layout, "images", "list", "--quiet")
    if listed.returncode != 0:
        raise SystemExit(f"testbed: listing the real node's images failed: {listed.stderr.strip()}")
    return set(listed.stdout.split())


def node_ready(layout: Layout) -> bool:
    try:
        node = ApiClient(layout).get(f"/api/v1/nodes/{REAL_NODE}")
    except OSError:
        return False
    return any(c["type"] == "Ready" and c["status"] == "True" for c in node.get("status", {}).get("conditions", []))


# --- stopping ---------------------------------------------------------------

def drain(layout: Layout, timeout: float = 30) -> None:
    """Delete the real node's pods and wait until kubelet has stopped their
    containers, so sandboxes, network namespaces and volumes are cleaned by
    the components that made them."""
    api = ApiClient(layout)
    try:
        pods = api.get(f"/api/v1/pods?fieldSelector=spec.nodeName={REAL_NODE}")["items"]
    except OSError:
        return
    for pod in pods:
        meta = pod["metadata"]
        try:
            api.request("DELETE", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
                        {"gracePeriodSeconds": 0})
        except OSError:
            pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        listed = ctr(layout, "tasks", "list", "--quiet", timeout=10)
        if listed.returncode != 0 or not listed.stdout.strip():
            return
        time.sleep(1)


def kill_leftover_tasks(layout: Layout) -> None:
    """After kubelet is gone: kill and delete any task it did not stop."""
    listed = ctr(layout, "tasks", "list", "--quiet", timeout=10)
    for task in listed.stdout.split() if listed.returncode == 0 else []:
        ctr(layout, "tasks", "kill", "--signal", "SIGKILL", task, timeout=10)
        ctr(layout, "tasks", "delete", "--force", task, timeout=10)


def leftover_shims(layout: Layout) -> list[int]:
    """containerd's shims outlive containerd by design; ours name our socket."""
    marker = str(layout.containerd_socket).encode()
    return [pid for pid, cmdline in running_cmdlines() if b"containerd-shim" in cmdline and marker in cmdline]


def running_cmdlines():
    """(pid, raw command line) of every process this machine runs; one gone while read is left out."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            yield int(proc.name), (proc / "cmdline").read_bytes()
        except OSError:
            continue


def unmount_under(folder: Path) -> list[str]:
    """Unmount everything mounted below folder, deepest first."""
    prefix = str(folder) + "/"
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point.startswith(prefix):
            points.append(point)
    for point in sorted(points, key=len, reverse=True):
        subprocess.run(["umount", "--lazy", point], check=False, capture_output=True)
    return points


def remove_cgroups(layout: Layout) -> None:
    """kubelet's pod cgroups (cgroupfs driver) are left behind when it stops; so is our cgroup root."""
    name = layout.cgroup_root.strip("/")
    base = Path("/sys/fs/cgroup")
    roots = [base / name / "kubepods"] if cgroup_version() == 2 else \
        [p / name / "kubepods" for p in base.iterdir() if (p / name / "kubepods").is_dir()]
    for root in roots:
        if not root.is_dir():
            continue
        for folder in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
            try:
                folder.rmdir()
            except OSError:
                pass
        try:
            root.rmdir()
        except OSError:
            pass
    for folder in cgroup_root_folders(layout):
        try:
            folder.rmdir()
        except OSError:
            pass


def clean_up(layout: Layout) -> None:
    """Everything `down` must undo after the processes are stopped."""
    for pid in leftover_shims(layout):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    unmount_under(layout.state)
    remove_bridge(layout)
    remove_cgroups(layout)
    if not other_real_nodes(layout):  # the machine's one device-plugin folder, while no other kubelet uses it
        if (layout.node_dir / "made-var-lib-kubelet").exists():
            shutil.rmtree(DEVICE_PLUGIN_DIR.parent, ignore_errors=True)
        DEVICE_CHECKPOINT.unlink(missing_ok=True)  # this node's allocations end with it
    shutil.rmtree(layout.node_dir, ignore_errors=True)
