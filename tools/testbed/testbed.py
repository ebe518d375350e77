# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The local testbed: a real Kubernetes control plane, one real node and simulated GPU nodes.

Real: etcd, kube-apiserver (RBAC, service accounts, admission), controller-
manager, scheduler, helm, the upstream charts, and the node real-0 (kubelet,
containerd, runc, CNI: containers really run there; no GPU outside GPU mode).
GPU mode (lib/gpu.py, GPUCI_TESTBED_GPU=auto|on|fake|off): on a host with an
NVIDIA GPU, real-0 runs containers with it (container_toolkit role, device plugin,
and a DRA kubelet plugin stand-in for driver gpu.nvidia.com).
Simulated: the GPU, CPU and dri nodes, kept Ready by kwok, which also marks
scheduled pods Running (containers do not run), completes pods owned by Jobs
and finishes deletions at once. GPUCI_TESTBED_REAL_NODE=0 leaves real-0 out.
The Prometheus Operator's CRDs are installed (lib/crds.py); the operator is not run.
DRA: NVIDIA's DeviceClasses and the simulated GPU nodes' ResourceSlices are made
at every `up` (lib/dra_slices.py, stand-ins of what NVIDIA's driver publishes).

    testbed.py up [--ttl SECONDS]   start everything, write .testbed/kubeconfig
    testbed.py down                 stop what `up` started (by PID), remove state
    testbed.py status               print what runs and the cluster version
    testbed.py stop|start COMPONENT stop or restart one server (fault tests)
    testbed.py prometheus start|reload [--rules FILE ...]   the real Prometheus, its scrape
                                    jobs made from the cluster's PodMonitors (lib/prometheus.py)
    testbed.py prometheus stop|status

Every server listens on 127.0.0.1 only. `up` also starts a watchdog that runs
`down` after --ttl seconds, so a forgotten testbed does not live forever.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib import certs, cluster, crds, dra_slices, gpu, images, node, processes, prometheus, provided_images  # noqa: E402
from lib.api import ApiClient  # noqa: E402
from lib.layout import GPU_BINARIES, Layout  # noqa: E402


def cmd_up(layout: Layout, ttl: int) -> int:
    if processes.running(layout):
        print(f"testbed already running (kubeconfig {layout.kubeconfig})")
        return 0
    started = time.monotonic()
    layout.reset()
    binaries = layout.binaries()
    certs.write_all(layout)
    cluster.write_kubeconfigs(layout)
    for name, argv in cluster.server_commands(layout, binaries):
        processes.start(layout, name, argv)
        if name == "etcd":
            cluster.wait_etcd(layout)
        if name == "kube-apiserver":
            cluster.wait_apiserver(layout, started)
    cluster.create_nodes(layout)
    print(f"testbed: DRA: {dra_slices.create(layout)}", flush=True)
    installed = crds.install(layout)
    print(f"testbed: CRDs from {crds.prometheus_operator_dir()} Established: {', '.join(installed)}", flush=True)
    processes.start_watchdog(layout, ttl)
    if layout.real_node:
        start_real_node(layout, started)
    cluster.wait_ready(layout, started)
    print(f"testbed up in {time.monotonic() - started:.1f}s: kubeconfig {layout.kubeconfig}, "
          f"charts {layout.chart_repo_url}, {cluster.version(layout)}")
    kinds = cluster.node_kinds(layout)
    print("real nodes (containers run): " + (", ".join(n for n, k in kinds if k == "real") or "none"))
    print("simulated nodes (kwok, no container runs): " + ", ".join(n for n, k in kinds if k == "simulated"))
    return 0


def start_real_node(layout: Layout, started: float) -> None:
    provided_images.refuse_wrong_archives()  # before the node starts: a wrong archive is named, not crash-looped
    bins = node.prepare(layout)
    runtime = "runc behind the CAP_SYS_RESOURCE wrapper (test harness)" \
        if node.bounding_set_lacks_sys_resource() else "runc"
    print(f"testbed: real node {node.REAL_NODE} on {layout.node_bridge} ({layout.real_node_ip}): "
          f"cgroup v{node.cgroup_version()}, {runtime}", flush=True)
    driver = gpu.choose(layout)
    device_plugin = start_gpu_mode(layout, driver, bins) if driver else None
    in_namespace = node.start_mount_namespace(
        layout, lambda what, check, timeout: cluster.wait_for(what, check, started, timeout=timeout)) if driver else []
    for name, argv, env in node.commands(layout, bins, device_plugin):
        processes.start(layout, name, argv, env, via=in_namespace if name in node.IN_MOUNT_NAMESPACE else ())
        if name == "containerd":
            cluster.wait_for("containerd", lambda: node.ctr(layout, "version", timeout=5).returncode == 0,
                             started, timeout=60)
            node.import_images(layout, images.archives())
            report_real_components(layout)
    cluster.wait_for(f"real node {node.REAL_NODE} Ready", lambda: node.node_ready(layout), started, timeout=120)
    if driver:
        finish_gpu_mode(layout, driver, started)


def start_gpu_mode(layout: Layout, driver: gpu.Driver, bins: dict) -> list[str]:
    """Before containerd starts: the container_toolkit role edits its config; returns the device plugin's argv."""
    what = "FAKE driver (tests/standins, no GPU: nothing can be proved)" if driver.fake \
        else f"host driver, nvidia-smi {driver.nvidia_smi}"
    print(f"testbed: GPU mode on real node {node.REAL_NODE}: {what}", flush=True)
    gpu_bins = layout.binaries(GPU_BINARIES + (gpu.DRA_PLUGIN_BINARY,))  # all built, before anything starts
    gpu.add_cdi_spec_dir(layout)  # before the role, whose nvidia-ctk keeps it (lib/gpu.py)
    gpu.run_toolkit_role(layout, gpu.toolkit_vars(layout, driver, gpu_bins, node.container_runc(layout, bins["runc"])))
    return gpu.device_plugin_command(layout, gpu_bins, node.private_device_plugin_dir(layout))


def finish_gpu_mode(layout: Layout, driver: gpu.Driver, started: float) -> None:
    """After the node is Ready: GFD-style labels, the GPUs the device plugin advertises, and the DRA plugin
    stand-in (started now, beside the device plugin) with real-0's ResourceSlice of gpu.nvidia.com."""
    api = ApiClient(layout)
    api.merge_patch(f"/api/v1/nodes/{node.REAL_NODE}", {"metadata": {"labels": driver.labels}})
    cluster.wait_for(f"{gpu.RESOURCE} advertised by the device plugin on {node.REAL_NODE}",
                     lambda: gpu.node_advertises_gpus(api.get(f"/api/v1/nodes/{node.REAL_NODE}")), started, timeout=60)
    allocatable = api.get(f"/api/v1/nodes/{node.REAL_NODE}")["status"]["allocatable"][gpu.RESOURCE]
    print(f"testbed: real node {node.REAL_NODE} advertises {gpu.RESOURCE}: {allocatable}, labelled "
          + ", ".join(f"{k}={v}" for k, v in sorted(driver.labels.items())), flush=True)
    binary = layout.binaries((gpu.DRA_PLUGIN_BINARY,))[gpu.DRA_PLUGIN_BINARY]
    processes.start(layout, "dra-plugin", gpu.dra_plugin_command(layout, driver, binary))
    expected = int(driver.labels.get("nvidia.com/gpu.count", "1"))
    slices = f"/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName={node.REAL_NODE}"
    # The kubelet wipes its node's slices when it starts; the plugin's controller makes them again (30 s).
    cluster.wait_for(f"the ResourceSlice of {gpu.DRA_DRIVER} on {node.REAL_NODE} with {expected} devices, published "
                     f"by the DRA plugin stand-in (log {layout.logs / 'dra-plugin.log'})",
                     lambda: gpu.dra_slice_devices(api.get(slices)["items"]) == expected, started, timeout=90)
    print(f"testbed: real node {node.REAL_NODE} offers {expected} GPU(s) through DRA too (driver {gpu.DRA_DRIVER}, "
          "DRA kubelet plugin STAND-IN, test harness only): the same GPU as the device plugin's", flush=True)


def report_real_components(layout: Layout) -> None:
    """Say which charts' components run for real, and what the others lack (inventories/local reads the list)."""
    held = node.image_references(layout)
    real = images.write_real_components(layout, held)
    print("testbed: components that run for real on the real node: " + (", ".join(real) or "none"), flush=True)
    for component, refs in images.missing_images(held).items():
        print(f"testbed: {component} runs on simulated nodes only (nothing executes): its image is not provided "
              f"({', '.join(refs)}; see docs/testbed-images.md)", flush=True)


def stop_everything(layout: Layout) -> list[str]:
    """Stop in an order that lets each component clean up after itself: the real
    node's pods first (while the API server and kubelet still run), then the
    processes, then what they leave behind (shims, mounts, the bridge).

    The controller manager goes before the pods, so that nothing makes them
    again: the runner managers' ReplicaSets did, on the real node, and the
    drain waited out its whole 30 s bound (`down` took 36 s instead of 5)."""
    stopped = []
    if layout.real_node and processes.is_running(layout, "kubelet"):
        if processes.stop(layout, "kube-controller-manager"):
            stopped.append("kube-controller-manager")
        node.drain(layout)
    # GPU mode's DRA plugin goes before the kubelet it registered with (as in processes.STOP_ORDER).
    for name in ("watchdog", "dra-plugin", "kubelet"):
        if processes.stop(layout, name):
            stopped.append(name)
    if layout.real_node and processes.is_running(layout, "containerd"):
        node.kill_leftover_tasks(layout)
    stopped += processes.stop_all(layout)
    if layout.real_node:
        node.clean_up(layout)
    return stopped


def cmd_down(layout: Layout) -> int:
    started = time.monotonic()
    stopped = stop_everything(layout)
    layout.remove_state()
    print(f"testbed down in {time.monotonic() - started:.1f}s (stopped: {', '.join(stopped) or 'nothing'})")
    return 0


def cmd_status(layout: Layout) -> int:
    alive = processes.running(layout)
    if not alive:
        print("testbed not running")
        return 1
    print("running: " + ", ".join(f"{name} (pid {pid})" for name, pid in alive))
    print(cluster.version(layout))
    return 0


def cmd_prometheus(layout: Layout, action: str, rules: list[Path] | None) -> int:
    if action == "stop":
        print("prometheus: " + ("stopped" if prometheus.stop(layout) else "was not running"))
        return 0
    if action == "status":
        if not processes.is_running(layout, prometheus.NAME):
            print("prometheus: not running")
            return 1
        client = prometheus.Prometheus(layout.prometheus_url)
        targets = client.targets()
        print(f"prometheus: {layout.prometheus_url}, configuration {prometheus.config_file(layout)}, "
              f"{len(targets)} active targets")
        for target in targets:
            print("  " + prometheus.target_line(target))
        return 0
    if action == "reload" and not processes.is_running(layout, prometheus.NAME):
        raise SystemExit("prometheus: not running; start it with testbed.py prometheus start")
    started = time.monotonic()
    client = prometheus.start(layout, rules)
    jobs = prometheus.job_names(layout)
    print(f"prometheus: ready at {client.url} in {time.monotonic() - started:.1f}s; scrape jobs from PodMonitors: "
          f"{', '.join(jobs) or 'none'}; rule files: {len(list(prometheus.rules_dir(layout).glob('*.yml')))}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start the testbed")
    up.add_argument("--ttl", type=int, default=int(os.environ.get("GPUCI_TESTBED_TTL", "10800")),
                    help="stop everything after this many seconds (default 3 h)")
    sub.add_parser("down", help="stop the testbed and remove its state")
    sub.add_parser("status", help="show what runs")
    for verb in ("stop", "start"):
        one = sub.add_parser(verb, help=f"{verb} one component, e.g. kube-apiserver (fault tests)")
        one.add_argument("component", choices=processes.STOP_ORDER[1:])
    prom = sub.add_parser("prometheus", help="start, reload, stop or show the testbed's Prometheus")
    prom.add_argument("action", choices=("start", "reload", "stop", "status"))
    prom.add_argument("--rules", type=Path, action="append",
                      help="a rules file to load (repeatable; replaces the ones loaded before)")
    wd = sub.add_parser("_watchdog", help=argparse.SUPPRESS)
    wd.add_argument("--ttl", type=int, required=True)
    args = parser.parse_args(argv)

    layout = Layout.from_environment()
    if args.command == "up":
        try:
            return cmd_up(layout, args.ttl)
        except BaseException:  # SystemExit too: a wait that gave up must not leave servers running
            print("testbed failed to start; stopping what was started. Logs: " + str(layout.logs), file=sys.stderr)
            stop_everything(layout)
            raise
    if args.command == "down":
        return cmd_down(layout)
    if args.command == "status":
        return cmd_status(layout)
    if args.command == "prometheus":
        return cmd_prometheus(layout, args.action, args.rules)
    if args.command == "stop":
        print(f"{args.component}: " + ("stopped" if processes.stop(layout, args.component) else "was not running"))
        return 0
    if args.command == "start":
        print(f"{args.component}: running as pid {processes.restart(layout, args.component)}")
        if args.component == "kube-apiserver":
            cluster.wait_apiserver(layout, time.monotonic())
        return 0
    processes.watchdog(layout, args.ttl, cmd_down)
    return 0


if __name__ == "__main__":
    sys.exit(main())
