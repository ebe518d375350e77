# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GitLab Runner built from source for the testbed (tools/testbed/upstream/gitlab-runner.sh).

The Go module proxy refuses some of the runner's dependencies; the build
replaces them with the stand-ins in tools/testbed/upstream/gitlab-runner-stubs.
These tests check that every stand-in says what it is and fails loudly, and,
when the binaries and images are built, that the runner reads the
config.toml our filter renders the way the chart hands it over, fails only
on reaching GitLab, and that the images carry what the chart runs.
Tests that need a build skip, naming the command that makes it.
"""

import gzip
import io
import json
import os
import re
import socket
import subprocess
import tarfile
import threading
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_config import gitlab_runner_config

REPO = Path(__file__).resolve().parents[2]
UPSTREAM_DIR = REPO / "tools" / "testbed" / "upstream"
SCRIPT = UPSTREAM_DIR / "gitlab-runner.sh"
STUBS = UPSTREAM_DIR / "gitlab-runner-stubs"
CACHE = Path(os.environ.get("GPUCI_TESTBED_CACHE", Path.home() / ".cache" / "gpuci-testbed"))
CHARTS = Path(os.environ.get("GPUCI_CHARTS_DIR", REPO.parent / "shared" / "charts"))
STUBBED = "stubbed in the gpuci testbed build"
BUILD = "run `bash tools/testbed/upstream/gitlab-runner.sh` (or tools/testbed/build-images.sh)"

# Stand-in functions that succeed, with why that is not a silent success.
SUCCEEDING = {
    # a client whose every call fails
    "fleeting-nesting/api/api.go": {"New"},
    # plain socket paths: the steps CLI asks for the default when it starts
    "step-runner/pkg/api/api.go": {"DefaultSocketPath", "SocketAddr"},
    # nil-safe getters of plain structs
    "step-runner/proto/proto.go": {"GetSpec", "GetInputs"},
    # the container is built; its service fails
    "step-runner/pkg/di/di.go": {"WithStepFunc", "NewContainer"},
    # built for every payload with an `inputs` key; Eval fails
    "step-runner/pkg/api/expression/expression.go": {"NewEvaluator"},
    # job input values are read and type-checked as upstream; evaluating them fails (moa.ParseTemplate)
    "moa/value/value.go": {"String", "Null", "Object", "Kind", "HasMarks", "WithMarks", "UnmarshalJSON",
                           "MarshalJSON"},
    # options record nothing; taskscaler.New fails
    "fleeting-taskscaler/taskscaler.go": {"option"} | {
        "WithReservations", "WithReservationThrottling", "WithDeleteInstancesOnShutdown", "WithCapacityPerInstance",
        "WithMaxUseCount", "WithMaxInstances", "WithInstanceGroupSettings", "WithMetricsCollector",
        "WithFleetingMetricsCollector", "WithInstanceUpFunc", "WithHeartbeatFunc", "WithUpdateInterval",
        "WithUpdateIntervalWhenExpecting", "WithDeletionRetryInterval", "WithShutdownDeletionInterval",
        "WithShutdownDeletionRetries", "WithFailureThreshold", "WithLogger", "WithScaleThrottle", "WithStorage"},
    # metrics collectors are built before taskscaler.New, which fails; using one panics
    "fleeting-taskscaler-metrics-prometheus/prometheus.go": {"option", "New", "WithConstLabels",
                                                             "WithInstanceReadinessTimeBuckets"},
    "fleeting-metrics-prometheus/prometheus.go": {"option", "New", "WithConstLabels",
                                                  "WithInstanceCreationTimeBuckets", "WithInstanceIsRunningTimeBuckets",
                                                  "WithInstanceDeletionTimeBuckets", "WithInstanceLifeDurationBuckets"},
}
FAILS = re.compile(r"stub\.(Err|Panic)\(|errStubbed\(|panic\(|" + re.escape(STUBBED))
FUNC = re.compile(r"^func (?:\([^)]*\) )?(\w+)")


def _functions(text):
    """(name, body) of each top-level func in a gofmt'ed Go file."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = FUNC.match(line)
        if not match:
            continue
        if line.rstrip().endswith("}"):  # one-line func
            yield match.group(1), line[line.index("{"):]
            continue
        end = lines.index("}", i + 1)  # gofmt closes a top-level func with "}" alone
        yield match.group(1), "\n".join(lines[i + 1:end])


