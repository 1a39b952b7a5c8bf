"""The one edit helper the tests change configs and resources with (``tests/support/spec/edit.py``): every kind of path it
promises, and that it never changes its input."""

from __future__ import annotations

import copy

import pytest

from tests.support.spec.edit import DELETE, edit, edits, steps_of

RAW = {
    "cluster": {"name": "ml"},
    "nodePools": [{"name": "h100", "maxNodes": 4, "zones": ["a"]}, {"name": "l4", "maxNodes": 2}],
}
FLAT = {
    "gpu-cluster:cloud": "gcp",
    "gpu-cluster:cluster": {"name": "ml"},
    "gpu-cluster:nodePools": [{"name": "h100", "maxNodes": 4}],
}


def test_paths_read_as_the_config_spells_them():
    assert steps_of("nodePools[1].maxNodes") == ["nodePools", 1, "maxNodes"]
    assert steps_of("spec.levels[10].nodeLabel") == ["spec", "levels", 10, "nodeLabel"]
    assert steps_of(("values", "nodesets", "h100.a")) == ["values", "nodesets", "h100.a"]


def test_nested_set():
    out = edit(RAW, "cluster.name", "train")
    assert out["cluster"] == {"name": "train"} and out["nodePools"] == RAW["nodePools"]


def test_list_index_reaches_the_right_entry():
    out = edit(RAW, "nodePools[1].maxNodes", 8)
    assert [p["maxNodes"] for p in out["nodePools"]] == [4, 8]
    assert edit(RAW, "nodePools[0].zones[0]", "b")["nodePools"][0]["zones"] == ["b"]


def test_delete_removes_a_key_or_a_list_entry():
    assert "maxNodes" not in edit(RAW, "nodePools[0].maxNodes", DELETE)["nodePools"][0]
    assert [p["name"] for p in edit(RAW, "nodePools[0]", DELETE)["nodePools"]] == ["l4"]


def test_delete_of_a_missing_key_fails_instead_of_editing_nothing():
    with pytest.raises(KeyError):
        edit(RAW, "cluster.nmae", DELETE)
    with pytest.raises(IndexError):
        edit(RAW, "nodePools[5].maxNodes", 1)


def test_namespaced_config_is_edited_under_its_namespace():
    out = edit(FLAT, "nodePools[0].maxNodes", 8)
    assert out["gpu-cluster:nodePools"][0]["maxNodes"] == 8 and "nodePools" not in out
    added = edit(FLAT, "gpuRuntime.mode", "gpu-operator")  # a section the config does not have yet
    assert added["gpu-cluster:gpuRuntime"] == {"mode": "gpu-operator"} and "gpuRuntime" not in added
    assert "gpu-cluster:cloud" not in edit(FLAT, "cloud", DELETE)
    assert edit(FLAT, "gpu-cluster:cloud", "aws")["gpu-cluster:cloud"] == "aws"  # the full key works too
    assert edit(FLAT, "gcp:project", "p-1")["gcp:project"] == "p-1"  # another namespace stays as written


def test_plain_dict_keys_are_never_namespaced():
    assert edit(RAW, "scheduling.workload", "slurm")["scheduling"] == {"workload": "slurm"}
    assert edit({"spec": {}}, "metadata.name", "x") == {"spec": {}, "metadata": {"name": "x"}}


def test_missing_intermediate_mappings_are_created():
    out = edit(RAW, "cluster.systemPool.minNodes", 3)
    assert out["cluster"] == {"name": "ml", "systemPool": {"minNodes": 3}}


def test_edits_apply_in_order():
    out = edits(RAW, {"nodePools[0]": DELETE, "nodePools[0].maxNodes": 6})  # the second edit sees l4 at index 0
    assert out["nodePools"] == [{"name": "l4", "maxNodes": 6}]
    assert edits(RAW, {"cluster.mode": "existing", ("cluster", "mode"): DELETE})["cluster"] == {"name": "ml"}


def test_the_input_is_never_changed_and_the_result_shares_nothing_with_it():
    raw, flat = copy.deepcopy(RAW), copy.deepcopy(FLAT)
    new_zones = ["b"]
    out = edits(
        RAW,
        {"nodePools[0].maxNodes": 8, "nodePools[1]": DELETE, "cluster.name": DELETE, "nodePools[0].zones": new_zones},
    )
    edit(FLAT, "nodePools[0].labels.team", "ml")
    assert RAW == raw and FLAT == flat
    out["cluster"]["name"] = "changed later"
    new_zones.append("c")
    assert RAW == raw and out["nodePools"][0]["zones"] == ["b"], "values put in are copied too"


def test_an_empty_path_is_refused():
    with pytest.raises(ValueError):
        edit(RAW, "", 1)
