# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""PodMonitors -> Prometheus scrape configs, as the Prometheus Operator translates them.

The testbed runs no Prometheus Operator: its Prometheus gets its scrape jobs
from here, made from the PodMonitor objects in the cluster. What it writes
follows the operator v0.93.0 (pkg/prometheus/promcfg.go,
generatePodMonitorConfig), for the fields the collection's monitors use:

- one job per endpoint, ``podMonitor/<namespace>/<name>/<index>``,
  ``honor_labels`` always written;
- Kubernetes discovery of role ``pod`` in the namespaces of
  ``namespaceSelector`` (``any``: all; ``matchNames``; none: the monitor's
  own), with the API server, credentials and CA the caller passes (the
  operator's ``apiserverConfig``: this Prometheus runs outside the cluster);
- relabelling in the operator's order: the job's name kept in
  ``__tmp_prometheus_job_name``; pods in phase Failed or Succeeded dropped
  (unless ``filterRunning: false``); the selector's ``matchLabels`` and
  ``matchExpressions`` (In, NotIn, Exists, DoesNotExist) as keep/drop rules
  on the pod's labels and their presence; the endpoint's ``port`` (or
  ``portNumber``) kept; the target labels ``namespace``, ``container``,
  ``pod``, ``podTargetLabels``, ``job`` (``<namespace>/<name>``, or the pod's
  ``jobLabel`` label), ``endpoint``; then the endpoint's ``relabelings``;
- ``interval``, ``scrapeTimeout``, ``path``, ``params``, ``scheme``,
  ``honorLabels``, ``honorTimestamps``, ``metricRelabelings``,
  ``attachMetadata`` and the monitor's limits.

Left out on purpose: sharding (one Prometheus, no ``$(SHARD)``), scrape
classes, ``selectorMechanism: RoleSelector``, and every field that needs a
Secret or a ConfigMap (TLS, basic auth, OAuth2, authorization, proxies).
A monitor using a field this module does not translate is not scraped at
all, and ``unsupported`` says which field: a half-translated monitor would
scrape differently from the operator without a word.
"""
from __future__ import annotations

import re

POD_LABEL = "__meta_kubernetes_pod_label_"
POD_LABEL_PRESENT = "__meta_kubernetes_pod_labelpresent_"
_NOT_IN_LABEL_NAME = re.compile(r"[^a-zA-Z0-9_]")

# PodMonitor spec fields translated here; the rest make a monitor unsupported.
SPEC_FIELDS = {"selector", "namespaceSelector", "podMetricsEndpoints", "jobLabel", "podTargetLabels",
               "attachMetadata", "sampleLimit", "targetLimit", "labelLimit", "labelNameLengthLimit",
               "labelValueLengthLimit", "keepDroppedTargets", "selectorMechanism"}
ENDPOINT_FIELDS = {"port", "portNumber", "path", "interval", "scrapeTimeout", "scheme", "params", "honorLabels",
                   "honorTimestamps", "filterRunning", "relabelings", "metricRelabelings"}
# The monitor's limits and the scrape config's keys for them (AddLimitsToYAML).
LIMITS = {"sampleLimit": "sample_limit", "targetLimit": "target_limit", "labelLimit": "label_limit",
          "labelNameLengthLimit": "label_name_length_limit", "labelValueLengthLimit": "label_value_length_limit",
          "keepDroppedTargets": "keep_dropped_targets"}
# A RelabelConfig's fields in the order the operator writes them (generateRelabelConfig).
RELABEL_FIELDS = (("sourceLabels", "source_labels"), ("separator", "separator"), ("targetLabel", "target_label"),
                  ("regex", "regex"), ("modulus", "modulus"), ("replacement", "replacement"), ("action", "action"))


def sanitize(name: str) -> str:
    """A Kubernetes label as Prometheus's discovery names it: every character a label name may not hold is `_`."""
    return _NOT_IN_LABEL_NAME.sub("_", name)


def unsupported(monitor: dict) -> list[str]:
    """The fields of `monitor` this module does not translate (empty: it is translated whole)."""
    spec = monitor.get("spec") or {}
    found = [f"spec.{key}" for key in sorted(set(spec) - SPEC_FIELDS)]
    if spec.get("selectorMechanism", "RelabelConfig") != "RelabelConfig":
        found.append("spec.selectorMechanism")
    for index, endpoint in enumerate(spec.get("podMetricsEndpoints") or []):
        found += [f"spec.podMetricsEndpoints[{index}].{key}" for key in sorted(set(endpoint) - ENDPOINT_FIELDS)]
    return found


def relabel_configs(rules: list[dict]) -> list[dict]:
    """The CRD's camelCase RelabelConfigs as Prometheus's snake_case relabel_configs (the action lower-cased)."""
    translated = []
    for rule in rules or []:
        out = {}
        for camel, snake in RELABEL_FIELDS:
            value = rule.get(camel)
            # separator and replacement are written when set, even empty; the others when not empty.
            if value is not None if camel in ("separator", "replacement") else value:
                out[snake] = value.lower() if camel == "action" else value
        translated.append(out)
    return translated


def namespaces(monitor: dict) -> list[str]:
    """The namespaces the monitor's pods are discovered in; [] means all (``any: true``)."""
    selector = (monitor.get("spec") or {}).get("namespaceSelector") or {}
    if selector.get("any"):
        return []
    return list(selector.get("matchNames") or []) or [monitor["metadata"]["namespace"]]


def _selector_rules(selector: dict) -> list[dict]:
    rules = []
    for key in sorted((selector or {}).get("matchLabels") or {}):
        rules.append({"action": "keep", "source_labels": [POD_LABEL + sanitize(key), POD_LABEL_PRESENT + sanitize(key)],
                      "regex": f"({selector['matchLabels'][key]});true"})
    for expression in (selector or {}).get("matchExpressions") or []:
        key, operator = sanitize(expression["key"]), expression["operator"]
        values = "|".join(expression.get("values") or [])
        if operator in ("In", "NotIn"):
            rules.append({"action": "keep" if operator == "In" else "drop",
                          "source_labels": [POD_LABEL + key, POD_LABEL_PRESENT + key], "regex": f"({values});true"})
        elif operator in ("Exists", "DoesNotExist"):
            rules.append({"action": "keep" if operator == "Exists" else "drop",
                          "source_labels": [POD_LABEL_PRESENT + key], "regex": "true"})
        else:
            raise ValueError(f"matchExpressions operator {operator!r} is not a label selector operator")
    return rules


def scrape_config(monitor: dict, index: int, endpoint: dict, sd_extra: dict | None = None) -> dict:
    """The scrape config of one endpoint of one PodMonitor.

    sd_extra: keys added to the Kubernetes discovery config (api_server,
    authorization, tls_config), as the operator's apiserverConfig adds them.
    """
    meta, spec = monitor["metadata"], monitor.get("spec") or {}
    ns, name = meta["namespace"], meta["name"]
    config: dict = {"job_name": f"podMonitor/{ns}/{name}/{index}", "honor_labels": bool(endpoint.get("honorLabels"))}
    if "honorTimestamps" in endpoint:
        config["honor_timestamps"] = bool(endpoint["honorTimestamps"])
    sd: dict = {"role": "pod"}
    if namespaces(monitor):
        sd["namespaces"] = {"names": namespaces(monitor)}
    sd.update(sd_extra or {})
    if spec.get("attachMetadata"):
        sd["attach_metadata"] = {"node": bool(spec["attachMetadata"].get("node"))}
    config["kubernetes_sd_configs"] = [sd]
    for camel, snake in (("interval", "scrape_interval"), ("scrapeTimeout", "scrape_timeout"),
                         ("path", "metrics_path"), ("params", "params")):
        if endpoint.get(camel):
            config[snake] = endpoint[camel]
    if endpoint.get("scheme"):
        config["scheme"] = endpoint["scheme"].lower()

    rules: list[dict] = [{"source_labels": ["job"], "target_label": "__tmp_prometheus_job_name"}]
    if endpoint.get("filterRunning", True):
        rules.append({"action": "drop", "source_labels": ["__meta_kubernetes_pod_phase"], "regex": "(Failed|Succeeded)"})
    rules += _selector_rules(spec.get("selector") or {})
    port = endpoint.get("port")
    if port:
        rules.append({"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_name"], "regex": port})
    elif endpoint.get("portNumber"):
        rules.append({"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_number"],
                      "regex": str(endpoint["portNumber"])})
    rules += [
        {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
        {"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container"},
        {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
    ]
    for label in spec.get("podTargetLabels") or []:
        rules.append({"source_labels": [POD_LABEL + sanitize(label)], "target_label": sanitize(label),
                      "regex": "(.+)", "replacement": "${1}"})
    rules.append({"target_label": "job", "replacement": f"{ns}/{name}"})
    if spec.get("jobLabel"):
        rules.append({"source_labels": [POD_LABEL + sanitize(spec["jobLabel"])], "target_label": "job",
                      "regex": "(.+)", "replacement": "${1}"})
    if port:
        rules.append({"target_label": "endpoint", "replacement": port})
    rules += relabel_configs(endpoint.get("relabelings"))
    config["relabel_configs"] = rules

    for camel, snake in LIMITS.items():
        if spec.get(camel):
            config[snake] = spec[camel]
    if endpoint.get("metricRelabelings"):
        config["metric_relabel_configs"] = relabel_configs(endpoint["metricRelabelings"])
    return config


def scrape_configs(monitors: list[dict], sd_extra: dict | None = None) -> tuple[list[dict], dict[str, list[str]]]:
    """(scrape configs of every translatable monitor, {"<namespace>/<name>": untranslated fields} of the others).

    Monitors in namespace, then name order, as the operator sorts them.
    """
    configs, skipped = [], {}
    for monitor in sorted(monitors, key=lambda m: (m["metadata"]["namespace"], m["metadata"]["name"])):
        key = f"{monitor['metadata']['namespace']}/{monitor['metadata']['name']}"
        left_out = unsupported(monitor)
        if left_out:
            skipped[key] = left_out
            continue
        for index, endpoint in enumerate((monitor.get("spec") or {}).get("podMetricsEndpoints") or []):
            configs.append(scrape_config(monitor, index, endpoint, sd_extra))
    return configs, skipped
