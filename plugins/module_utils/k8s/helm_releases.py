# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Apply many Helm releases at once: decide per release, then run helm concurrently.

Why not kubernetes.core.helm in a loop: it handles one release per task, an
Ansible loop runs them one after another, and its action plugin refuses
`async`. For a fleet of 50 pools that is 50 sequential `helm upgrade --wait`
plus, on a no-op rerun, a chart download per release to learn its version.
Here:

- what is deployed is read once per namespace (`helm list`) and per release
  (`helm get values`), concurrently;
- a release whose chart name, version and user values equal the wanted ones
  is left alone without touching the chart (no download, no helm upgrade);
- each chart that some release needs is pulled once, then every release that
  changes is upgraded concurrently from that one file, each with `--wait` and
  its own rollback on failure (`--atomic`, helm 4: `--rollback-on-failure`);
- in check mode, each release that would change is rendered by helm's own
  `--dry-run=server` and nothing is installed;
- a chart repository's user and password given in its URL
  (`https://user:pass@charts.example.com/...`) never reach helm's command
  line, where `ps` shows them to every user of the host: helm reads them
  from a private configuration file (pull_steps).

The helm process runner is passed in (`run(argv) -> (rc, stdout, stderr)`),
so the decisions are unit tested over recorded helm answers.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import tarfile
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import unquote, urlsplit, urlunsplit

# Bytes of helm's stderr kept in an error: its last lines say what failed.
_ERROR_TAIL = 1500
# What the API server answers for a custom resource whose CRD is not installed.
_MISSING_KIND = "no matches for kind"
# The name a credentialed chart repository has in its pull's private helm configuration.
PRIVATE_REPO = "gpuci-chart-repository"
# Only their owner may read the files that hold a repository's credentials.
PRIVATE_MODE = 0o600


class HelmError(Exception):
    """A helm command failed; the message names the release and quotes helm."""


class AlreadyReported(HelmError):
    """A release fails for a reason already in the errors (its namespace or chart); no second message."""


def split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """``(url without its user and password, user, password)``; user and password None where the URL has none.

    Both are percent-decoded, as a URL writes what they may hold (``p%40ss``:
    ``p@ss``). A URL with only a user (``https://TOKEN@host``) gives password None.
    """
    parts = urlsplit(url or "")
    if "@" not in parts.netloc:
        return url, None, None
    userinfo, _at, host = parts.netloc.rpartition("@")
    user, has_password, password = userinfo.partition(":")
    return urlunsplit(parts._replace(netloc=host)), unquote(user), unquote(password) if has_password else None


def url_secrets(url: str) -> list[str]:
    """What of a chart repository URL must be masked wherever it is shown: its password, or a lone user (a token)."""
    _bare, user, password = split_credentials(url)
    return [value for value in ([password] if password else [user]) if value]


def chart_ref(release: dict) -> str:
    """What helm gets as the chart: a local path, oci://registry/path/chart, or a name in chart_repo_url.

    Never with the repository's credentials: the name is shown in messages and reaches helm's command line.
    """
    if release.get("chart_path"):
        return release["chart_path"]
    repo = split_credentials(release.get("chart_repo_url") or "")[0]
    if repo.startswith("oci://"):
        return repo.rstrip("/") + "/" + release["chart"]
    return release["chart"]


