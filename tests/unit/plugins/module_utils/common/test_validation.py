# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
import collections

import pytest
import yaml

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.scheduling import check_toleration, merge_tolerations
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    check_int,
    object_list,
    optional_choice,
    plain,
    problems_of,
    reject_unknown_keys,
    rendered_present_entries,
    setting_int,
)


class TaggedStr(str):
    """Stands in for the str subclasses Ansible hands to filters."""


def test_error_names_path_reason_and_value():
    error = ValidationError("pool.gpus", "must be an integer >= 1", 0)
    assert str(error) == "pool.gpus: must be an integer >= 1 (got 0)"
    assert (error.path, error.value) == ("pool.gpus", 0)


def test_error_without_value():
    assert str(ValidationError("pool.name", "is required")) == "pool.name: is required"


def test_plain_strips_subclasses_so_yaml_can_write_them():
    data = collections.OrderedDict([(TaggedStr("a"), [TaggedStr("b"), (1, True)])])
    with pytest.raises(yaml.representer.RepresenterError):
        yaml.safe_dump(data)
    result = plain(data)
    assert result == {"a": ["b", [1, True]]}
    assert yaml.safe_load(yaml.safe_dump(result)) == result


@pytest.mark.parametrize("value", [True, "1", 1.0, None])
def test_check_int_refuses_non_ints(value):
    with pytest.raises(ValidationError, match="must be an integer"):
        check_int(value, "x")


def test_unknown_key_error_hides_the_value():
    with pytest.raises(ValidationError) as error:
        reject_unknown_keys({"tokn": "glrt-secret"}, {"token"}, "pool")
    assert "pool.tokn" in str(error.value)
    assert "glrt-secret" not in str(error.value)


@pytest.mark.parametrize(
    "toleration, expected",
    [
        ({"key": "a"}, {"key": "a", "operator": "Exists"}),
        ({"key": "a", "value": "b", "effect": "NoExecute"}, {"key": "a", "operator": "Equal", "value": "b", "effect": "NoExecute"}),
    ],
)
def test_toleration_operator_is_made_explicit(toleration, expected):
    assert check_toleration(toleration, "t") == expected


def test_merge_tolerations_keeps_order_and_drops_duplicates():
    a = {"key": "a", "operator": "Exists"}
    b = {"key": "b", "operator": "Exists"}
    assert merge_tolerations([a, b], [b, a, {"key": "c", "operator": "Exists"}]) == [a, b, {"key": "c", "operator": "Exists"}]


def test_a_renamed_key_is_refused_with_its_new_name():
    with pytest.raises(ValidationError) as error:
        reject_unknown_keys({"lane": "dri"}, {"gpu_access"}, "p[name=x]", {"lane": "gpu_access"})
    assert str(error.value) == "p[name=x].lane: was renamed gpu_access; set p[name=x].gpu_access instead (same values)"
    # Without the renaming it is one more unknown key.
    with pytest.raises(ValidationError, match=r"^p\.lane: unknown key; known keys: gpu_access$"):
        reject_unknown_keys({"lane": "dri"}, {"gpu_access"}, "p")
    reject_unknown_keys({"gpu_access": "dri"}, {"gpu_access"}, "p", {"lane": "gpu_access"})


def test_object_list_names_a_non_mapping_entry_without_showing_it():
    assert object_list(None, "answers") == []
    assert object_list([{"metadata": {"name": "a"}}], "answers") == [{"metadata": {"name": "a"}}]
    with pytest.raises(ValidationError) as raised:
        object_list([{"metadata": {}}, "glrt-SECRET-token"], "answers.secrets")
    assert str(raised.value) == "answers.secrets[1]: must be a mapping, not str"
    with pytest.raises(ValidationError, match="answers: must be a list, not str"):
        object_list("glrt-SECRET-token", "answers")


def test_rendered_present_entries_makes_the_present_ones_and_keeps_each_problem_by_index():
    def render(entry, path):
        if entry.get("size", 1) < 1:
            raise ValidationError(path + ".size", "must be >= 1", entry["size"])
        return "%s at %s" % (entry.get("name"), path)

    entries = [{"name": "a"}, {"name": "gone", "state": "absent", "size": 0}, {"name": "b", "size": 0},
               {"size": 2, "state": "present"}]
    rendered, problems = rendered_present_entries(entries, "sets", render)
    assert rendered == {0: "a at sets[name=a]", 3: "None at sets[3]"}
    assert problems == {2: "sets[name=b].size: must be >= 1 (got 0)"}


def test_problems_of_turns_a_raising_check_into_a_list_of_problems():
    assert problems_of(optional_choice, {"state": "present"}, "state", "pools[name=a]", ("present", "absent")) == []
    assert problems_of(optional_choice, {"state": "gone"}, "state", "pools[name=a]", ("present", "absent")) == [
        "pools[name=a].state: must be one of present, absent (got 'gone')"]


@pytest.mark.parametrize("value, number", [
    (7, 7), ("7", 7), (" 12 ", 12), ("-1", -1), (TaggedStr("3"), 3),  # -e name=7 gives a string of digits
    (True, None), ("seven", None), ("7.5", None), (None, None), ([7], None),
])
def test_a_role_variable_is_an_integer_as_ansibles_int_type_takes_it(value, number):
    assert setting_int(value) == number
