# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU mode of the real node: the host's NVIDIA driver, set up the way a seed-003 user has it.

GPUCI_TESTBED_GPU picks the mode:
- auto (default): on where the host has /dev/nvidiactl and nvidia-smi, else off;
- on: like auto, but a host without a GPU is an error;
- fake: a FAKE driver (tests/standins/fake_driver.py: device nodes made with
  mknod, an nvidia-smi script, the NVML stand-in) under the state folder, so CI
  machines without a GPU run every step of the wiring; nothing can be proved;
- off: no GPU mode.

In GPU mode the host driver stays as it is (GPU Operator with driver.enabled
and toolkit.enabled false would leave it too), and:
1. our own container_toolkit role configures the real node's containerd with
   nvidia-ctk (runtime `nvidia`), writes the toolkit's config.toml (CDI mode)
   and generates the CDI spec, for the driver layout found (GKE-style
   /usr/local/nvidia or the distribution's /usr);
2. the device plugin advertises nvidia.com/gpu to the kubelet. The NVIDIA
   device plugin v0.20.0 (what GPU Operator v26.7.0 deploys) cannot be built
   here (the Go module proxy refuses its module), so, unless its image is
   provided, the testbed's own stand-in plugin (tools/testbed/deviceplugin)
   advertises the devices of the generated CDI spec: the standalone fallback;
3. the testbed labels the node as GPU Feature Discovery would (product,
   memory, count), read from nvidia-smi; a stand-in of GFD, said so by the
   label gpuci.runners/gpu-labels=testbed;
4. Dynamic Resource Allocation: NVIDIA's DRA driver (gpu.nvidia.com) cannot
   be built here either (its module is refused too), so the testbed's own
   STAND-IN (test harness only) kubelet plugin, tools/testbed/draplugin, built
   on Kubernetes' kubelet plugin library, registers with the kubelet as
   driver gpu.nvidia.com and publishes real-0's ResourceSlice: one device per
   GPU of the same CDI spec, with NVIDIA's attribute names, productName as
   nvidia-smi prints it. A prepared claim's devices are the spec's CDI device
   ids, which containerd injects itself (its cdi_spec_dirs name the state
   folder's spec folder, add_cdi_spec_dir).

real-0 then offers the same GPU twice: as nvidia.com/gpu through the device
plugin and as a device of gpu.nvidia.com through DRA. That is a choice of the
test harness, so that both ways of asking for a GPU (gpu_allocation
device_plugin and dra) run on the one real node; on a user's cluster it is
the double allocation the collection's preflight reports, since nothing stops
a pod of each lane from getting the same GPU.

Nothing here is written outside the state folder: the toolkit's config.toml,
the CDI spec and a launcher that points the runtime at them live under it;
so do the DRA plugin's sockets and prepared claims (the kubelet's plugin
registration folder follows its --root-dir, unlike its device-plugin folder).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from .layout import REAL_NODE, REPO_ROOT, Layout
from .node import REAL_NODE_PLACEMENT

MODES = ("auto", "on", "fake", "off")
RESOURCE = "nvidia.com/gpu"
RUNTIME_HANDLER = "nvidia"
# Where a GKE-style host keeps the driver (measured on the lent H100 host).
GKE_DRIVER_DIR = Path("/usr/local/nvidia")
GFD_STAND_IN_LABEL = "gpuci.runners/gpu-labels"
FAKE_PRODUCT = "gpuci-FAKE-stand-in"
SMI_QUERY = ("--query-gpu=name,memory.total,driver_version", "--format=csv,noheader,nounits")
# NVIDIA's DRA driver's name (the domain of its device attributes), and our stand-in's binary.
DRA_DRIVER = "gpu.nvidia.com"
DRA_PLUGIN_BINARY = "gpuci-dra-plugin"


@dataclass(frozen=True)
class Driver:
    """Where the node's driver is: what nvidia-ctk and the runtime are told.

    root is nvidia-ctk's driver root: "/" on a host; the fake driver's own
    root, so that containers see it where they would see a host's
    (/usr/local/nvidia/bin/nvidia-smi). library_dirs are host paths.
    """
    nvidia_smi: Path
    root: Path = Path("/")
    dev_root: Path = Path("/")
    library_dirs: tuple[Path, ...] = ()
    fake: bool = False
    labels: dict[str, str] = field(default_factory=dict, compare=False)
    # What the DRA plugin publishes of each GPU (nvidia-smi's words; see gpu_facts).
    facts: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def executable_dirs(self) -> tuple[Path, ...]:
        """nvidia-smi's folder as nvidia-ctk looks it up: on PATH, under the driver root."""
        return (Path("/") / self.nvidia_smi.parent.relative_to(self.root),)


def mode() -> str:
    chosen = os.environ.get("GPUCI_TESTBED_GPU", "auto")
    if chosen not in MODES:
        raise SystemExit(f"testbed: GPUCI_TESTBED_GPU={chosen!r}; choose one of {', '.join(MODES)}")
    return chosen


def find_host_driver(dev: Path = Path("/dev"), gke_dir: Path = GKE_DRIVER_DIR) -> Driver | str:
    """The host's driver, or why there is none (a sentence)."""
    if not (dev / "nvidiactl").exists():
        return f"no NVIDIA GPU on this machine ({dev / 'nvidiactl'} missing)"
    gke_smi = gke_dir / "bin" / "nvidia-smi"
    if gke_smi.is_file():
        return Driver(nvidia_smi=gke_smi, dev_root=dev.parent, library_dirs=(gke_dir / "lib64",))
    smi = shutil.which("nvidia-smi")
    if not smi:
        return f"{dev / 'nvidiactl'} exists but nvidia-smi is neither on PATH nor in {gke_dir / 'bin'}"
    # The distribution's layout: nvidia-ctk finds the libraries by itself.
    return Driver(nvidia_smi=Path(smi), dev_root=dev.parent)


def fake_driver(root: Path) -> Driver:
    """The fake GKE-style driver under root (tests/standins/fake_driver.py)."""
    sys.path.insert(0, str(REPO_ROOT / "tests" / "standins"))
    try:
        import fake_driver as standin  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.pop(0)
    try:
        driver_dir = standin.lay_out(root)
    except standin.Unavailable as e:
        raise SystemExit(f"testbed: GPUCI_TESTBED_GPU=fake needs {e}") from e
    return Driver(nvidia_smi=driver_dir / "bin" / "nvidia-smi", root=root, dev_root=root,
                  library_dirs=(driver_dir / "lib64",), fake=True,
                  labels=fake_labels(), facts=fake_facts(standin.DRIVER_VERSION))


def choose(layout: Layout) -> Driver | None:
    """The driver GPU mode uses, or None when GPU mode is off (saying why)."""
    chosen = mode()
    if chosen == "off":
        return None
    if chosen == "fake":
        return fake_driver(layout.node_dir / "fake-driver")
    found = find_host_driver()
    if isinstance(found, str):
        if chosen == "on":
            raise SystemExit(f"testbed: GPUCI_TESTBED_GPU=on, but {found}")
        print(f"testbed: GPU mode off: {found}", flush=True)
        return None
    smi = query_smi(found)
    return replace(found, labels=labels_from_smi(smi), facts={**gpu_facts(smi), **smi_details(found)})


# --- node labels (a stand-in of GPU Feature Discovery) ----------------------

def _run_smi(driver: Driver, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "LD_LIBRARY_PATH": ":".join(str(d) for d in driver.library_dirs)}
    return subprocess.run([str(driver.nvidia_smi), *args], capture_output=True, text=True,
                          timeout=60, check=False, env=env)


def query_smi(driver: Driver) -> str:
    done = _run_smi(driver, *SMI_QUERY)
    if done.returncode != 0:
        raise SystemExit(f"testbed: {driver.nvidia_smi} {' '.join(SMI_QUERY)} failed "
                         f"(exit {done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def labels_from_smi(csv: str) -> dict[str, str]:
    """GFD's product, memory and count labels from `nvidia-smi --query-gpu=name,memory.total[,...]`."""
    rows = [[cell.strip() for cell in line.split(",")] for line in csv.splitlines() if line.strip()]
    if not rows:
        raise SystemExit("testbed: nvidia-smi listed no GPU")
    name, memory = rows[0][0], rows[0][1]
    return {
        "nvidia.com/gpu.present": "true",
        # GFD writes the product name with spaces as dashes (NVIDIA-H100-80GB-HBM3).
        "nvidia.com/gpu.product": "-".join(name.split()),
        "nvidia.com/gpu.memory": memory,
        "nvidia.com/gpu.count": str(len(rows)),
        GFD_STAND_IN_LABEL: "testbed",
    }


def gpu_facts(csv: str) -> dict[str, str]:
    """The first GPU's name (as nvidia-smi prints it: NVML's name), memory in MiB and driver version."""
    row = [cell.strip() for cell in csv.splitlines()[0].split(",")] if csv.strip() else []
    names = ("product_name", "memory_mib", "driver_version")
    return {name: value for name, value in zip(names, row) if value}


def smi_details(driver: Driver) -> dict[str, str]:
    """Brand and architecture from `nvidia-smi -q` (--query-gpu has neither); none when it fails."""
    try:
        done = _run_smi(driver, "-q")
    except (OSError, subprocess.SubprocessError):
        return {}
    found = {}
    for line in done.stdout.splitlines() if done.returncode == 0 else []:
        key, colon, value = line.partition(":")
        for wanted, name in (("Product Brand", "brand"), ("Product Architecture", "architecture")):
            if key.strip() == wanted and value.strip() and name not in found:
                found[name] = value.strip()
    return found


def fake_facts(driver_version: str) -> dict[str, str]:
    """The FAKE driver's GPU for the DRA plugin: the fake product (no class matches it), no memory."""
    return {"product_name": FAKE_PRODUCT, "driver_version": driver_version}


def fake_labels() -> dict[str, str]:
    """Labels no GPU class of ours matches: a fake GPU must never pass for a model."""
    return {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": FAKE_PRODUCT,
            "nvidia.com/gpu.count": "1", GFD_STAND_IN_LABEL: "testbed", "gpuci.runners/gpu-fake": "true"}


# --- container_toolkit role --------------------------------------------------

def toolkit_config(layout: Layout) -> Path:
    """The toolkit's config.toml, where the runtime looks with XDG_CONFIG_HOME=<node>/toolkit."""
    return layout.node_dir / "toolkit" / "nvidia-container-runtime" / "config.toml"


def runtime_launcher(layout: Layout, runtime: Path) -> Path:
    """nvidia-container-runtime reading its config.toml from the state folder (XDG_CONFIG_HOME)."""
    launcher = layout.node_dir / "nvidia-container-runtime"
    launcher.write_text("#!/bin/sh\n# gpuci testbed: the toolkit's config.toml lives under the state folder\n"
                        f"XDG_CONFIG_HOME={layout.node_dir / 'toolkit'} exec {runtime} \"$@\"\n")
    launcher.chmod(0o755)
    return launcher


def cdi_dir(layout: Layout) -> Path:
    return layout.node_dir / "cdi"


def toolkit_vars(layout: Layout, driver: Driver, bins: dict[str, Path], runc: Path) -> dict:
    """The container_toolkit role's variables for the real node (host toolkit, no packages)."""
    return {
        "container_toolkit_install_packages": False,
        "container_toolkit_runtime": "containerd",
        "container_toolkit_runtime_config_path": str(layout.node_dir / "containerd" / "config.toml"),
        # containerd is started after the role ran; nothing to restart.
        "container_toolkit_restart_runtime": False,
        "container_toolkit_nvidia_ctk_path": str(bins["nvidia-ctk"]),
        "container_toolkit_runtime_path": str(runtime_launcher(layout, bins["nvidia-container-runtime"])),
        "container_toolkit_config_path": str(toolkit_config(layout)),
        # CDI mode: pure Go, no libnvidia-container; the spec below says what a GPU is.
        "container_toolkit_config": {
            "nvidia-container-runtime.mode": "cdi",
            "nvidia-container-runtime.modes.cdi.spec-dirs": [str(cdi_dir(layout))],
            "nvidia-container-runtime.runtimes": [str(runc)],
        },
        "container_toolkit_cdi_generate": True,
        "container_toolkit_cdi_spec_path": str(cdi_dir(layout) / "nvidia.yaml"),
        "container_toolkit_cdi_driver_root": str(driver.root),
        "container_toolkit_cdi_dev_root": str(driver.dev_root),
        "container_toolkit_cdi_library_search_paths": [str(d) for d in driver.library_dirs],
        "container_toolkit_cdi_executable_search_paths": [str(d) for d in driver.executable_dirs],
        "container_toolkit_cdi_hook_path": str(bins["nvidia-cdi-hook"]),
    }


def run_toolkit_role(layout: Layout, variables: dict) -> None:
    """Run playbooks/container_toolkit.yml on this machine with the real node's variables."""
    vars_file = layout.node_dir / "container-toolkit-vars.json"
    vars_file.write_text(json.dumps(variables, indent=2))
    inventory = layout.node_dir / "container-toolkit-hosts.json"
    inventory.write_text(json.dumps({"gpu_hosts": {"hosts": {"localhost": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}))
    playbook = shutil.which("ansible-playbook", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    if not playbook:
        raise SystemExit("testbed: GPU mode runs the container_toolkit role, but ansible-playbook is not installed "
                         "(make venv installs it)")
    started = time.monotonic()
    print("testbed: GPU mode: container_toolkit role configures containerd and generates the CDI spec", flush=True)
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO_ROOT / "ansible.cfg"), "ANSIBLE_STDOUT_CALLBACK": "default"}
    done = subprocess.run([playbook, "-i", str(inventory), str(REPO_ROOT / "playbooks" / "container_toolkit.yml"),
                           "-e", f"@{vars_file}"], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    log = layout.logs / "container-toolkit.log"
    log.write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"testbed: the container_toolkit role failed (exit {done.returncode}); "
                         f"its output: {log}\n{done.stdout[-3000:]}")
    recap = [line for line in done.stdout.splitlines() if "localhost" in line and "ok=" in line]
    print(f"testbed: container_toolkit role done in {time.monotonic() - started:.1f}s: "
          f"{recap[-1].split(':', 1)[-1].strip() if recap else 'no recap'}", flush=True)


def device_plugin_command(layout: Layout, bins: dict[str, Path], plugin_dir: Path) -> list[str]:
    """The stand-in plugin's argv; plugin_dir is where the kubelet's registration socket is."""
    return [str(bins["gpuci-device-plugin"]), f"--cdi-spec-dir={cdi_dir(layout)}", f"--kind={RESOURCE}",
            f"--device-plugin-dir={plugin_dir}"]


def add_cdi_spec_dir(layout: Layout) -> None:
    """Point containerd's own CDI support at the state folder's spec folder (the default is /etc/cdi and
    /var/run/cdi). DRA's claims reach containers that way: the kubelet hands containerd the CDI device ids the
    DRA plugin prepared. Done before the role runs, so that nvidia-ctk's rewrite of the file keeps it and a
    second run of the role changes nothing."""
    import tomli_w  # the venv's TOML writer (requirements-test.txt)
    import tomllib
    path = layout.node_dir / "containerd" / "config.toml"
    config = tomllib.loads(path.read_text())
    runtime = config.setdefault("plugins", {}).setdefault("io.containerd.cri.v1.runtime", {})
    # Not enable_cdi: containerd 2.x has CDI on by default, and the container_toolkit role refuses a file
    # that sets it where its own cdi_enabled is false (module nvidia_ctk_config).
    runtime["cdi_spec_dirs"] = [str(cdi_dir(layout))]
    path.write_text(tomli_w.dumps(config))


def kubelet_root(layout: Layout) -> Path:
    """The real node's kubelet --root-dir (node.commands); its plugins_registry is where DRA plugins register."""
    return layout.node_dir / "kubelet" / "root"


def dra_plugin_command(layout: Layout, driver: Driver, binary: Path) -> list[str]:
    """The DRA kubelet plugin stand-in's argv: the real node's kubelet folders and identity, the GPU's facts."""
    facts = driver.facts
    argv = [str(binary), f"--cdi-spec-dir={cdi_dir(layout)}", f"--kind={RESOURCE}", f"--node-name={REAL_NODE}",
            # The kubelet's own credentials: the Node authorizer lets a node publish its own slices and read
            # the claims of its pods, no more, as a DRA driver's kubelet plugin should be limited.
            f"--kubeconfig={layout.node_dir / 'kubelet' / 'kubeconfig'}",
            f"--registrar-dir={kubelet_root(layout) / 'plugins_registry'}",
            f"--plugin-dir={kubelet_root(layout) / 'plugins' / DRA_DRIVER}",
            f"--product-name={facts.get('product_name', FAKE_PRODUCT if driver.fake else '')}",
            f"--driver-version={facts.get('driver_version', '')}",
            f"--brand={facts.get('brand', 'unknown')}", f"--architecture={facts.get('architecture', 'unknown')}"]
    if facts.get("memory_mib", "").isdigit():
        argv.append(f"--memory-mib={facts['memory_mib']}")
    return argv


def dra_slice_devices(slices: list[dict], node_name: str = REAL_NODE) -> int:
    """How many devices the ResourceSlices of driver gpu.nvidia.com on node_name hold."""
    return sum(len(s["spec"].get("devices") or []) for s in slices
               if s["spec"].get("driver") == DRA_DRIVER and s["spec"].get("nodeName") == node_name)


def node_advertises_gpus(node: dict) -> bool:
    return int((node.get("status", {}).get("allocatable") or {}).get(RESOURCE, "0")) > 0


# --- probes: a GPU pod and its negative control -------------------------------

# What a CUDA job does first, and whether the device nodes are there; the exit
# status of nvidia-smi is printed (127: not found, nothing was injected).
PROBE = "ls /dev/nvidia0 /dev/nvidiactl 2>&1; nvidia-smi; echo nvidia-smi-exit=$?"


def probe_pod(name: str, namespace: str, image: str, with_gpu: bool) -> dict:
    """A pod of the NVIDIA runtime class on the real node; with_gpu=False is the negative control."""
    resources = {"limits": {RESOURCE: "1"}} if with_gpu else {}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"restartPolicy": "Never", "runtimeClassName": RUNTIME_HANDLER, **REAL_NODE_PLACEMENT,
                     "containers": [{"name": "probe", "image": image, "imagePullPolicy": "Never",
                                     "command": ["sh", "-c", PROBE], "resources": resources}]}}


def saw_gpu(log: str) -> bool:
    """Whether a probe's container saw any of the driver: device node or nvidia-smi."""
    no_device = re.search(r"/dev/nvidia0'?: No such file", log)
    return "nvidia-smi-exit=127" not in log or not no_device
