# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The filter wrappers hand builders plain Python data, whatever container Ansible passes."""
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_filter, as_input_filter


class LazyDict(dict):
    """Stands for ansible-core's lazy dict, a dict subclass whose deepcopy templates it all again."""


class LazyList(list):
    """Stands for ansible-core's lazy list."""


def _kinds(value):
    """The exact types of a value and of everything inside it."""
    inside = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return {type(value)}.union(*[_kinds(v) for v in inside])


def _nested():
    return LazyDict({"pools": LazyList([LazyDict({"name": "a", "rules": LazyList([LazyDict({"verbs": ["get"]})])})])})


def test_as_filter_gives_the_builder_plain_data():
    seen = {}

    def builder(value, gpu_classes, **options):
        seen.update(value=value, gpu_classes=gpu_classes, options=options)
        return "built"

    assert as_filter("probe", builder)(_nested(), LazyDict({"l4": LazyDict({"product": "x"})}),
                                       extra=LazyDict({"k": [1]})) == "built"
    assert _kinds(seen["value"]) <= {dict, list, str}
    assert _kinds(seen["gpu_classes"]) <= {dict, str}
    assert _kinds(seen["options"]["extra"]) <= {dict, list, int}
    assert seen["value"] == {"pools": [{"name": "a", "rules": [{"verbs": ["get"]}]}]}


def test_as_input_filter_gives_the_builder_plain_data():
    seen = []
    as_input_filter("probe", seen.append)(_nested())
    assert _kinds(seen[0]) <= {dict, list, str}


def test_as_input_filter_can_hand_the_value_over_as_ansible_gave_it():
    seen, value = [], _nested()
    as_input_filter("probe", seen.append, copy_input=False)(value)
    assert seen[0] is value
