# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The testbed's own Go tools are rebuilt whenever their sources change: their cache folders name the hash."""
import hashlib
import subprocess

import pytest

from lib.layout import TOOLS_DIR, component_bin_dirs

SOURCES = ("go.mod", "go.sum", "main.go")


@pytest.mark.parametrize("component, folder", [("device-plugin", "deviceplugin"), ("dra-plugin", "draplugin"),
                                               ("netsetup", "netsetup"), ("coredns-kind", "coredns"),
                                               ("runc-wrapper", "runcwrapper")])
def test_cache_folder_follows_the_sources(component, folder):
    digest = hashlib.sha256(b"".join((TOOLS_DIR / folder / name).read_bytes() for name in SOURCES))
    (bin_dir,) = component_bin_dirs(component)
    assert bin_dir.name == "bin"
    assert bin_dir.parent.name == f"{folder}-{digest.hexdigest()[:12]}"


def test_print_paths_is_the_testbeds_components_print_dir():
    """PATH gets the bin folder of every component `build.sh` builds by default, in build.sh's own naming."""
    build = (TOOLS_DIR / "build.sh").read_text()
    listed = build[build.index("TESTBED_COMPONENTS=(") + len("TESTBED_COMPONENTS=("):].split(")", 1)[0].split()
    assert {"kubernetes", "etcd", "kwok", "helm", "dra-plugin", "gitlab-runner", "prometheus"} <= set(listed)
    printed = subprocess.run(["bash", str(TOOLS_DIR / "build.sh"), "--print-paths"], capture_output=True,
                             text=True, check=True).stdout
    assert printed.split(":") == [str(path) for path in component_bin_dirs(*listed)]


def test_print_dir_refuses_an_unknown_component():
    answer = subprocess.run(["bash", str(TOOLS_DIR / "build.sh"), "--print-dir", "kwok", "kwock"], capture_output=True,
                            text=True, check=False)
    assert answer.returncode == 2
    assert "unknown component: kwock" in answer.stderr


def test_kubernetes_components_are_links_to_one_multi_call_binary():
    from lib.images import pinned  # pylint: disable=import-outside-toplevel
    from lib.layout import BINARIES, NODE_BINARIES, Layout  # pylint: disable=import-outside-toplevel
    try:
        found = Layout.from_environment().binaries(("kube-apiserver", "kubelet", "kubectl"))
    except SystemExit as e:
        pytest.skip(str(e))
    assert {"kube-apiserver", "kubectl"} <= set(BINARIES) and "kubelet" in NODE_BINARIES
    targets = {path.resolve() for path in found.values()}
    assert len(targets) == 1 and all(path.is_symlink() for path in found.values())
    wrong = subprocess.run([str(targets.pop())], capture_output=True, text=True, check=False)
    assert wrong.returncode == 2 and "run through a link named kube-apiserver" in wrong.stderr
    for name, path in found.items():
        version = subprocess.run([str(path), "version", "--client"] if name == "kubectl" else [str(path), "--version"],
                                 capture_output=True, text=True, check=False)
        assert pinned("KUBERNETES_VERSION") in version.stdout, (name, version.stdout, version.stderr)