def _stub_files(suffix):
    files = sorted(p for p in STUBS.rglob("*" + suffix))
    assert files, f"no {suffix} files under {STUBS}"
    return files


def test_every_stand_in_says_what_it_replaces():
    for path in _stub_files(".go") + _stub_files("go.mod"):
        text = path.read_text()
        assert text.startswith("// Stand-in for "), f"{path}: no stand-in header"
        if path.suffix == ".go":
            header = text.split("\npackage ", 1)[0]
            assert re.search(r"Stand-in for gitlab\.com/\S+@v", header), f"{path}: header names no module version"
            assert "gitlab-runner" in header, f"{path}: header does not say what it is for"
        else:
            header = text.split("\nmodule ", 1)[0]
            module = re.search(r"^module (\S+)", text, re.M).group(1)
            assert module in header, f"{path}: header does not name {module}"
        assert STUBBED in header, f"{path}: header does not say calls fail ({STUBBED!r})"


def test_the_build_replaces_exactly_the_stand_ins():
    script = SCRIPT.read_text()
    replaced = dict(re.findall(r"^\s+(gitlab\.com/\S+)=(\S+)$", script, re.M))
    folders = {p.parent.name: re.search(r"^module (\S+)", p.read_text(), re.M).group(1)
               for p in STUBS.glob("*/go.mod")}
    assert {folder: module for module, folder in replaced.items()} == folders


def test_stand_ins_fail_loudly():
    """Every stand-in function fails (error or panic naming the stand-in) or is listed above with why."""
    succeeding = {}
    for path in _stub_files(".go"):
        rel = str(path.relative_to(STUBS))
        for name, body in _functions(path.read_text()):
            if not FAILS.search(body):
                succeeding.setdefault(rel, set()).add(name)
    assert succeeding == SUCCEEDING
    for rel in ("step-runner/internal/stub/stub.go", "moa/internal/stub/stub.go",
                "fleeting-taskscaler/internal/stub/stub.go", "fleeting-nesting/api/api.go",
                "phrasestream/addmask/addmask.go"):
        assert STUBBED in (STUBS / rel).read_text(), rel


# --- the built binaries ------------------------------------------------------

def _upstream_env():
    env = {}
    for line in (REPO / "tools" / "testbed" / "upstream.env").read_text().splitlines():
        if re.match(r"^[A-Z_]+=", line):
            key, value = line.split("=", 1)
            env[key] = value
    return env


UPSTREAM = _upstream_env()
VERSION = UPSTREAM["GITLAB_RUNNER_VERSION"]
BIN = CACHE / f"gitlab-runner-{VERSION}" / "bin"


def _binary(name):
    path = BIN / name
    if not os.access(path, os.X_OK):
        pytest.skip(f"{path} is not built: {BUILD}")
    return path


def _run(*args, cwd=None, timeout=60):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          check=False)


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


POOL = {"name": "gpu-l40s", "gpu_class": "l40s", "gpus": 1, "token": "glrt-SECRET"}


def _chart_template(tmp_path):
    """The config.toml our filter renders, as the chart's register step gets it
    (runners.config through Helm's tpl: the release namespace filled in)."""
    text = gitlab_runner_config(POOL).replace("{{ .Release.Namespace }}", "gitlab-runners")
    path = tmp_path / "config.template.toml"
    path.write_text(text)
    return path


def test_runner_reports_the_release_version():
    result = _run(_binary("gitlab-runner"), "--version")
    assert result.returncode == 0, result.stderr
    assert re.search(r"^Version:\s+%s$" % re.escape(VERSION.lstrip("v")), result.stdout, re.M), result.stdout
    assert re.search(r"^Git revision:\s+%s$" % UPSTREAM["GITLAB_RUNNER_COMMIT"][:8], result.stdout, re.M)
    for command in ("register", "run", "verify", "unregister"):
        help_ = _run(_binary("gitlab-runner"), command, "--help")
        assert help_.returncode == 0 and f"gitlab-runner {command}" in help_.stdout, command


def test_register_merges_our_config_and_fails_only_on_reaching_gitlab(tmp_path):
    """What the chart's register-the-runner does, against a closed port."""
    url = f"http://127.0.0.1:{_closed_port()}"
    result = _run(_binary("gitlab-runner"), "register", "--non-interactive",
                  "--template-config", _chart_template(tmp_path), "--config", tmp_path / "config.toml",
                  "--url", url, "--token", "glrt-testbed", "--executor", "kubernetes", cwd=tmp_path)
    out = result.stdout + result.stderr
    assert "Merging configuration from template file" in out, out
    assert "connection refused" in out and f"{url}/api/v4/runners/verify" in out, out
    assert "Failed to verify the runner" in out


