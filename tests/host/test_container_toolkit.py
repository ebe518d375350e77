"""roles/container_toolkit on a real Debian root, in the order an operator meets it.

The tests share one root (conftest.py) and run in file order: each starts
from the state the previous one left. The apt repository offers stand-in
packages at 1.17.8-1 and 1.18.0-1; both versions of nvidia-container-toolkit-base
carry the same real nvidia-ctk v1.17.8 binary (see standin_repo.py), so what
moves between versions is packaging, not nvidia-ctk's behaviour.
"""

import json

import pytest

PACKAGES = ("nvidia-container-toolkit", "nvidia-container-toolkit-base",
            "libnvidia-container-tools", "libnvidia-container1")
PIN, NEWER = "1.17.8-1", "1.18.0-1"
DAEMON_JSON = "/etc/docker/daemon.json"
TOOLKIT_TOML = "/etc/nvidia-container-runtime/config.toml"
PIN_FILE = "/etc/apt/preferences.d/nvidia-container-toolkit"
RUNTIME_TASK = "Configure the container runtime with nvidia-ctk"


def assert_ok(run):
    assert run.rc == 0, run.stderr


def nvidia_ctk_output(root, name, *argv):
    """What nvidia-ctk itself writes into a fresh file /tmp/expect/<name> of the root."""
    root.chroot("rm", "-rf", "/tmp/expect")
    root.chroot("mkdir", "/tmp/expect")
    root.chroot("nvidia-ctk", "--quiet", *[a.replace("{out}", f"/tmp/expect/{name}") for a in argv])
    return root.read(f"/tmp/expect/{name}")


def test_check_mode_on_a_fresh_root_writes_nothing(debian_root):
    before = debian_root.snapshot()
    run = debian_root.playbook(check=True)
    assert_ok(run)
    assert run.changed > 0
    assert debian_root.snapshot() == before


def test_converge_installs_the_four_packages_pinned_and_held(debian_root):
    run = debian_root.playbook()
    assert_ok(run)
    host = debian_root.host
    for name in PACKAGES:
        assert host.package(name).version == PIN
    holds = host.check_output("dpkg --get-selections " + " ".join(PACKAGES))
    assert sorted(line.split() for line in holds.splitlines()) == sorted([name, "hold"] for name in PACKAGES)
    pin = host.file(PIN_FILE).content_string
    assert f"Package: {' '.join(PACKAGES)}" in pin
    assert f"Pin: version {PIN}" in pin and "Pin-Priority: 1001" in pin
    source = host.file("/etc/apt/sources.list.d/nvidia-container-toolkit.sources").content_string
    assert "Signed-By: /etc/apt/keyrings/nvidia-container-toolkit.asc" in source
    assert "trusted" not in source  # the repository is verified with the test's key
    # The newer release is offered by the repository, and not taken.
    offered = host.check_output("apt-cache madison nvidia-container-toolkit")
    assert NEWER in offered and PIN in offered
    # A chroot has no systemd: the handler says so instead of restarting.
    assert any("docker was not restarted" in m and "not systemd" in m for m in run.messages())


def test_shared_verify_playbook_passes(debian_root):
    assert_ok(debian_root.playbook("verify.yml"))


def test_runtime_and_toolkit_config_are_what_nvidia_ctk_writes(debian_root):
    # Read directly: testinfra's content_string drops the final newline.
    daemon = debian_root.read(DAEMON_JSON)
    assert json.loads(daemon) == {
        "default-runtime": "nvidia",
        "runtimes": {"nvidia": {"args": [], "path": "nvidia-container-runtime"}},
    }
    assert daemon == nvidia_ctk_output(debian_root, "daemon.json", "runtime", "configure", "--runtime=docker",
                                       "--config={out}", "--set-as-default")
    toolkit = debian_root.read(TOOLKIT_TOML)
    assert "\naccept-nvidia-visible-devices-as-volume-mounts = true\n" in "\n" + toolkit
    assert toolkit == nvidia_ctk_output(debian_root, "config.toml", "config", "--config-file=/nonexistent",
                                        "--set=accept-nvidia-visible-devices-as-volume-mounts=true",
                                        "--output={out}")


