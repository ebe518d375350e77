# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How a user's settings are laid over the defaults (module_utils/common/merging.py).

The callers' own tests (a pool's extra_config in test_gitlab_runner_config.py,
the extra chart values in the gitlab_runner and gpu_operator plan tests) show
the merge in place; these pin the rule itself."""

from ansible_collections.gpuci.runners.plugins.module_utils.common.merging import deep_merge


def test_nested_tables_merge_and_keep_the_keys_the_override_does_not_name():
    base = {"kubernetes": {"namespace": "ci", "poll_timeout": 600}, "output_limit": 16384}
    merged = deep_merge(base, {"kubernetes": {"image": "busybox"}})
    assert merged == {"kubernetes": {"namespace": "ci", "poll_timeout": 600, "image": "busybox"}, "output_limit": 16384}


def test_values_that_are_not_both_tables_replace():
    base = {"args": ["a", "b"], "limit": 1, "table": {"x": 1}, "value": "text"}
    merged = deep_merge(base, {"args": ["c"], "limit": None, "table": "flat", "value": {"now": "a table"}})
    assert merged == {"args": ["c"], "limit": None, "table": "flat", "value": {"now": "a table"}}


def test_neither_argument_is_changed():
    base = {"kubernetes": {"namespace": "ci"}}
    override = {"kubernetes": {"namespace": "other", "image": "busybox"}, "new": 1}
    deep_merge(base, override)
    assert base == {"kubernetes": {"namespace": "ci"}}
    assert override == {"kubernetes": {"namespace": "other", "image": "busybox"}, "new": 1}


def test_an_empty_override_gives_an_equal_copy():
    base = {"a": {"b": 1}}
    merged = deep_merge(base, {})
    assert merged == base and merged is not base
