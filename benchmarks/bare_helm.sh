#!/usr/bin/env bash
# The benchmark's baseline: the same releases as the role converge, by hand.
# Applies the objects the roles make themselves (namespaces, token Secrets,
# RBAC, ConfigMaps), then one `helm upgrade --install --wait` per release
# with the same chart, version and values, in the same order.
#   bare_helm.sh PLAN_DIR CHART_REPO_URL
# PLAN_DIR holds objects.yaml, releases.tsv (name namespace chart version
# timeout) and values/<namespace>.<name>.json, written by converge.py.
set -euo pipefail
plan=$1
repo=$2

kubectl apply --server-side --force-conflicts -f "$plan/objects.yaml" >/dev/null

while read -r name namespace chart version timeout; do
  helm upgrade --install "$name" "$chart" --repo "$repo" --version "$version" \
    --namespace "$namespace" --values "$plan/values/$namespace.$name.json" \
    --wait --timeout "$timeout" >/dev/null
done < "$plan/releases.tsv"