def pull_steps(release: dict, destination: str, private_dir: str) -> tuple[dict[str, str], list[list[str]]]:
    """``(files, commands)``: the private files to write (path -> text) and the helm commands that pull the chart.

    A repository without credentials: one ``helm pull`` (``--repo`` for an
    http(s) repository). With a user or password in the URL, neither goes on
    a command line (``ps`` shows every process's arguments to every user):
    the files in ``private_dir`` hold them, written PRIVATE_MODE, and helm
    is pointed at them:

    - http(s): a repositories file of helm's (``--repository-config``, with a
      private ``--repository-cache``) naming the repository PRIVATE_REPO
      with its user and password; ``helm repo update`` fetches its index,
      then ``helm pull PRIVATE_REPO/<chart>``;
    - ``oci://``: a registry configuration (``--registry-config``, the
      Docker config format helm reads its logins from) holding the
      registry's login, then ``helm pull oci://...``.

    Why files, not ``helm repo add --username U --password-stdin``: the user
    would still be an argument, and a URL holding one value
    (``https://TOKEN@host``) has its token there.
    """
    url = release.get("chart_repo_url") or ""
    bare, user, password = split_credentials(url)
    chart = ["--version", release["chart_version"], "--destination", destination]
    if user is None and password is None:
        return {}, [["pull", chart_ref(release), *chart] + (["--repo", url] if url and not url.startswith("oci://") else [])]
    if bare.startswith("oci://"):
        config = os.path.join(private_dir, "registry.json")
        login = base64.b64encode(("%s:%s" % (user or "", password or "")).encode("utf-8")).decode("ascii")
        files = {config: json.dumps({"auths": {urlsplit(bare).netloc: {"auth": login}}})}
        return files, [["pull", chart_ref(release), *chart, "--registry-config", config]]
    repositories = os.path.join(private_dir, "repositories.yaml")
    private = ["--repository-config", repositories, "--repository-cache", os.path.join(private_dir, "cache")]
    entry = {"name": PRIVATE_REPO, "url": bare, "username": user or "", "password": password or ""}
    # Helm reads its repositories file as YAML, of which JSON is a part.
    files = {repositories: json.dumps({"apiVersion": "v1", "repositories": [entry]})}
    return files, [["repo", "update", PRIVATE_REPO, *private],
                   ["pull", "%s/%s" % (PRIVATE_REPO, release["chart"]), *chart, *private]]


def write_private(path: str, text: str) -> None:
    """Write ``text`` to a new file only its owner can read (PRIVATE_MODE), from its first byte on."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_MODE)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)


@functools.lru_cache(maxsize=None)
def local_chart_identity(path: str) -> tuple[str, str]:
    """(name, version) from a chart directory's or packaged chart's Chart.yaml.

    Read with a pattern, not a YAML library: a module's Python may lack PyYAML,
    and both keys are plain top-level scalars in every chart. Read once per
    path and module run, however many releases use the chart.
    """
    if os.path.isdir(path):
        with open(os.path.join(path, "Chart.yaml"), encoding="utf-8") as handle:
            text = handle.read()
    else:
        with tarfile.open(path) as archive:
            member = next(m for m in archive.getmembers() if re.fullmatch(r"[^/]+/Chart\.yaml", m.name))
            text = archive.extractfile(member).read().decode("utf-8")

    def top_level(key: str) -> str:
        match = re.search(r"^%s:[ \t]*['\"]?([^'\"\s#]+)" % key, text, flags=re.MULTILINE)
        if not match:
            raise HelmError(f"{path}: Chart.yaml has no {key}")
        return match.group(1)
    return top_level("name"), top_level("version")


def wanted_chart(release: dict) -> str:
    """The chart as `helm list` shows a deployed release's: <name>-<version>."""
    if release.get("chart_path"):
        name, version = local_chart_identity(release["chart_path"])
        return f"{name}-{version}"
    return f"{release['chart']}-{release['chart_version']}"


def same_chart(deployed: str, wanted: str) -> bool:
    """True when both name the same chart and version; a leading v on the version does not count."""
    def parts(chart: str) -> tuple[str, str]:
        # The version starts at the first dash followed by a digit (or v and a digit): 1.2.3-rc.1 keeps its dash.
        match = re.fullmatch(r"(.+?)-v?(\d.*)", chart)
        return (match.group(1), match.group(2)) if match else (chart, "")
    return parts(deployed) == parts(wanted)


