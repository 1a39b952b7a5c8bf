"""A misspelled top-level key or config namespace is named with the key it should be, instead of the file reading as
one without settings (every required setting then "missing", the typo never mentioned)."""

from __future__ import annotations

import pytest

from stacks.validate.stack_file import StackFileError, parse_stack_bytes

WHERE = "Pulumi.t.yaml"
VALID = "  gpu-cluster:cloud: gcp\n  gpu-cluster:region: us-central1\n"


def refused(text: str) -> StackFileError:
    with pytest.raises(StackFileError) as caught:
        parse_stack_bytes(text.encode(), WHERE)
    return caught.value


def test_a_misspelled_config_key_is_named_with_the_key_it_should_be():
    issue = refused("confg:\n" + VALID).issue
    assert issue.problem == "unknown key 'confg' (did you mean 'config'?)"
    assert issue.value == "confg" and issue.fix == "rename confg: to config:"
    assert issue.path.startswith(f"{WHERE}:")


def test_a_misspelled_namespace_is_named_with_every_key_it_hides():
    issue = refused("config:\n  gpu-clustr:cloud: gcp\n  gpu-clustr:region: us-central1\n").issue
    assert (
        issue.problem == "unknown key 'gpu-clustr:cloud': unknown namespace 'gpu-clustr' (did you mean 'gpu-cluster'?)"
    )
    assert issue.value == "gpu-clustr:cloud, gpu-clustr:region"
    assert issue.fix == "write gpu-cluster:cloud, gpu-cluster:region"
    assert issue.path == f"{WHERE}:2:21"  # the first misspelled key's line


def test_a_misspelled_provider_namespace_is_named_too():
    issue = refused("config:\n  gpc:project: p\n" + VALID).issue
    assert "unknown namespace 'gpc' (did you mean 'gcp'?)" in issue.problem


@pytest.mark.parametrize(
    "text",
    [
        "config:\n" + VALID + "  random:seed: 1\n",  # another provider's namespace, nothing like ours
        "secretsprovider: passphrase\nencryptionsalt: v1:abc\nconfig:\n" + VALID,  # Pulumi's own top-level keys
    ],
)
def test_other_namespaces_and_pulumis_own_keys_still_read(text):
    assert parse_stack_bytes(text.encode(), WHERE)["gpu-cluster:cloud"] == "gcp"
