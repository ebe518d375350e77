# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU proof's bundle (tools/gpu/bundle.py): layout, parts, staging across calls, verification."""
import importlib.util
import os
import shutil
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location(
    "gpu_bundle", Path(__file__).resolve().parents[3] / "tools" / "gpu" / "bundle.py")
bundle = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(bundle)

needs_xz = pytest.mark.skipif(shutil.which("xz") is None, reason="the xz command is not installed")


@pytest.fixture
def fake_cache(tmp_path):
    """A build cache with two bin folders, a non-executable file, an image archive."""
    cache = tmp_path / "cache"
    for folder, names in (("kubernetes-v1.34.4", ("kubelet", "kubectl")), ("nvidia-ctk-v1.17.8", ("nvidia-ctk",))):
        (cache / folder / "bin").mkdir(parents=True)
        for name in names:
            binary = cache / folder / "bin" / name
            binary.write_bytes(os.urandom(3000))  # incompressible, so the parts really split
            binary.chmod(0o755)
    (cache / "kubernetes-v1.34.4" / "bin" / "README").write_text("not executable")
    (cache / "kubernetes-v1.34.4" / "bin" / "kube-apiserver").symlink_to("kubelet")  # as the multi-call binary
    (cache / "images").mkdir()
    (cache / "images" / "pause-3.10.1.tar").write_bytes(os.urandom(2000))
    bins = [cache / "kubernetes-v1.34.4" / "bin", cache / "nvidia-ctk-v1.17.8" / "bin"]
    return cache, bundle.cache_members(bins, [cache / "images" / "pause-3.10.1.tar"], [])


def test_members_keep_the_cache_layout_and_only_executables(fake_cache):
    _cache, members = fake_cache
    assert sorted(members) == ["cache/images/pause-3.10.1.tar", "cache/kubernetes-v1.34.4/bin/kube-apiserver",
                               "cache/kubernetes-v1.34.4/bin/kubectl",
                               "cache/kubernetes-v1.34.4/bin/kubelet", "cache/nvidia-ctk-v1.17.8/bin/nvidia-ctk"]


@pytest.mark.parametrize("folder_name, binary", [
    ("prometheus-v0.316.0-kubernetes-sd", "promtool"), ("gitlab-runner-7b0f3a00e5f3", "gitlab-runner")])
def test_cached_binaries_the_proof_does_not_run_stay_out(tmp_path, folder_name, binary):
    """No Prometheus runs in the proof; GitLab Runner's binaries travel inside its images."""
    folder = tmp_path / folder_name / "bin"
    folder.mkdir(parents=True)
    (folder / binary).write_bytes(b"x")
    (folder / binary).chmod(0o755)
    assert bundle.cache_members([folder], [], []) == {}


@needs_xz
def test_parts_respect_their_bound_and_round_trip_across_calls(fake_cache, tmp_path):
    _cache, members = fake_cache
    out, into = tmp_path / "bundle", tmp_path / "there"
    manifest = bundle.write_bundle(members, out, part_bytes=2048)
    assert len(manifest["parts"]) >= 2
    assert all(p["size"] <= 2048 for p in manifest["parts"])
    assert {f["path"] for f in manifest["files"]} == set(members)
    # Each call carries one part folder; the parts gather in `into` until unpack.
    for part in manifest["parts"]:
        carried = tmp_path / f"call-{part['folder']}"
        shutil.copytree(out / part["folder"], carried / part["folder"])
        assert bundle.stage(carried, into) == [part["name"]]
    assert bundle.unpack(into) == len(members)
    for name, source in members.items():
        assert (into / name).read_bytes() == source.read_bytes()
    assert (into / "cache/kubernetes-v1.34.4/bin/kube-apiserver").is_symlink()  # one copy travels


@needs_xz
def test_unpack_refuses_until_every_part_is_staged(fake_cache, tmp_path):
    _cache, members = fake_cache
    out, into = tmp_path / "bundle", tmp_path / "there"
    manifest = bundle.write_bundle(members, out, part_bytes=2048)
    first = tmp_path / "first"
    shutil.copytree(out / "part-00", first / "part-00")
    bundle.stage(first, into)
    with pytest.raises(SystemExit, match="parts not staged yet: " + manifest["parts"][1]["name"]):
        bundle.unpack(into)


@needs_xz
def test_a_corrupt_part_is_refused_when_staged(fake_cache, tmp_path):
    _cache, members = fake_cache
    out = tmp_path / "bundle"
    bundle.write_bundle(members, out, part_bytes=2048)
    part = out / "part-00" / bundle.PART_NAME.format(0)
    part.write_bytes(b"x" + part.read_bytes()[1:])
    with pytest.raises(SystemExit, match="does not match the manifest"):
        bundle.stage(out, tmp_path / "there")


def test_calls_needed_counts_one_part_a_call():
    mib = bundle.MIB
    assert bundle.calls_needed([56 * mib, 56 * mib, 30 * mib], int(1.5 * mib), 64 * mib) == 3
    with pytest.raises(ValueError, match="exceed one call's 64 MiB"):
        bundle.calls_needed([63 * mib], 2 * mib, 64 * mib)


def test_env_points_the_testbed_and_ansible_at_the_unpacked_bundle():
    lines = "\n".join(bundle.env_lines(Path("/var/tmp/b")))
    assert "GPUCI_TESTBED_CACHE=/var/tmp/b/cache" in lines
    assert "GPUCI_CHARTS_DIR=/var/tmp/b/charts" in lines
    assert "GPUCI_CRDS_DIR=/var/tmp/b/crds" in lines  # `up` installs the Prometheus Operator's CRDs
    assert "ANSIBLE_COLLECTIONS_PATH=/var/tmp/b/collections" in lines
    assert "--no-index" in lines and "GPUCI_ANSIBLE_PLAYBOOK=/var/tmp/b/site/bin/ansible-playbook" in lines
    assert "ln -sfn ../../.. .collections/ansible_collections/gpuci/runners" in lines


def test_wheels_already_on_the_gpu_machine_stay_behind():
    assert "pyyaml" in bundle.ALREADY_THERE and "ansible-core" not in bundle.ALREADY_THERE