def decide(release: dict, deployed: dict | None, deployed_values: dict | None) -> str:
    """What a release needs: install, upgrade, unchanged, uninstall or absent.

    deployed is its `helm list -a` record (None: no release); a release that is
    not in status `deployed` (failed, pending) is upgraded whatever it holds.
    """
    if release["state"] == "absent":
        return "uninstall" if deployed else "absent"
    if deployed is None:
        return "install"
    if (deployed.get("status") == "deployed" and same_chart(deployed.get("chart", ""), wanted_chart(release))
            and (deployed_values or {}) == (release.get("values") or {})):
        return "unchanged"
    return "upgrade"


def diff_of(release: dict, deployed: dict | None, deployed_values: dict | None, action: str) -> dict:
    """Ansible's diff for one release: chart and user values before and after, as indented JSON."""
    before = {} if deployed is None else {"chart": deployed.get("chart"), "values": deployed_values or {}}
    after = {} if release["state"] == "absent" else {"chart": wanted_chart(release), "values": release.get("values") or {}}
    header = f"helm release {release['namespace']}/{release['name']} ({action})"
    return {"before": json.dumps(before, indent=2, sort_keys=True) + "\n",
            "after": json.dumps(after, indent=2, sort_keys=True) + "\n",
            "before_header": header, "after_header": header}


