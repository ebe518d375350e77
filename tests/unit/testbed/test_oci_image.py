# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Image archives: named for containerd and Docker, content-addressed, reproducible."""
import gzip
import hashlib
import io
import json
import tarfile

import oci_image


def _archive(tmp_path, name="a.tar", content=b"#!/bin/sh\necho hi\n"):
    rootfs = tmp_path / "rootfs"
    (rootfs / "bin").mkdir(parents=True, exist_ok=True)
    (rootfs / "bin" / "hello").write_bytes(content)
    out = tmp_path / name
    oci_image.main(["--ref", "gpuci.local/test/hello:1", "--out", str(out), "--layer", str(rootfs),
                    "--entrypoint", '["/bin/hello"]', "--label", "org.opencontainers.image.version=1"])
    with tarfile.open(out) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}


def test_archive_names_the_image_for_containerd_and_docker(tmp_path):
    members = _archive(tmp_path)
    index = json.loads(members["index.json"])
    assert index["manifests"][0]["annotations"]["io.containerd.image.name"] == "gpuci.local/test/hello:1"
    assert json.loads(members["manifest.json"])[0]["RepoTags"] == ["gpuci.local/test/hello:1"]


def test_blobs_match_their_digests_and_the_layer_holds_the_files(tmp_path):
    members = _archive(tmp_path)
    for name, data in members.items():
        if name.startswith("blobs/sha256/"):
            assert hashlib.sha256(data).hexdigest() == name.rsplit("/", 1)[1]
    digest = json.loads(members["index.json"])["manifests"][0]["digest"].split(":")[1]
    manifest = json.loads(members["blobs/sha256/" + digest])
    config = json.loads(members["blobs/sha256/" + manifest["config"]["digest"].split(":")[1]])
    assert config["config"]["Entrypoint"] == ["/bin/hello"]
    assert config["config"]["Labels"] == {"org.opencontainers.image.version": "1"}
    layer = gzip.decompress(members["blobs/sha256/" + manifest["layers"][0]["digest"].split(":")[1]])
    assert config["rootfs"]["diff_ids"] == ["sha256:" + hashlib.sha256(layer).hexdigest()]
    with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
        hello = tar.getmember("bin/hello")
        assert (hello.uid, hello.mtime) == (0, 0)
        assert tar.extractfile(hello).read() == b"#!/bin/sh\necho hi\n"


def test_same_inputs_same_archive_other_inputs_other_digest(tmp_path):
    first = _archive(tmp_path, "one.tar")
    second = _archive(tmp_path, "two.tar")
    assert first == second
    changed = _archive(tmp_path, "three.tar", content=b"other")
    assert changed["index.json"] != first["index.json"]


def image_config(members):
    """The runtime config of a built image (index -> manifest -> config)."""
    digest = json.loads(members["index.json"])["manifests"][0]["digest"].split(":")[1]
    manifest = json.loads(members["blobs/sha256/" + digest])
    return json.loads(members["blobs/sha256/" + manifest["config"]["digest"].split(":")[1]])["config"]


def test_an_env_path_replaces_the_default_path():
    # Two PATH entries would leave the process with the first (the default) one.
    def env_of(members):
        return image_config(members)["Env"]

    assert env_of(oci_image.build("r:1", [b""], env=["A=1"])) == [
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "A=1"]
    assert env_of(oci_image.build("r:1", [b""], env=["PATH=/bin:/busybox", "A=1"])) == ["PATH=/bin:/busybox", "A=1"]


def test_a_stop_signal_is_kept_in_the_config_only_when_given():
    """The runner manager's image stops with SIGQUIT (graceful); other images keep the runtime's default."""
    assert image_config(oci_image.build("r:1", [b""], stop_signal="SIGQUIT"))["StopSignal"] == "SIGQUIT"
    assert "StopSignal" not in image_config(oci_image.build("r:1", [b""]))
