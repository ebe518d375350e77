# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gitlab_runner role's checks of its pools, before anything touches the cluster.

The input holds the role's variables under their own names, so every problem
names the inventory path the user wrote: ``gitlab_runner_pools[name=l40s].hpa.min_replicas``,
``gitlab_runner_namespace``, ``gitlab_runner_gitlab_url`` (when a pool takes
the role's URL). All problems are returned at once, one string each; an empty
list means the pools are fine. Tokens are read (their shape is checked) but
never shown: a problem names the pool, not the value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.config import pool_configs
from ansible_collections.gpuci.runners.plugins.module_utils.common.pool_keys import (
    ENTRY_STATES,
    GITLAB_HPA_KEYS,
    GITLAB_POOL_DEFAULTS,
    GITLAB_RESOURCE_KEYS,
    GITLAB_SECRET_KEYS,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.release_names import (
    DNS_LABEL_MAX,
    GITLAB_POOL_NAME_MAX,
    GITLAB_RELEASE_PREFIX,
    HELM_RELEASE_NAME_MAX,
    is_dns_label,
    is_label_value,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    check_resources,
    child,
    mapping_list,
    named_item,
    optional_choice,
    optional_int,
    problem,
    problems_of,
    reject_unknown_keys,
    require_mapping,
    seconds_problems,
    setting_int,
)

POOLS = "gitlab_runner_pools"
# A runner authentication token, as GitLab shows it under CI/CD > Runners.
_AUTH_TOKEN = re.compile(r"glrt-[A-Za-z0-9_-]+")
_ACCESS_TOKEN_PREFIX = "glpat-"
_HTTP_URL = re.compile(r"https?://[^/]+.*", re.DOTALL)


# Chart values that hold a runner token; gitlab_runner_extra_values may not set them.
TOKEN_VALUES = ("runnerToken", "runnerRegistrationToken")


def gitlab_runner_preflight(settings, gpu_classes=None):
    """Return the problems of the role's pools and settings (see docs/filters.md); ``[]`` when none.

    ``settings`` maps the role's variable names to their values: ``gitlab_runner_pools`` (as the
    inventory wrote them, tokens included), ``gitlab_runner_state``, ``gitlab_runner_namespace``,
    ``gitlab_runner_fleet``, ``gitlab_runner_gitlab_url``, ``gitlab_runner_concurrent``,
    ``gitlab_runner_access_token``, ``gitlab_runner_manager_resources``, ``gitlab_runner_runtime_class`` and
    ``gitlab_runner_extra_values``. The plan's problems, in the same order: each pool's config.toml
    is rendered here too (module_utils/gitlab_runner/config.py, without the pool's tokens), to check
    what it holds.
    """
    require_mapping(settings, "gitlab_runner_preflight")
    public = [dict((key, value) for key, value in pool.items() if key not in GITLAB_SECRET_KEYS)
              for pool in mapping_list(settings, POOLS)]
    _configs, config_problems = pool_configs(public, gpu_classes, settings.get("gitlab_runner_runtime_class"), POOLS)
    return pool_problems(settings, config_problems)


def pool_problems(settings, config_problems):
    """The problems of the role's settings, then of each pool in order, its config.toml's among them; ``[]`` when none.

    What a pool's config.toml holds is checked where it is made, once per pool
    (gitlab_runner_config.pool_configs, whose problems by pool index come in
    ``config_problems``), since the plan keeps what it renders.
    """
    pools = mapping_list(settings, POOLS)
    problems = []
    problems += _role_settings(settings)
    problems += _role_concurrent(pools, settings)
    problems += _role_inherited(pools, settings)
    problems += _names(pools)
    role_present = settings.get("gitlab_runner_state", "present") == "present"
    has_access_token = bool(settings.get("gitlab_runner_access_token"))
    for index, pool in enumerate(pools):
        path = named_item(POOLS, pool, index)
        present = pool.get("state") in (None, "present")
        problems += problems_of(optional_choice, pool, "state", path, ENTRY_STATES)
        problems += _owners(pool, path)
        problems += _namespace(pool, path)
        if present and role_present:
            problems += _token(pool, path, has_access_token)
        if present:
            problems += _gitlab_url(pool.get("gitlab_url"), child(path, "gitlab_url")) if "gitlab_url" in pool else []
            problems += _hpa(pool, path, settings)
            # A pool's resources that are no mapping are refused where its config.toml is rendered.
            if isinstance(pool.get("resources"), Mapping):
                problems += _resources(pool["resources"], child(path, "resources"))
            problems += [config_problems[index]] if index in config_problems else []
    return problems


def _role_settings(settings):
    problems = []
    namespace = settings.get("gitlab_runner_namespace")
    if not is_dns_label(namespace):
        problems.append(problem("gitlab_runner_namespace", "must be a DNS label of at most %d characters (a-z, 0-9, -)"
                                % DNS_LABEL_MAX, namespace))
    fleet = settings.get("gitlab_runner_fleet")
    if not is_label_value(fleet):
        problems.append(problem("gitlab_runner_fleet", "must be a Kubernetes label value of at most 63 characters "
                                "(letters, digits, - _ ., starting and ending with a letter or digit)", fleet))
    in_values = [key for key in TOKEN_VALUES if key in (settings.get("gitlab_runner_extra_values") or {})]
    if in_values:
        # Named, never shown: the value is a token.
        problems.append(problem("gitlab_runner_extra_values", "must not set %s: Helm would store the token in the "
                                "release. Put it in gitlab_runner_pools[].token; it goes to a Secret"
                                % " or ".join(in_values)))
    access_token = settings.get("gitlab_runner_access_token") or ""
    if not isinstance(access_token, str) or (access_token and not access_token.startswith(_ACCESS_TOKEN_PREFIX)):
        problems.append(problem("gitlab_runner_access_token", "must be a GitLab access token (glpat-..., scope "
                                "create_runner) or empty; token not shown"))
    return problems


def _names(pools):
    problems, seen = [], {}
    for pool in pools:
        name = pool.get("name")
        if isinstance(name, str):
            seen[name] = seen.get(name, 0) + 1
    for index, pool in enumerate(pools):
        name = pool.get("name")
        path = child(named_item(POOLS, pool, index), "name")
        if not is_dns_label(name, GITLAB_POOL_NAME_MAX):
            problems.append(problem(path, "must be a DNS label of at most %d characters (a-z, 0-9, -): the release is "
                                    "%s<name>, and Helm allows %d" % (GITLAB_POOL_NAME_MAX, GITLAB_RELEASE_PREFIX,
                                                                      HELM_RELEASE_NAME_MAX), name))
        elif seen.get(name, 0) > 1 and name not in [p.get("name") for p in pools[:index]]:
            problems.append(problem(path, "must be unique: %d pools use it (each pool is one release)" % seen[name]))
    return problems


def _owners(pool, path):
    named = [problem(child(path, key), "must be a GitLab group or project path (a string)", pool[key])
             for key in ("gitlab_group", "gitlab_project")
             if pool.get(key) is not None and (not isinstance(pool[key], str) or not pool[key])]
    if named:
        return named
    if pool.get("gitlab_group") is not None and pool.get("gitlab_project") is not None:
        return [problem(child(path, "gitlab_project"), "a pool the role creates in GitLab belongs to gitlab_group or "
                        "gitlab_project, not both")]
    return []


def _namespace(pool, path):
    namespace = pool.get("namespace")
    if namespace is not None and not is_dns_label(namespace):
        return [problem(child(path, "namespace"), "must be a DNS label of at most %d characters (a-z, 0-9, -)"
                        % DNS_LABEL_MAX, namespace)]
    return []


def _token(pool, path, has_access_token):
    """The token's shape; neither the token nor any part of it is shown."""
    token = pool.get("token") or ""
    if not token and has_access_token:
        return []  # the role creates this pool's runner in GitLab
    if isinstance(token, str) and _AUTH_TOKEN.fullmatch(token):
        return []
    reason = "is required" if not token else "must be a runner authentication token (glrt-...)"
    return [problem(child(path, "token"), "%s for a present pool: a runner authentication token created in GitLab "
                    "under CI/CD > Runners; registration tokens are refused. Leave token out and set "
                    "gitlab_runner_access_token to have the role create the runner in GitLab (token not shown)" % reason)]


def _gitlab_url(url, path):
    if not isinstance(url, str) or not _HTTP_URL.fullmatch(url):
        return [problem(path, "must be an http(s) URL such as https://gitlab.example.com", url)]
    return []


def _role_inherited(pools, settings):
    """The role's variables that present pools take when they leave the key unset: each checked once, not per pool.

    ``gitlab_runner_wait_timeout`` (seconds, every release's) whenever the plan has it.
    """
    present = [pool for pool in pools if pool.get("state") in (None, "present")]
    problems = []
    if any(pool.get("gitlab_url") is None for pool in present):
        problems += _gitlab_url(settings.get(GITLAB_POOL_DEFAULTS["gitlab_url"]), GITLAB_POOL_DEFAULTS["gitlab_url"])
    if any(pool.get("resources") is None for pool in present) and "gitlab_runner_manager_resources" in settings:
        problems += _resources(settings["gitlab_runner_manager_resources"], "gitlab_runner_manager_resources")
    if "gitlab_runner_wait_timeout" in settings:
        problems += seconds_problems(settings, "gitlab_runner_wait_timeout")
    return problems


def role_concurrent(settings):
    """``gitlab_runner_concurrent`` as a count of jobs (``-e`` gives a string of digits), or None when it is not one."""
    number = setting_int(settings.get("gitlab_runner_concurrent"))
    return number if number is not None and number >= 1 else None


def _role_concurrent(pools, settings):
    """The role's concurrent, once, when a present pool takes it (the builder checks a pool's own)."""
    inherited = any(pool.get("state") in (None, "present") and pool.get("concurrent") is None for pool in pools)
    if not inherited or "gitlab_runner_concurrent" not in settings or role_concurrent(settings) is not None:
        return []
    return [problem("gitlab_runner_concurrent", "must be an integer >= 1", settings["gitlab_runner_concurrent"])]


def _hpa(pool, path, settings):
    hpa = pool.get("hpa")
    if not isinstance(hpa, Mapping):
        return []
    problems, hpa_path = [], child(path, "hpa")
    problems += problems_of(reject_unknown_keys, hpa, GITLAB_HPA_KEYS, hpa_path)
    for key in GITLAB_HPA_KEYS:
        problems += problems_of(optional_int, hpa, key, hpa_path)
    minimum, maximum = hpa.get("min_replicas", 1), hpa.get("max_replicas")
    if minimum is None:
        minimum = 1
    if _is_int(minimum) and minimum < 1:
        problems.append(problem(child(hpa_path, "min_replicas"), "must be >= 1", minimum))
    if _is_int(minimum) and _is_int(maximum) and minimum > maximum:
        problems.append(problem(child(hpa_path, "min_replicas"), "must not exceed hpa.max_replicas (%d)" % maximum,
                                minimum))
    if pool.get("resources") is not None:
        resources, resources_path = pool["resources"], child(path, "resources")
    else:
        resources, resources_path = settings.get("gitlab_runner_manager_resources"), "gitlab_runner_manager_resources"
    requests = resources.get("requests") if isinstance(resources, Mapping) else None
    if not isinstance(requests, Mapping) or requests.get("cpu") is None:
        problems.append(problem(child(child(resources_path, "requests"), "cpu"), "is required by %s: the "
                                "autoscaler's CPU target is a share of the manager's CPU request" % hpa_path))
    return problems


def _resources(resources, path):
    """A manager's ``resources`` (a pool's, or the role's the pools take): ``requests`` and ``limits`` of
    Kubernetes quantities, each request within its limit; the chart's Deployment would be refused otherwise."""
    return [] if resources is None else problems_of(check_resources, resources, path, GITLAB_RESOURCE_KEYS)


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)