def test_run_and_list_read_our_config(tmp_path):
    """The config.toml register would write (our runner table plus url and token): the runner lists it,
    `verify` and `run` fail only on reaching GitLab."""
    url = f"http://127.0.0.1:{_closed_port()}"
    runner = _chart_template(tmp_path).read_text().replace(
        "[[runners]]\n", f'[[runners]]\nurl = "{url}"\ntoken = "glrt-testbed"\n', 1)
    config = tmp_path / "config.toml"
    config.write_text("concurrent = 1\ncheck_interval = 3\n\n" + runner)
    gitlab_runner = _binary("gitlab-runner")

    listed = _run(gitlab_runner, "list", "--config", config)
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"gpu-l40s\s.*Executor\S*=kubernetes.*URL\S*=" + re.escape(url), listed.stderr), listed.stderr

    verified = _run(gitlab_runner, "verify", "--config", config)
    assert "connection refused" in verified.stderr and "/api/v4/runners/verify" in verified.stderr, verified.stderr

    workdir = tmp_path / "work"
    workdir.mkdir()
    proc = subprocess.Popen([str(gitlab_runner), "run", "--config", str(config), "--working-directory", str(workdir)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    watchdog = threading.Timer(60, proc.kill)  # a runner that never asks for jobs fails the test, not hangs it
    watchdog.start()
    out = ""
    try:
        for line in proc.stdout:
            out += line
            if "/api/v4/jobs/request" in line:
                break
    finally:
        watchdog.cancel()
        proc.kill()  # no graceful shutdown needed (and it would block on the unread pipe)
        proc.communicate(timeout=30)
    assert "Configuration loaded" in out, out
    assert "connection refused" in out, out


@pytest.mark.parametrize("command, what", [
    (["steps", "serve", "--socket", "{tmp}/steps.sock"], "step-runner"),
    (["proxy-exec", "--temp-dir", "{tmp}", "true"], "phrasestream"),
])
def test_stubbed_commands_fail_naming_the_stand_in(tmp_path, command, what):
    result = _run(_binary("gitlab-runner"), *[c.format(tmp=tmp_path) for c in command], cwd=tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert what in out and STUBBED in out, out


def test_helper_reports_the_release_version():
    result = _run(_binary("gitlab-runner-helper"), "--version")
    assert result.returncode == 0, result.stderr
    assert re.search(r"^Version:\s+%s$" % re.escape(VERSION.lstrip("v")), result.stdout, re.M), result.stdout


# --- the images ----------------------------------------------------------------

def _archive(*flags):
    path = Path(_run("bash", SCRIPT, *flags, "--print-archive").stdout.strip())
    if not path.is_file():
        pytest.skip(f"{path} is not built: {BUILD}")
    return path


def _image(path, wanted):
    """Reference, config and the wanted files (path -> (TarInfo, bytes)) of an oci_image.py archive."""
    with tarfile.open(path) as tar:
        def read(name):
            return tar.extractfile(name).read()

        def blob(digest):
            return read("blobs/sha256/" + digest.split(":", 1)[1])

        (entry,) = json.loads(read("index.json"))["manifests"]
        manifest = json.loads(blob(entry["digest"]))
        config = json.loads(blob(manifest["config"]["digest"]))["config"]
        files = {}
        for layer in manifest["layers"]:
            with tarfile.open(fileobj=io.BytesIO(gzip.decompress(blob(layer["digest"])))) as lt:
                for m in lt:
                    name = m.name.removeprefix("./")
                    if name in wanted:
                        files[name] = (m, lt.extractfile(m).read() if m.isfile() else b"")
    return entry["annotations"]["io.containerd.image.name"], config, files


@pytest.fixture(scope="module")
def chart():
    tgz = CHARTS / "gitlab-runner-0.86.0.tgz"
    if not tgz.is_file():
        pytest.skip(f"{tgz} is missing (the testbed's charts; set GPUCI_CHARTS_DIR)")
    with tarfile.open(tgz) as tar:
        def read(name):
            return tar.extractfile(f"gitlab-runner/{name}").read().decode()

        return {"meta": yaml.safe_load(read("Chart.yaml")), "values": yaml.safe_load(read("values.yaml")),
                "deployment": read("templates/deployment.yaml"), "configmap": read("templates/configmap.yaml")}


def _labels_match(config):
    labels = config["Labels"]
    assert labels["org.opencontainers.image.source"] == "https://github.com/" + UPSTREAM["GITLAB_RUNNER_REPO"]
    assert labels["org.opencontainers.image.version"] == VERSION
    assert labels["org.opencontainers.image.revision"] == UPSTREAM["GITLAB_RUNNER_COMMIT"]
    assert "gitlab.com/gitlab-org/step-runner" in labels["gpuci.runners/stubbed-modules"]


def test_manager_image_is_what_the_chart_deploys(chart):
    values, app_version = chart["values"], chart["meta"]["appVersion"]
    assert f"v{app_version}" == VERSION
    ref, config, files = _image(_archive(), {
        "usr/bin/gitlab-runner", "usr/bin/dumb-init", "usr/bin/bash", "usr/bin/pgrep", "usr/bin/timeout",
        "entrypoint", "etc/passwd", "home/gitlab-runner", "etc/gitlab-runner", "etc/ssl/certs/ca-certificates.crt"})
    image = values["image"]
    assert ref == f"{image['registry']}/{image['image']}:alpine-v{app_version}"
    _labels_match(config)
    # the chart's command, probes and scripts
    for needed in ("/usr/bin/dumb-init", "/bin/bash", "/usr/bin/pgrep", "/entrypoint"):
        assert needed in chart["deployment"] + chart["configmap"], needed
    for name in ("usr/bin/gitlab-runner", "usr/bin/dumb-init", "usr/bin/bash", "usr/bin/pgrep", "usr/bin/timeout",
                 "entrypoint"):
        assert name in files and files[name][0].mode & 0o111, name
    assert b'exec gitlab-runner "$@"' in files["entrypoint"][1]
    assert config["Entrypoint"] == ["/usr/bin/dumb-init", "/entrypoint"]
    assert config["Cmd"] == ["run", "--user=gitlab-runner", "--working-directory=/home/gitlab-runner"]
    # the user the chart runs it as, with a home it can write
    uid, gid = values["podSecurityContext"]["runAsUser"], values["podSecurityContext"]["fsGroup"]
    passwd = {line.split(":")[0]: line.split(":") for line in files["etc/passwd"][1].decode().splitlines()}
    assert passwd["gitlab-runner"][2:4] == [str(uid), str(gid)]
    assert passwd["gitlab-runner"][5] == "/home/gitlab-runner"
    for name in ("home/gitlab-runner", "etc/gitlab-runner"):
        assert (files[name][0].uid, files[name][0].gid) == (uid, gid), name
    assert files["etc/ssl/certs/ca-certificates.crt"][0].size > 100_000


def test_helper_image_has_the_reference_the_executor_asks_for(chart):
    app_version = chart["meta"]["appVersion"]
    source = CACHE / "src" / f"gitlab-runner-{VERSION}" / "helpers" / "container" / "helperimage"
    if source.is_dir():  # the name and tag the executor computes, when the export is at hand
        assert 'GitLabRegistryName = "registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper"' in \
            (source / "info.go").read_text()
        assert 'tag := fmt.Sprintf("%s%s-%s", prefix, arch, revision)' in (source / "linux_info.go").read_text()
    ref, config, files = _image(_archive("--helper"), {
        "usr/bin/gitlab-runner-helper", "usr/bin/gitlab-runner-build", "usr/bin/git", "usr/bin/git-lfs",
        "usr/bin/bash", "usr/bin/dumb-init", "entrypoint"})
    assert ref == f"registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:x86_64-v{app_version}"
    _labels_match(config)
    for name in ("usr/bin/gitlab-runner-helper", "usr/bin/gitlab-runner-build", "usr/bin/git", "usr/bin/git-lfs",
                 "usr/bin/bash", "usr/bin/dumb-init", "entrypoint"):
        assert name in files and files[name][0].mode & 0o111, name
    assert b"umask 0000" in files["usr/bin/gitlab-runner-build"][1]
    assert config["Entrypoint"] == ["/usr/bin/dumb-init", "/entrypoint"]
    assert config["Cmd"] == ["sh"]
