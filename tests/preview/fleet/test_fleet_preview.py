"""python -m preview --stack fleet: the workers are previewed offline from their stack files, the Fleet section shows
them with the fleet's cost (= the sum of the three stacks' own previews, computed apart), no token is shown anywhere,
and a fleet that cannot be resolved is a configuration error (exit 2) naming the worker and the fix."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from pulumi.runtime import rpc

from preview.__main__ import main, render_report
from preview.mocks.cloud import OFFLINE_TOKEN_PREFIX, SECRET_STACK_OUTPUTS
from stacks.spec.fleet import EGRESS_OUTPUT, FACTS_OUTPUT, KUBECONFIG_OUTPUT
from preview.report import PreviewReport
from preview.run import preview_config, preview_stack
from tests.support.spec.fleet_configs import encoded, raw
from tests.support.spec.edit import edits


@functools.cache
def report(stack: str) -> PreviewReport:
    return preview_stack(stack)


def test_fleet_section_shows_both_workers_and_the_manager():
    fleet = report("fleet").fleet
    assert report("fleet").exit_code == 0 and report("fleet").errors == []
    assert [(c["name"], c["role"], c["cloud"]) for c in fleet["clusters"]] == [
        ("manager", "manager", "gcp"),
        ("gke", "worker", "gcp"),
        ("eks", "worker", "aws"),
    ]
    research = next(q for q in fleet["queues"] if q["name"] == "research")
    assert research["runsOn"] == {"H100_80GB": ["gke", "eks"], "L4": ["gke"], "L40S": ["eks"]}
    text = render_report(report("fleet"), "text")
    for word in (
        "Fleet (MultiKueue",
        "fleet-gke",
        "fleet-eks",
        "MultiKueueCluster",
        "MultiKueueConfig",
        "AdmissionCheck",
        "blended $",
    ):
        assert word in text, word


def test_runs_on_says_a_capacity_block_worker_runs_jobs_only_inside_its_window():
    # eks's H100s are a capacity block (p5 at 0 nodes until 2030-01-07T11:30Z): its Kueue admits by quota before
    # that, and the job waits for nodes until the pods-ready timeout evicts it
    research = next(q for q in report("fleet").fleet["queues"] if q["name"] == "research")
    assert research["windows"] == {
        "H100_80GB": {"eks": {"start": "2030-01-07T11:30:00Z", "end": "2030-07-08T11:30:00Z"}}
    }
    window = "eks only inside its block window (from 2030-01-07T11:30:00Z to 2030-07-08T11:30:00Z)"
    for fmt in ("text", "markdown"):
        text = " ".join(render_report(report("fleet"), fmt).split())
        assert f"H100_80GB (fleet-h100-80gb): gke, {window}" in text, fmt
    assert "L40S" not in research["windows"]  # eks's L40S pool is spot, there all the time


def test_fleet_cost_totals_are_the_sum_of_each_stacks_own_preview():
    fleet = report("fleet").fleet["totals"]
    alone = [preview_stack(s).cost for s in ("fleet", "fleet-gke", "fleet-eks")]  # fresh, separate previews
    assert all(c is not None for c in alone)
    assert fleet["usdPerHourMin"] == pytest.approx(sum(c.usd_per_hour_min for c in alone), abs=1e-3)
    assert fleet["usdPerHourMax"] == pytest.approx(sum(c.usd_per_hour_max for c in alone), abs=1e-3)
    assert fleet["usdPerMonthMax"] == pytest.approx(sum(c.usd_per_month_max for c in alone), abs=0.02)
    assert fleet["maxGpus"] == sum(c.max_gpus for c in alone) == 72
    gpu_usd = sum(p.usd_per_hour_max for c in alone for p in c.pools)
    assert fleet["blendedUsdPerGpuHour"] == pytest.approx(gpu_usd / 72, abs=1e-4)
    assert fleet["gpusByModel"] == {"H100_80GB": 48, "L4": 16, "L40S": 8}


def _canary_outside_secrets(value: Any, path: str = "") -> list[str]:
    """Paths where the token canary appears in plaintext (not inside a Pulumi secret)."""
    if rpc.is_rpc_secret(value):
        return []
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _canary_outside_secrets(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _canary_outside_secrets(v, f"{path}[{i}]")]
    return [path] if isinstance(value, str) and OFFLINE_TOKEN_PREFIX in value else []


@pytest.mark.parametrize("stack", ["fleet", "fleet-gke", "fleet-eks"])
def test_no_token_in_any_output_or_recorded_input(stack):
    rep = report(stack)
    for fmt in ("text", "json", "markdown", "sarif"):
        assert OFFLINE_TOKEN_PREFIX not in render_report(rep, fmt), fmt
    for r in rep.resources:
        assert _canary_outside_secrets(r.inputs) == [], r.name
    # every stack output but the ones exported as Pulumi secrets (fleetKubeconfig, kubeconfig): the manager's
    # fleetEgressAddresses and the fleet facts included
    plain = {k: v for k, v in rep.outputs.items() if k not in SECRET_STACK_OUTPUTS}
    assert FACTS_OUTPUT in plain and (EGRESS_OUTPUT in plain) == (stack == "fleet"), sorted(plain)
    assert OFFLINE_TOKEN_PREFIX not in json.dumps(plain, default=str)
    if stack != "fleet":  # proves the output check can see a token: the worker's secret kubeconfig holds one
        assert OFFLINE_TOKEN_PREFIX in json.dumps(rep.outputs[KUBECONFIG_OUTPUT], default=str)
    if stack == "fleet":  # the canary does reach the manager: inside the kubeconfig Secrets, as Pulumi secrets
        secrets = [r for r in rep.resources if r.type == "kubernetes:core/v1:Secret"]
        assert len(secrets) == 2 and all(rpc.is_rpc_secret(s.inputs["stringData"]) for s in secrets)
        assert all(
            OFFLINE_TOKEN_PREFIX in json.dumps(rpc.unwrap_rpc_secret(s.inputs["stringData"])) for s in secrets
        )  # proves the check above looked at a real token


def _manager(changes: dict) -> dict:
    return encoded(edits(raw("fleet"), changes))


def test_missing_worker_stack_file_is_exit_2_with_the_fix():
    rep = preview_config("fleet", _manager({("fleet", "workers", 1, "stack"): "acme/gpu-cluster/fleet-aks"}))
    assert rep.exit_code == 2 and rep.resources == []
    (err,) = rep.errors
    assert err.path == "gpu-cluster:fleet.workers[1].stack"
    assert "no stack file Pulumi.fleet-aks.yaml" in err.problem and "add Pulumi.fleet-aks.yaml" in (err.fix or "")


def test_a_manager_as_worker_is_a_cycle_exit_2():
    rep = preview_config("fleet-b", _manager({("fleet", "workers", 1, "stack"): "acme/gpu-cluster/fleet"}))
    (err,) = rep.errors
    assert rep.exit_code == 2 and "is itself a fleet manager" in err.problem and "cycle" in err.problem


def test_a_stack_that_is_not_a_worker_is_exit_2():
    rep = preview_config("fleet", _manager({("fleet", "workers", 1, "stack"): "acme/gpu-cluster/eks-kueue"}))
    (err,) = rep.errors
    assert rep.exit_code == 2 and "does not declare gpu-cluster:fleet role worker" in err.problem


def test_cli_exit_codes(capsys):
    assert main(["--stack", "fleet", "--format", "json", "--no-policies"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["fleet"]["workers"] == ["gke", "eks"] and OFFLINE_TOKEN_PREFIX not in json.dumps(doc)


def test_the_fleet_section_says_the_egress_addresses_are_unknown_until_deploy():
    rep = report("fleet")
    assert rep.fleet["egress"] == {
        "source": "reserved",
        "reserved": 1,
        "addresses": None,
        "byReference": ["gke", "eks"],
        "listed": [],
    }
    for fmt in ("text", "markdown"):
        text = " ".join(render_report(rep, fmt).split())
        assert (
            "1 static NAT address reserved (Cloud NAT MANUAL_ONLY), fleetEgressAddresses known after the "
            "manager's pulumi up; workers admit them by reference (fleet.manager): gke, eks" in text
        ), fmt
    assert json.loads(render_report(rep, "json"))["fleet"]["egress"]["addresses"] is None


def test_a_capacity_block_worker_previewed_outside_its_window_is_a_warning_in_every_format():
    # the example's p5 block opens in 2030: eks admits H100 copies by quota today, and each one it wins waits out the
    # pods-ready timeout before the manager dispatches it again. A warning, not an error: the exit code stays 0.
    rep = report("fleet")
    assert rep.exit_code == 0
    found = [w for w in rep.warnings if "capacity block" in w.problem and "eks" in w.problem]
    assert len(found) == 1 and found[0].warning and found[0].path.endswith("fleet.workers[1]")
    assert "from 2030-01-07T11:30:00Z to 2030-07-08T11:30:00Z" in found[0].problem
    assert "is before it" in found[0].problem and "pods-ready timeout" in found[0].problem
    for fmt in ("text", "markdown", "json"):
        assert "2030-01-07T11:30:00Z to 2030-07-08T11:30:00Z, and now" in " ".join(render_report(rep, fmt).split()), fmt


def test_no_window_warning_inside_the_window_and_one_after_it():
    import datetime as dt

    from preview.fleet.summary import outside_window_warnings

    summary = {
        "queues": [
            {"windows": {"H100_80GB": {"eks": {"start": "2030-01-07T11:30:00Z", "end": "2030-07-08T11:30:00Z"}}}},
            {"windows": {"H100_80GB": {"eks": {"start": "2030-01-07T11:30:00Z", "end": "2030-07-08T11:30:00Z"}}}},
        ]
    }
    at = lambda *d: dt.datetime(*d, tzinfo=dt.timezone.utc)  # noqa: E731
    assert outside_window_warnings(summary, ["gke", "eks"], at(2030, 3, 1)) == []
    after = outside_window_warnings(summary, ["gke", "eks"], at(2030, 7, 8, 11, 30))
    assert len(after) == 1 and "is after it" in after[0].problem  # one per worker and model, not per queue


def test_a_stack_file_elsewhere_previews_the_workers_next_to_it(tmp_path, capsys):
    # an edited fleet in another folder: its eks worker's capacity block has no fee, so its price is unknown. Read
    # from the repository instead, the workers would be priced and the fleet total complete
    from preview.engine import PROJECT_ROOT

    for name in ("fleet", "fleet-gke", "fleet-eks"):
        text = (PROJECT_ROOT / f"Pulumi.{name}.yaml").read_text()
        if name == "fleet-eks":
            assert "upfrontFeeUsd: 274869.50" in text
            text = "\n".join(line for line in text.splitlines() if "upfrontFeeUsd" not in line)
        (tmp_path / f"Pulumi.{name}.yaml").write_text(text)
    args = ["--stack", "fleet", "--stack-file", str(tmp_path / "Pulumi.fleet.yaml"), "--format", "json"]
    main([*args, "--no-policies"])
    totals = json.loads(capsys.readouterr().out)["fleet"]["totals"]
    assert totals["complete"] is False and totals["unpricedPools"] == ["eks/p5"]