class Helm:
    """argv builders and the runner, with the flags that differ between helm 3 and 4."""

    def __init__(self, run, binary: str = "helm", kube_args: list[str] | None = None, openapi_validation: bool = False):
        self.run = run
        self.binary = binary
        self.kube_args = kube_args or []
        # False: --disable-openapi-validation, which leaves the checks to the
        # API server (why: the module's openapi_validation option; measured in
        # docs/reliability.md).
        self.openapi_validation = openapi_validation
        self._major = None
        # The namespaces are listed and the releases of a wave upgraded from
        # several threads, and each asks which helm this is: one `helm
        # version` answers them all.
        self._version_lock = threading.Lock()

    def call(self, args: list[str], what: str) -> str:
        rc, out, err = self.run([self.binary, *args, *self.kube_args])
        if rc != 0:
            raise HelmError(f"{what}: helm {args[0]} failed (rc {rc}): {(err or out).strip()[-_ERROR_TAIL:]}")
        return out

    def major(self) -> int:
        """helm's major version (``v4.3.1``: 4), asked once: the flags below differ between 3 and 4."""
        with self._version_lock:
            if self._major is None:
                version = self.call(["version", "--template", "{{.Version}}"], "helm version")
                digits = version.strip().lstrip("v").split(".")[0]
                self._major = int(digits) if digits.isdigit() else 3
        return self._major

    def rollback_flag(self) -> str:
        """helm 4 renamed --atomic to --rollback-on-failure."""
        return "--rollback-on-failure" if self.major() >= 4 else "--atomic"

    def deployed(self, namespace: str) -> dict[str, dict]:
        """Every release of the namespace, whatever its status (a pending or failed one too).

        helm 3 lists only deployed and failed releases unless told --all;
        helm 4 lists all by default and has no --all.
        """
        every_status = ["--all"] if self.major() < 4 else []
        records = json.loads(self.call(["list", "--namespace", namespace, *every_status, "--output", "json"],
                                       f"releases of namespace {namespace}") or "[]")
        return {record["name"]: record for record in records or []}

    def values(self, release: dict) -> dict:
        out = self.call(["get", "values", release["name"], "--namespace", release["namespace"], "--output", "json"],
                        f"{release['namespace']}/{release['name']}")
        return json.loads(out or "null") or {}

    def pull(self, release: dict, destination: str) -> str:
        """Download the release's chart once into destination; return the packaged chart's path.

        A repository's credentials go into a private folder beside destination
        (pull_steps), removed with it when apply_releases ends.
        """
        credentials = split_credentials(release.get("chart_repo_url") or "")[1:] != (None, None)
        private_dir = tempfile.mkdtemp(prefix="credentials-", dir=os.path.dirname(destination)) if credentials else ""
        files, commands = pull_steps(release, destination, private_dir)
        for path, text in files.items():
            write_private(path, text)
        before = set(os.listdir(destination))
        for args in commands:
            self.call(args, f"chart {chart_ref(release)} {release['chart_version']}")
        (added,) = set(os.listdir(destination)) - before
        return os.path.join(destination, added)

    def upgrade(self, release: dict, chart_file: str, values_file: str, dry_run: bool) -> None:
        args = ["upgrade", "--install", release["name"], chart_file, "--namespace", release["namespace"],
                "--values", values_file, "--timeout", f"{release['timeout']}s"]
        if not self.openapi_validation:
            args.append("--disable-openapi-validation")
        if release.get("create_namespace"):
            args.append("--create-namespace")
        what = f"{release['namespace']}/{release['name']}"
        if dry_run:
            try:
                self.call(args + ["--dry-run=server"], what)
            except HelmError as error:
                if _MISSING_KIND not in str(error):
                    raise
                # In check mode the CRDs this chart (or the controller's chart
                # before it) would install do not exist, so the API server
                # cannot map the custom resources, and even helm's client
                # dry-run of an upgrade asks it: render with `helm template`.
                offline = [arg for api in release.get("offline_api_versions") or [] for arg in ("--api-versions", api)]
                self.call(["template", release["name"], chart_file, "--namespace", release["namespace"],
                           "--values", values_file] + offline, what)
            return
        if release.get("wait", True):
            args.append("--wait")
        if release.get("atomic", True):
            args.append(self.rollback_flag())
        self.call(args, what)

    def recover(self, release: dict, status: str) -> None:
        """Release a release that an interrupted helm left pending, as helm's own rollback would have.

        A helm process that lost the API server (or was killed) cannot roll
        back, and the release stays pending-install, -upgrade or -rollback:
        every later helm upgrade refuses it ("another operation is in
        progress"). The collection owns its releases and two converges of the
        same cluster at once are not supported, so a pending release is taken
        as left behind: a first install is uninstalled, anything else rolled
        back to its previous revision. Then the upgrade runs.
        """
        what = f"{release['namespace']}/{release['name']}"
        if status == "pending-install":
            self.call(["uninstall", release["name"], "--namespace", release["namespace"], "--wait",
                       "--timeout", f"{release['timeout']}s"], what)
        else:
            self.call(["rollback", release["name"], "--namespace", release["namespace"], "--wait",
                       "--timeout", f"{release['timeout']}s"], what)

    def uninstall(self, release: dict) -> None:
        args = ["uninstall", release["name"], "--namespace", release["namespace"], "--timeout", f"{release['timeout']}s"]
        if release.get("wait", True):
            args.append("--wait")
        if release.get("cascade", "background") != "background":
            args += ["--cascade", release["cascade"]]
        self.call(args, f"{release['namespace']}/{release['name']}")


def _concurrently(work, items, workers: int) -> list:
    """Results of work(item) in items' order; each result is a value or the HelmError it raised."""
    def guarded(item):
        try:
            return work(item)
        except HelmError as error:
            return error
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(items) or 1))) as pool:
        return list(pool.map(guarded, items))


