# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The arc_runners role's checks of its scale sets, before anything touches the cluster.

The input holds the role's variables under their own names, so every problem
names the inventory path the user wrote: ``arc_runners_scale_sets[name=x].github_config_url``,
``arc_runners_scale_set_namespace`` (when a scale set takes the role's
namespace). All problems are returned at once, one string each; an empty list
means the scale sets are fine. Credentials are read (which kinds are set) but
never shown: a problem names keys and scale sets, not values.
"""

from __future__ import annotations

import re

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.runner_template import scale_set_templates
from ansible_collections.gpuci.runners.plugins.module_utils.common.pool_keys import ENTRY_STATES
from ansible_collections.gpuci.runners.plugins.module_utils.common.release_names import DNS_LABEL_MAX, is_dns_label
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    child,
    mapping_list,
    named_item,
    optional_choice,
    problem,
    problems_of,
    require_mapping,
    seconds_problems,
)

SCALE_SETS = "arc_runners_scale_sets"
_CONFIG_URL = re.compile(r"https?://[^/\s]+/\S+")
GITHUB_APP_KEYS = ("github_app_id", "github_app_installation_id", "github_app_private_key")
# Every credential key; none of them reaches the template builder (the role's copies lack them too).
CREDENTIAL_KEYS = ("github_token",) + GITHUB_APP_KEYS
_KINDS = "github_token, the GitHub App (%s) or github_config_secret" % ", ".join(GITHUB_APP_KEYS)


def arc_runners_preflight(settings, gpu_classes=None):
    """Return the problems of the role's scale sets (see docs/filters.md); ``[]`` when none.

    ``settings`` maps the role's variable names to their values: ``arc_runners_scale_sets`` (as
    the inventory wrote them, credentials included), ``arc_runners_state``,
    ``arc_runners_scale_set_namespace`` and ``arc_runners_runtime_class``. The plan's problems,
    in the same order: each scale set's pod template is rendered here too
    (module_utils/arc_runners/runner_template.py, without the credentials), to check what it holds.
    """
    require_mapping(settings, "arc_runners_preflight")
    template_problems = {}
    if settings.get("arc_runners_state", "present") == "present":
        public = [dict((key, value) for key, value in scale_set.items() if key not in CREDENTIAL_KEYS)
                  for scale_set in mapping_list(settings, SCALE_SETS)]
        template_problems = scale_set_templates(public, gpu_classes, settings.get("arc_runners_runtime_class"),
                                                SCALE_SETS)[1]
    return scale_set_problems(settings, template_problems)


def scale_set_problems(settings, template_problems):
    """The problems of the scale sets in order, their pod templates' among them; ``[]`` when none.

    What a pod template holds is checked where it is made, once per scale set
    (arc_runner_template.scale_set_templates, whose problems by index come in
    ``template_problems``), since the plan keeps what it renders. Tearing down
    needs the names only.
    """
    scale_sets = mapping_list(settings, SCALE_SETS)
    problems = _unique_names(scale_sets)
    if "arc_runners_wait_timeout" in settings:
        # Helm's timeout, removals' too.
        problems += seconds_problems(settings, "arc_runners_wait_timeout")
    if settings.get("arc_runners_state", "present") != "present":
        return problems
    problems += _role_namespace(scale_sets, settings)
    for index, scale_set in enumerate(scale_sets):
        path = named_item(SCALE_SETS, scale_set, index)
        problems += problems_of(optional_choice, scale_set, "state", path, ENTRY_STATES)
        if scale_set.get("state") not in (None, "present"):
            continue
        problems += _config_url(scale_set, path)
        problems += _credentials(scale_set, path)
        problems += _namespace(scale_set["namespace"], child(path, "namespace")) if "namespace" in scale_set else []
        problems += _work_volume_claim(scale_set, path)
        problems += [template_problems[index]] if index in template_problems else []
    return problems


def _unique_names(scale_sets):
    problems, earlier = [], []
    names = [scale_set.get("name") for scale_set in scale_sets]
    for index, scale_set in enumerate(scale_sets):
        name = names[index]
        if isinstance(name, str) and name not in earlier and names.count(name) > 1:
            problems.append(problem(child(named_item(SCALE_SETS, scale_set, index), "name"), "must be unique: %d scale "
                                    "sets use it (each scale set is a release and a runs-on name)" % names.count(name)))
        earlier.append(name)
    return problems


def _config_url(scale_set, path):
    url = scale_set.get("github_config_url")
    reason = "must be the https:// URL of a GitHub organisation, repository or enterprise"
    if url is None or url == "":
        return [problem(child(path, "github_config_url"), "is required: " + reason)]
    if not isinstance(url, str) or not _CONFIG_URL.fullmatch(url):
        return [problem(child(path, "github_config_url"), reason, url)]
    return []


def _credentials(scale_set, path):
    """Exactly one kind of credentials, a GitHub App with all three keys; values never shown."""
    app_keys = [key for key in GITHUB_APP_KEYS if scale_set.get(key)]
    kinds = (["github_token"] if scale_set.get("github_token") else []) + (["GitHub App"] if app_keys else []) \
        + (["github_config_secret"] if scale_set.get("github_config_secret") else [])
    if len(kinds) != 1:
        return [problem(path, "set exactly one kind of credentials: %s; got %s (values not shown)"
                        % (_KINDS, " and ".join(kinds) or "none"))]
    missing = [key for key in GITHUB_APP_KEYS if key not in app_keys]
    if app_keys and missing:
        return [problem(child(path, key), "is required: the GitHub App needs %s" % ", ".join(GITHUB_APP_KEYS))
                for key in missing]
    return []


def _namespace(namespace, path):
    if not is_dns_label(namespace):
        return [problem(path, "must be a DNS label of at most %d characters (a-z, 0-9, -)" % DNS_LABEL_MAX, namespace)]
    return []


def _role_namespace(scale_sets, settings):
    """The role's namespace, once, when a present scale set takes it (a scale set's own is checked with it)."""
    if any(scale_set.get("state") in (None, "present") and scale_set.get("namespace") is None
           for scale_set in scale_sets):
        return _namespace(settings.get("arc_runners_scale_set_namespace"), "arc_runners_scale_set_namespace")
    return []


def _work_volume_claim(scale_set, path):
    mode = scale_set.get("container_mode") or "none"
    has_claim = scale_set.get("work_volume_claim") is not None
    if mode == "kubernetes" and not has_claim:
        return [problem(child(path, "work_volume_claim"), "is required with container_mode kubernetes (the job pods' "
                        "work volume)")]
    if mode != "kubernetes" and has_claim:
        return [problem(child(path, "work_volume_claim"), "is only used with container_mode kubernetes (the job pods' "
                        "work volume); container_mode is %s" % mode)]
    return []