def test_second_run_changes_nothing(debian_root):
    run = debian_root.playbook()
    assert_ok(run)
    assert run.changed == 0, run.changed_tasks()


def test_apt_upgrade_leaves_the_pinned_version(debian_root):
    debian_root.chroot("apt-get", "update", "-qq")
    debian_root.chroot("apt-get", "upgrade", "-y", "-qq")
    debian_root.chroot("apt-get", "dist-upgrade", "-y", "-qq")
    assert debian_root.versions() == dict.fromkeys(PACKAGES, PIN)


def test_check_mode_reports_a_changed_setting_and_writes_nothing(debian_root):
    before = debian_root.snapshot()
    run = debian_root.playbook(check=True, container_toolkit_set_as_default=False)
    assert_ok(run)
    assert [name.split(" : ")[-1] for name in run.changed_tasks()] == [RUNTIME_TASK]
    diff = next(r["diff"] for name, r in run.results() if name.endswith(RUNTIME_TASK))
    assert '"default-runtime"' in diff["before"] and '"default-runtime"' not in diff["after"]
    assert debian_root.snapshot() == before


def test_turning_the_default_runtime_off_and_on_again(debian_root):
    assert_ok(debian_root.playbook(container_toolkit_set_as_default=False))
    assert "default-runtime" not in json.loads(debian_root.read(DAEMON_JSON))
    run = debian_root.playbook(container_toolkit_set_as_default=False)
    assert_ok(run)
    assert run.changed == 0, run.changed_tasks()
    assert_ok(debian_root.playbook())
    assert json.loads(debian_root.read(DAEMON_JSON))["default-runtime"] == "nvidia"


def test_a_version_change_moves_all_four_packages(debian_root):
    assert_ok(debian_root.playbook(container_toolkit_version=NEWER))
    assert debian_root.versions() == dict.fromkeys(PACKAGES, NEWER)
    assert f"Pin: version {NEWER}" in debian_root.read(PIN_FILE)
    # ...and back: a downgrade when asked for.
    assert_ok(debian_root.playbook(container_toolkit_version=PIN))
    assert debian_root.versions() == dict.fromkeys(PACKAGES, PIN)
    assert f"Pin: version {PIN}" in debian_root.read(PIN_FILE)
    held = debian_root.chroot("dpkg", "--get-selections", *PACKAGES).stdout.split()
    assert held.count("hold") == len(PACKAGES)


def test_an_inline_key_equal_to_the_downloaded_one_changes_nothing(debian_root):
    key = debian_root.read("/srv/gpuci-apt/key.asc")
    run = debian_root.playbook(container_toolkit_repo_key_url="", container_toolkit_repo_key_content=key)
    assert_ok(run)
    assert run.changed == 0, run.changed_tasks()


@pytest.mark.parametrize("overrides, named", [
    ({"container_toolkit_runtime": "crio", "container_toolkit_cdi_enabled": True}, "container_toolkit_cdi_enabled"),
    ({"container_toolkit_runtime_config_path": "/etc/containerd/config.toml"}, "container_toolkit_runtime_config_path"),
    ({"container_toolkit_version": "1.17.8"}, "container_toolkit_version"),
    ({"container_toolkit_config": {"accept-nvidia-visible-devices-as-volume-mounts": False}}, "container_toolkit_volume_mounts"),
])
def test_preflight_refuses_contradictions_before_any_change(debian_root, overrides, named):
    before = debian_root.snapshot()
    run = debian_root.playbook(**overrides)
    assert run.rc != 0
    assert any(named in m for m in run.messages()), run.messages()
    assert debian_root.snapshot() == before


def test_absent_removes_what_the_role_made(debian_root):
    assert_ok(debian_root.playbook(container_toolkit_state="absent"))
    assert debian_root.versions() == {}
    for path in (PIN_FILE, DAEMON_JSON, TOOLKIT_TOML, "/etc/apt/keyrings/nvidia-container-toolkit.asc",
                 "/etc/apt/sources.list.d/nvidia-container-toolkit.sources"):
        assert not debian_root.host.file(path).exists, path
    assert "nvidia" not in debian_root.chroot("dpkg", "--get-selections").stdout
    run = debian_root.playbook(container_toolkit_state="absent")
    assert_ok(run)
    assert run.changed == 0, run.changed_tasks()
