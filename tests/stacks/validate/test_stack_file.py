"""The one stack file reader (stacks/validate/stack_file.py, stacks/validate/yaml12.py): every input ends in a config map or a
StackFileError with file, line and column, what was received, what is allowed and the fix."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from stacks.validate.stack_file import MAX_BYTES, StackFileError, parse_stack_bytes, read_stack_file
from stacks.validate.yaml12 import MAX_DEPTH, MAX_VALUES, parse_document

WHERE = "Pulumi.t.yaml"


def refused(text: str | bytes) -> StackFileError:
    data = text.encode() if isinstance(text, str) else text
    with pytest.raises(StackFileError) as caught:
        parse_stack_bytes(data, WHERE)
    issue = caught.value.issue
    assert issue.path.startswith(WHERE) and issue.problem and issue.fix, issue
    assert "Traceback" not in str(caught.value)
    return caught.value


def at(error: StackFileError) -> tuple[int, int]:
    """(line, column) of the error, from its path ``file:line:column``."""
    _, line, column = error.issue.path.rsplit(":", 2)
    return int(line), int(column)


# Reading: a file that cannot be read or parsed is refused -------------------------------------------------------------


def test_yaml_syntax_error_names_line_and_column():
    error = refused("config:\n  gpu-cluster:zones: [us-central1-a\n")
    assert at(error)[0] == 3 and "not valid YAML" in error.issue.problem
    assert "from line 2, column 22" in error.issue.problem  # where the unclosed list opened


def test_two_documents_are_refused_at_the_second():
    error = refused("config:\n  gpu-cluster:cloud: gcp\n---\nconfig: {}\n")
    assert at(error) == (3, 1) and "second YAML document" in error.issue.problem


def test_unknown_tag_is_refused():
    error = refused("config:\n  gpu-cluster:maxNodes: !int 2\n")
    assert at(error) == (2, 25) and error.issue.value == "!int"


def test_a_list_as_a_key_is_refused():
    error = refused("config:\n  gpu-cluster:labels:\n    ? [a, b]\n    : x\n")
    assert at(error)[0] == 3 and "cannot be a key" in error.issue.problem


def test_a_byte_that_is_not_utf8_is_located():
    error = refused(b"config:\n  gpu-cluster:region: us-\xffcentral1\n")
    assert at(error) == (2, 26) and "0xff" in error.issue.problem


def test_utf16_with_a_byte_order_mark_reads_like_utf8():
    text = "config:\n  gpu-cluster:region: us-central1\n"
    assert parse_stack_bytes(text.encode("utf-16"), WHERE) == parse_stack_bytes(text.encode(), WHERE)


def test_utf16_without_a_byte_order_mark_is_refused():
    refused("config:\n  gpu-cluster:region: x\n".encode("utf-16-le"))


@pytest.mark.parametrize("config", ["[a, b]", "gcp", "12"])
def test_config_that_is_not_a_mapping_is_refused(config):
    error = refused(f"config: {config}\n")
    assert at(error) == (1, 9) and "config: is" in error.issue.problem


@pytest.mark.parametrize("doc", ["[config]", "just text", "42"])
def test_a_document_that_is_not_a_mapping_is_refused(doc):
    refused(doc + "\n")


def test_a_thousand_nested_lists_are_refused_without_recursion():
    error = refused("config:\n  gpu-cluster:zones: " + "[" * 1000 + "]" * 1000 + "\n")
    assert f"more than {MAX_DEPTH} levels" in error.issue.problem


def test_control_characters_are_refused():
    error = refused("config:\n  gpu-cluster:region: us\x07central1\n")
    assert at(error) == (2, 25) and "U+0007" in error.issue.problem


def test_a_directory_or_a_missing_file_is_refused(tmp_path: Path):
    for path, problem in ((tmp_path, "directory"), (tmp_path / "Pulumi.none.yaml", "no such file")):
        with pytest.raises(StackFileError) as caught:
            read_stack_file(path)
        assert problem in caught.value.issue.problem and caught.value.issue.path == str(path)


def test_a_file_over_the_size_limit_is_refused_before_parsing(tmp_path: Path):
    path = tmp_path / "Pulumi.big.yaml"
    path.write_bytes(b"config:\n" + b"# padding\n" * (MAX_BYTES // 10 + 1))
    with pytest.raises(StackFileError, match="bytes"):
        read_stack_file(path)


# Keys that are not strings --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key, problem", [("1", "is a number"), ("~", "is null"), ("true", "is a boolean")])
def test_a_key_that_is_not_a_string_is_refused(key, problem):
    error = refused(f"config:\n  gpu-cluster:labels:\n    {key}: x\n")
    assert at(error) == (3, 5) and problem in error.issue.problem and "quote" in (error.issue.fix or "")


def test_on_is_a_string_key_in_yaml_1_2_but_it_has_no_namespace():
    error = refused("config:\n  on: true\n")
    assert "no namespace" in error.issue.problem and error.issue.value == "on"


def test_duplicate_keys_are_refused_as_yaml_1_2_requires():
    error = refused("config:\n  gpu-cluster:region: a\n  gpu-cluster:region: b\n")
    assert at(error) == (3, 3) and "first at line 2" in error.issue.problem


# Aliases: cycles and bombs --------------------------------------------------------------------------------------------


def test_a_self_referencing_anchor_is_refused():
    error = refused("config:\n  gpu-cluster:labels: &l {env: dev, self: *l}\n")
    assert "refers to a value that contains it" in error.issue.problem and error.issue.value == "*l"


def bomb(levels: int, width: int = 9) -> str:
    lines = ["config:", f"  x:a0: &a0 [{', '.join(['lol'] * width)}]"]
    for i in range(1, levels + 1):
        lines.append(f"  x:a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_before_it_expands():
    error = refused(bomb(7))  # 9**8 values expanded: 1.37 GB of output before the fix
    assert f"more than {MAX_VALUES:,} values" in error.issue.problem and at(error)[0] == 7  # a5: 9**6 values


def test_a_few_aliases_still_work():
    config = parse_stack_bytes(b"config:\n  x:base: &b {a: 1}\n  x:copy: *b\n  x:m: {<<: *b, c: 2}\n", WHERE)
    assert config == {"x:base": {"a": 1}, "x:copy": {"a": 1}, "x:m": {"a": 1, "c": 2}}


def test_the_expanded_size_counts_every_alias():
    assert parse_document(bomb(3))  # 9**4 = 6,561 values: fine
    with pytest.raises(Exception, match="more than"):
        parse_document(bomb(5))  # 9**6 = 531,441 values: refused


# YAML 1.2, like the Pulumi CLI ----------------------------------------------------------------------------------------


def test_dates_stay_strings():
    config = parse_stack_bytes(b"config:\n  myorg:reviewed: 2024-01-01\n  myorg:meta: {when: 2024-01-01}\n", WHERE)
    assert config == {"myorg:reviewed": "2024-01-01", "myorg:meta": {"when": "2024-01-01"}}


YAML_1_1_VS_1_2 = [
    # text, YAML 1.2 core schema (what we read), what PyYAML (YAML 1.1) read
    ("123456789012", 123456789012, 123456789012),
    ("yes", "yes", True),
    ("on", "on", True),
    ("off", "off", False),
    ("no", "no", False),
    ("y", "y", "y"),
    ("0777", 777, 511),
    ("0o17", 15, "0o17"),
    ("0x1F", 31, 31),
    ("1_000", "1_000", 1000),
    ("2024-01-01", "2024-01-01", "date"),
    ("1:20", "1:20", 80),
    (".nan", "nan", "nan"),
    ("-.inf", -math.inf, -math.inf),
    ("~", None, None),
    ("True", True, True),
    ("012345678901", 12345678901, "012345678901"),
]


@pytest.mark.parametrize("text, yaml12, yaml11", YAML_1_1_VS_1_2, ids=[c[0] for c in YAML_1_1_VS_1_2])
def test_nested_values_follow_yaml_1_2(text, yaml12, yaml11):
    import yaml

    value = parse_stack_bytes(f"config:\n  x:obj: {{v: {text}}}\n".encode(), WHERE)["x:obj"]["v"]
    old = yaml.safe_load(f"v: {text}")["v"]
    assert (
        (math.isnan(value) and math.isnan(old))
        if yaml12 == "nan"
        else (value == yaml12 and type(value) is type(yaml12))
    )
    if yaml11 == "date":
        assert type(old).__name__ == "date"
    elif yaml11 != "nan":
        assert old == yaml11 and type(old) is type(yaml11)


@pytest.mark.parametrize("text", ["123456789012", "yes", "0777", "true", "2024-01-01", "012345678901", ".nan"])
def test_top_level_values_are_their_text_as_the_cli_hands_them_over(text):
    """The CLI reads each plain config value as a string (objects aside) and the program decodes it."""
    assert parse_stack_bytes(f"config:\n  gpu-cluster:x: {text}\n".encode(), WHERE) == {"gpu-cluster:x": text}


def test_secure_values_and_objects_are_kept():
    config = parse_stack_bytes(b"config:\n  gpu-cluster:a: {secure: v1:abc}\n  gpu-cluster:b: [1, on]\n", WHERE)
    assert config == {"gpu-cluster:a": {"secure": "v1:abc"}, "gpu-cluster:b": [1, "on"]}


def test_tags_of_the_core_schema_are_honoured():
    config = parse_stack_bytes(b"config:\n  x:o: {a: !!str 12, b: !!int '7', c: !!float 1, d: ! 3}\n", WHERE)
    assert config["x:o"] == {"a": "12", "b": 7, "c": 1.0, "d": "3"}
    assert "not a valid int" in refused("config:\n  x:o: {a: !!int x}\n").issue.problem


def test_an_empty_file_or_no_config_is_an_empty_config():
    assert parse_stack_bytes(b"", WHERE) == {} and parse_stack_bytes(b"# nothing\nconfig:\n", WHERE) == {}
    assert parse_stack_bytes(b"\xef\xbb\xbfconfig: {a:b: 1}\n", WHERE) == {"a:b": "1"}


def test_an_anchor_redefined_inside_itself_is_not_a_cycle():
    """YAML lets a later anchor take an earlier one's name; the alias then means the later one."""
    assert parse_document("a: &a [&a x, *a]\nb: *a\n") == {"a": ["x", "x"], "b": "x"}


def test_an_aliased_top_level_scalar_keeps_its_type_inside_objects():
    config = parse_stack_bytes(b"config:\n  x:n: &n 5\n  x:o: {v: *n}\n", WHERE)
    assert config == {"x:n": "5", "x:o": {"v": 5}}
