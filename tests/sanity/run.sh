#!/usr/bin/env bash
# ansible-test sanity needs the collection under .../ansible_collections/gpuci/runners:
# copy the tracked (and new, unignored) files there and run it on the copy.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# Without shellcheck, ansible-test skips its shellcheck test with a warning only.
command -v shellcheck >/dev/null || bash "$root/tools/apt_install.sh" "tests/sanity (ansible-test's shellcheck test)" shellcheck
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dest=$work/ansible_collections/gpuci/runners
mkdir -p "$dest"
(cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf - 2>/dev/null) | tar -xf - -C "$dest"
# k8s_reads builds on kubernetes.core's module_utils, and ansible-test finds
# another collection only beside this one: put the venv's copy there.
kubernetes_core=$("$root/.venv/bin/python" -c 'import ansible_collections.kubernetes.core as c; print(list(c.__path__)[0])')
mkdir -p "$work/ansible_collections/kubernetes"
cp -r "$kubernetes_core" "$work/ansible_collections/kubernetes/core"
cd "$dest"
# ansible-test bootstraps pip in its venvs with a script from a host CI cannot
# reach; put the offline stand-in where it looks first (any pip version it wants).
pip_version=$("$root/.venv/bin/python" - <<'PY'
from ansible_test._internal.python_requirements import get_venv_packages
from ansible_test._internal.host_configs import NativePythonConfig
print(get_venv_packages(NativePythonConfig(version="3.11"))["pip"])
PY
)
mkdir -p ~/.ansible/test/cache
cp "$root/tests/sanity/get_pip_offline.py" ~/.ansible/test/cache/"get_pip_${pip_version//./_}.py"
# Only the venv's Python: ansible-test must not try to provision other interpreters.
"$root/.venv/bin/ansible-test" sanity --python 3.11 --color no "$@"
