"""The one way validation reports a problem: ``Issues`` scopes build the config path, name the pool, keep order."""

from __future__ import annotations

from stacks.validate.issues import Issues, SpecIssue, pool_subject


def test_an_error_below_nested_scopes_has_the_path_as_the_user_writes_it():
    issues = Issues()
    issues.at("cluster").at("subnets").error(
        "us-east-1b",
        "not an EC2 subnet ID",
        "subnet-xyz",
        allowed="subnet- followed by 8 or 17 hex digits",
        fix="copy the ID",
    )
    assert issues.found == [
        SpecIssue(
            "gpu-cluster:cluster.subnets.us-east-1b",
            "not an EC2 subnet ID",
            "subnet-xyz",
            "subnet- followed by 8 or 17 hex digits",
            "copy the ID",
            warning=False,
        )
    ]


def test_list_indexes_render_in_brackets_and_a_field_may_be_several_steps_or_none():
    issues = Issues()
    queues = issues.at("scheduling", "queues")
    queues.error((2, "quotas", 0, "pool"), "no GPU pool with this name")
    queues.at(1, "namespace").error(None, "namespace is reserved for the system")
    assert [i.path for i in issues.found] == [
        "gpu-cluster:scheduling.queues[2].quotas[0].pool",
        "gpu-cluster:scheduling.queues[1].namespace",
    ]


def test_warn_marks_a_warning_and_error_does_not():
    issues = Issues()
    issues.warn("labels", "a warning", 1)
    issues.error("labels", "an error", 2)
    assert [(i.problem, i.warning) for i in issues.found] == [("a warning", True), ("an error", False)]
    assert str(issues.found[0]).startswith("warning: gpu-cluster:labels: a warning")


def test_a_pool_scope_names_the_pool_in_every_problem_below_it():
    issues = Issues()
    pool = issues.pool(3, "h100")
    pool.error("machineType", "unknown GPU machine type for gcp", "a3-highgpu-9g")
    pool.at("taints", 1).warn("key", "duplicate taint")
    assert [(i.path, i.problem) for i in issues.found] == [
        ("gpu-cluster:nodePools[3].machineType", "pool 'h100': unknown GPU machine type for gcp"),
        ("gpu-cluster:nodePools[3].taints[1].key", "pool 'h100': duplicate taint"),
    ]
    assert pool.path == issues.at("scheduling").pool(3, "h100").path == "gpu-cluster:nodePools[3]"


def test_about_names_a_subject_at_any_path_and_the_root_names_nothing():
    issues = Issues()
    issues.at("gpuRuntime", "sharing").about(pool_subject("a100")).error("mode", "MIG needs a MIG manager")
    issues.at("nodePools", 0).error("name", "plain")
    assert [i.problem for i in issues.found] == ["pool 'a100': MIG needs a MIG manager", "plain"]


def test_every_scope_of_one_root_collects_into_one_list_in_reporting_order():
    issues = Issues()
    a, b = issues.at("cluster"), issues.pool(0, "l4")
    b.error("zones", "second?")
    a.error("name", "first?")
    b.warn("minNodes", "third")
    assert [i.problem for i in issues.found] == ["pool 'l4': second?", "first?", "pool 'l4': third"]
    assert len(issues) == len(a) == 3
    assert Issues().found == []  # a new root starts empty: roots share nothing


def test_found_is_a_copy_and_extend_adopts_issues_of_another_collector():
    issues, other = Issues(), Issues()
    issues.found.append(SpecIssue("gpu-cluster:x", "ignored"))
    assert issues.found == []
    other.pool(1, "b200").error("maxNodes", "too many")
    other.error("region", "unknown region")
    issues.extend(i for i in other.found if i.path.startswith("gpu-cluster:nodePools"))
    assert [i.problem for i in issues.found] == ["pool 'b200': too many"]