def apply_releases(helm: Helm, releases: list[dict], check_mode: bool, workers: int) -> dict:
    """Bring every release to its state. Returns {changed, releases, diff, errors}; errors name releases."""
    errors: list[str] = []
    namespaces = sorted({r["namespace"] for r in releases})
    listed = dict(zip(namespaces, _concurrently(helm.deployed, namespaces, workers)))
    for answer in listed.values():
        if isinstance(answer, HelmError):
            errors.append(str(answer))

    def read(release):
        if isinstance(listed[release["namespace"]], HelmError):
            raise AlreadyReported(release["namespace"])  # what is deployed there is unknown: touch nothing
        record = listed[release["namespace"]].get(release["name"])
        needs_values = record is not None and release["state"] == "present"
        return record, (helm.values(release) if needs_values else None)

    # A release whose state could not be read is reported failed ("unknown") and left alone.
    decisions, outcome = [], {}
    for release, answer in zip(releases, _concurrently(read, releases, workers)):
        if isinstance(answer, HelmError):
            decisions.append((release, "unknown", None, None))
            outcome[id(release)] = answer
            continue
        record, values = answer
        decisions.append((release, decide(release, record, values), record, values))

    to_run = [(r, a, rec) for r, a, rec, _val in decisions if a not in ("unchanged", "absent", "unknown")]
    outcome.update({id(r): None for r, _a, _rec in to_run})
    with tempfile.TemporaryDirectory(prefix="gpuci-helm-") as work:
        charts = _pull_charts(helm, [r for r, a, _rec in to_run if a != "uninstall"], work, workers, errors)

        def run(item):
            release, action, record = item
            if action == "uninstall":
                if not check_mode:
                    helm.uninstall(release)
                return None
            chart_file = charts.get(_chart_key(release))
            if chart_file is None:
                raise AlreadyReported(chart_ref(release))  # the pull's own error names the chart
            values_file = os.path.join(work, f"{release['namespace']}.{release['name']}.values.json")
            with open(values_file, "w", encoding="utf-8") as handle:
                json.dump(release.get("values") or {}, handle)
            status = (record or {}).get("status", "")
            if status.startswith("pending-"):
                if check_mode:
                    return None  # helm refuses even a dry run of a pending release; the real run recovers it
                helm.recover(release, status)
            helm.upgrade(release, chart_file, values_file, dry_run=check_mode)
            return None

        # Wave by wave (a release's `wave`, 0 unless set): a later wave may
        # need what an earlier one installs, such as a controller's CRDs.
        # After a failed wave the later ones are not run, and fail.
        for wave in sorted({_wave(r) for r, _a, _rec in to_run}):
            batch = [item for item in to_run if _wave(item[0]) == wave]
            if any(isinstance(outcome.get(id(r)), HelmError) for r, _a, _rec in to_run if _wave(r) < wave):
                for release, _action, _record in batch:
                    outcome[id(release)] = HelmError(f"{release['namespace']}/{release['name']}: not run, "
                                                     f"a release of an earlier wave failed")
                continue
            for (release, _action, _record), answer in zip(batch, _concurrently(run, batch, workers)):
                outcome[id(release)] = answer
    results, diffs = [], []
    for release, action, record, values in decisions:
        failed = outcome.get(id(release))
        if isinstance(failed, HelmError) and not isinstance(failed, AlreadyReported):
            errors.append(str(failed))
        changed = action not in ("unchanged", "absent", "unknown") and failed is None
        results.append({"name": release["name"], "namespace": release["namespace"], "state": release["state"],
                        "action": action, "changed": changed, "failed": failed is not None})
        if changed:
            diffs.append(diff_of(release, record, values, action))
    return {"changed": any(r["changed"] for r in results), "releases": results, "diff": diffs, "errors": errors}


def _wave(release: dict) -> int:
    return release.get("wave") or 0


def _chart_key(release: dict) -> tuple:
    return (chart_ref(release), release.get("chart_repo_url") or "", release.get("chart_version") or "")


def _pull_charts(helm: Helm, releases: list[dict], work: str, workers: int, errors: list[str]) -> dict:
    """{chart key: local chart}: local charts as they are, every other chart pulled once."""
    charts, remote = {}, {}
    for release in releases:
        if release.get("chart_path"):
            charts[_chart_key(release)] = release["chart_path"]
        else:
            remote.setdefault(_chart_key(release), release)
    keys = list(remote)

    def pull(key):
        destination = tempfile.mkdtemp(dir=work)
        return helm.pull(remote[key], destination)

    for key, answer in zip(keys, _concurrently(pull, keys, workers)):
        if isinstance(answer, HelmError):
            errors.append(str(answer))
        else:
            charts[key] = answer
    return charts
