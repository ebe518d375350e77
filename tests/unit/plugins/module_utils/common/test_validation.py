# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
import collections
from fractions import Fraction

import pytest
import yaml

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.scheduling import check_toleration, merge_tolerations
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    check_int,
    check_quantity,
    check_request_within_limit,
    check_resources,
    check_seconds,
    quantity_value,
    seconds_problems,
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


# The value each text has in Kubernetes' grammar (k8s.io/apimachinery resource.Quantity; 1.G is taken by its parser).
@pytest.mark.parametrize("text, value", [
    ("100m", Fraction(1, 10)), ("1.5Gi", 1536 * 2 ** 20), ("1e3", 1000), ("1E3", 1000), ("1e-3", Fraction(1, 1000)),
    ("1e+3", 1000), ("8G", 8 * 10 ** 9), ("8Gi", 8 * 2 ** 30), ("512Mi", 512 * 2 ** 20), ("1k", 1000),
    ("1Ki", 1024), ("1E", 10 ** 18), ("2", 2), ("0", 0), ("007", 7), (".5", Fraction(1, 2)), ("+.5", Fraction(1, 2)),
    ("1.", 1), ("1.G", 10 ** 9), ("5n", Fraction(5, 10 ** 9)), ("5u", Fraction(5, 10 ** 6)), ("-1", -1),
])
def test_a_kubernetes_quantity_has_the_value_kubernetes_gives_it(text, value):
    assert quantity_value(text) == value


# Each refused by the API server and GitLab Runner: K is no suffix (k is 1000, Ki 1024), nor GB, mi or B.
@pytest.mark.parametrize("text", ["8GB", "", "1K", "1KB", "1mi", "1e", "1e1.5", "1.5.5", "1EiB", " 1", "1 ", "1Mi\n",
                                  ".", "+", "-", "Mi", "one", "1_000", "0x10", "1Gi1"])
def test_what_is_no_kubernetes_quantity_has_no_value(text):
    assert quantity_value(text) is None


@pytest.mark.parametrize("value, text", [("500m", "500m"), (2, "2"), (0.5, "0.5"), ("8Gi", "8Gi"), (0, "0")])
def test_check_quantity_returns_the_text_kubernetes_reads(value, text):
    assert check_quantity({"memory_request": value}, "memory_request", "pool") == text
    assert check_quantity({}, "memory_request", "pool") is None


@pytest.mark.parametrize("value, reason", [
    ("8GB", "pool.memory_request: is not a Kubernetes quantity (e.g. 8Gi, 8G, 512Mi, 500m, 2) (got '8GB')"),
    ("", "pool.memory_request: is not a Kubernetes quantity (e.g. 8Gi, 8G, 512Mi, 500m, 2) (got '')"),
    ("-1Gi", "pool.memory_request: must not be negative (got '-1Gi')"),
    (-1, "pool.memory_request: must not be negative (got -1)"),
    (True, "pool.memory_request: must be a Kubernetes quantity (e.g. 8Gi, 8G, 512Mi, 500m, 2), not bool (got True)"),
    (float("nan"), "pool.memory_request: is not a Kubernetes quantity"),
])
def test_check_quantity_refuses_naming_the_path_and_the_value(value, reason):
    with pytest.raises(ValidationError) as error:
        check_quantity({"memory_request": value}, "memory_request", "pool")
    assert str(error.value).startswith(reason)


def test_a_request_above_its_limit_is_refused_by_value_not_by_text():
    check_request_within_limit("1Gi", "r", "1024Mi", "l")  # the same amount, written two ways
    check_request_within_limit("900m", "r", "1", "l")
    check_request_within_limit("2", "r", None, "l")
    with pytest.raises(ValidationError, match=r"^r: must not exceed l \(1G\): Kubernetes refuses .* \(got '1Gi'\)$"):
        check_request_within_limit("1Gi", "r", "1G", "l")  # 2^30 > 10^9


def test_check_resources_checks_each_quantity_and_each_request_against_its_limit():
    resources = {"requests": {"cpu": "100m", "memory": 134217728}, "limits": {"memory": "256Mi"}}
    assert check_resources(resources, "x") == {"requests": {"cpu": "100m", "memory": "134217728"},
                                               "limits": {"memory": "256Mi"}}
    with pytest.raises(ValidationError, match=r"^x\.requests\.memory: is not a Kubernetes quantity .*'8GB'"):
        check_resources({"requests": {"memory": "8GB"}}, "x")
    with pytest.raises(ValidationError, match=r"^x\.requests\.memory: must not exceed x\.limits\.memory \(256Mi\)"):
        check_resources({"requests": {"memory": "1Gi"}, "limits": {"memory": "256Mi"}}, "x")
    with pytest.raises(ValidationError, match=r"^x\.claims: unknown key"):
        check_resources({"claims": []}, "x")
    with pytest.raises(ValidationError, match=r"^x\.limits: must be a mapping"):
        check_resources({"limits": "1Gi"}, "x")


@pytest.mark.parametrize("value, seconds", [(600, 600), ("600", 600), (" 30 ", 30)])
def test_seconds_as_ansibles_int_type_takes_them(value, seconds):
    assert check_seconds({"x_wait_timeout": value}, "x_wait_timeout") == seconds
    assert seconds_problems({"x_wait_timeout": value}, "x_wait_timeout") == []


@pytest.mark.parametrize("value, expected", [
    ("five minutes", "x_wait_timeout: must be a whole number of seconds >= 1, such as 600 (got 'five minutes')"),
    ("5m", "x_wait_timeout: must be a whole number of seconds >= 1, such as 600; for 5m write 300 (got '5m')"),
    ("1h30m", "x_wait_timeout: must be a whole number of seconds >= 1, such as 600; for 1h30m write 5400 (got '1h30m')"),
    ("1.5", "x_wait_timeout: must be a whole number of seconds >= 1, such as 600 (got '1.5')"),
    (0, "x_wait_timeout: must be a whole number of seconds >= 1, such as 600 (got 0)"),
    (True, "x_wait_timeout: must be a whole number of seconds >= 1, such as 600 (got True)"),
    (None, "x_wait_timeout: must be a whole number of seconds >= 1, such as 600 (got None)"),
])
def test_seconds_refused_naming_the_variable_never_by_int(value, expected):
    assert seconds_problems({"x_wait_timeout": value}, "x_wait_timeout") == [expected]
