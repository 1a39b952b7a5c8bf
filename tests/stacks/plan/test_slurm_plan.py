"""The pure Slurm renderer: directives, NodeSets, partitions, gres.conf, topology.yaml, QOS, accounts and the
sacctmgr script, for the 512-GPU example stack and for small specs that isolate one rule each."""

from __future__ import annotations


import yaml
from hypothesis import given
from hypothesis import strategies as st

from catalog import load_catalog
from stacks.plan.slurm_nodes import default_cpus, default_real_memory_mib
from stacks.plan.slurm import SlurmPlan, plan_slurm
from stacks.plan.slurm_topology import block_sizes
from render.slurm_values import client_slurm_conf
from stacks.plan.facts import pool_facts
from stacks.validate.load import decode_config, load_spec
from stacks.spec.slurm import SlurmPreemptType
from tests.support.spec.edit import DELETE, edits
from tests.support.slurm.configs import EKS_ZONES, GKE_NO_ACCOUNTING, slurm_configs
from tests.support.whatif.scenarios import CAPS_STACK

CAT = load_catalog()


def plan_of(config: dict) -> SlurmPlan:
    spec, _ = load_spec(decode_config(config), CAT)
    return plan_slurm(spec.scheduling, [pool_facts(spec, p, CAT) for p in spec.node_pools])


def test_512_gpu_stack_directives():
    plan = plan_of(slurm_configs()["gke-h100-512"])
    assert plan.directives == {
        "SelectType": "select/cons_tres",
        "SelectTypeParameters": "CR_Core_Memory",
        "GresTypes": "gpu",
        "SchedulerType": "sched/backfill",
        "SchedulerParameters": "bf_continue,bf_interval=30,bf_max_job_test=1000,bf_resolution=60,bf_window=1440",
        "PriorityType": "priority/multifactor",
        "PriorityWeightFairshare": "10000",
        "PriorityWeightAge": "1000",
        "PriorityWeightJobSize": "1000",
        "PriorityWeightQOS": "2000",
        "PreemptType": "preempt/qos",
        "PreemptMode": "REQUEUE",
        "AccountingStorageTRES": "gres/gpu,gres/gpu:h100,gres/gpu:l4",
        "AccountingStorageEnforce": "associations,limits,qos,safe",
        # l4-eval (0-8) follows the queue; h100-mega (64-64) is fixed, so its partition is never suspended
        "ResumeProgram": "/usr/local/lib/gpu-cluster/slurm-resume",
        "SuspendProgram": "/usr/local/lib/gpu-cluster/slurm-suspend",
        "SuspendTime": "600",
        "SuspendTimeout": "300",
        "ResumeTimeout": "1200",
        "SuspendExcParts": "h100-mega",
        # users see only their own jobs, accounts, usage; their slurmrestd tokens live at most an hour
        "PrivateData": "accounts,events,jobs,reservations,usage,users",
        "AuthAltParameters": "max_token_lifespan=3600",
    }


def test_512_gpu_stack_nodes_gres_and_partitions():
    plan = plan_of(slurm_configs()["gke-h100-512"])
    mega, l4 = plan.nodeset("h100-mega"), plan.nodeset("l4-eval")
    assert (mega.replicas, mega.gres, mega.cpus, mega.real_memory_mib) == (64, "gpu:h100:8", 195, 1722 * 1024)
    assert (l4.replicas, l4.gres, l4.cpus, l4.real_memory_mib) == (8, "gpu:l4:2", 22, 88 * 1024)
    assert mega.node_conf == "CPUs=195 Gres=gpu:h100:8 RealMemory=1763328"
    assert plan.gres_conf().splitlines()[1:] == [
        "NodeName=h100-mega-[0-63] Name=gpu Type=h100 File=/dev/nvidia[0-7]",
        "NodeName=l4-eval-[0-7] Name=gpu Type=l4 File=/dev/nvidia[0-1]",
    ]
    lines = {p.name: (p.nodesets, p.config()) for p in plan.partitions}
    assert lines == {
        "h100-mega": (
            ("h100-mega",),
            "Default=NO State=UP MaxTime=UNLIMITED MaxNodes=64 OverSubscribe=EXCLUSIVE "
            "DefCpuPerGPU=24 DefMemPerGPU=220416 PriorityTier=1 Topology=h100-mega",
        ),
        "l4-eval": (
            ("l4-eval",),
            "Default=NO State=UP MaxTime=UNLIMITED MaxNodes=8 DefCpuPerGPU=11 DefMemPerGPU=45056 PriorityTier=1",
        ),
        "all": (("ALL",), "Default=YES State=UP MaxTime=UNLIMITED DefCpuPerGPU=11 DefMemPerGPU=45056 PriorityTier=1"),
    }


def test_512_gpu_stack_topology_blocks():
    doc = yaml.safe_load(plan_of(slurm_configs()["gke-h100-512"]).topology_yaml())
    assert doc[0] == {"topology": "default", "cluster_default": True, "flat": True}
    assert doc[1]["topology"] == "h100-mega" and doc[1]["block"]["block_sizes"] == [8, 16, 32, 64]
    assert [b["block"] for b in doc[1]["block"]["blocks"]] == [f"h100-mega-b{i}" for i in range(8)]
    assert all("nodes" not in b for b in doc[1]["block"]["blocks"])  # dynamic nodes join by annotation


def test_512_gpu_stack_qos_accounts_and_script():
    plan = plan_of(slurm_configs()["gke-h100-512"])
    assert [(q.name, q.priority, q.preempts) for q in plan.qos] == [
        ("urgent", 1000, ("standard", "scavenger")),
        ("standard", 100, ("scavenger",)),
        ("scavenger", 1, ()),
    ]
    assert [(a.name, a.fairshare, a.default_qos, a.grp_tres) for a in plan.accounts] == [
        ("pretraining", 3, "standard", "gres/gpu:h100=384"),  # uncapped on l4: no untyped total
        ("research", 1, "standard", "gres/gpu=144,gres/gpu:h100=128,gres/gpu:l4=16"),
    ]
    script = plan.sacctmgr_script("h100-train")
    assert script.startswith("#!/bin/sh\n") and "set -eu" in script
    assert 'here pretraining || $S add account pretraining cluster="$CLUSTER"' in script
    assert (
        '$S modify account where name=pretraining cluster="$CLUSTER" set fairshare=3 qos=urgent,standard,'
        "scavenger defaultqos=standard grptres=gres/gpu=-1,gres/gpu:h100=384,gres/gpu:l4=-1"
    ) in script
    assert "grptres=gres/gpu=144,gres/gpu:h100=128,gres/gpu:l4=16\n" in script
    assert (
        "$S modify qos where name=scavenger set priority=1 preempt='' description='preemptible filler jobs'" in script
    )


def test_node_resources_leave_room_for_the_system():
    assert (default_cpus(8), default_cpus(208), default_cpus(192)) == (6, 195, 180)
    assert default_real_memory_mib(32) == 26 * 1024  # 6 GiB minimum reserve
    assert default_real_memory_mib(1872) == 1722 * 1024  # 8 %, whole GiB


def test_accounting_follows_the_weights():
    plan = plan_of(GKE_NO_ACCOUNTING)
    assert not plan.accounting
    assert {"PriorityWeightFairshare", "PriorityWeightAge", "AccountingStorageTRES"}.isdisjoint(plan.directives)
    cfg = edits(
        GKE_NO_ACCOUNTING,
        {"scheduling.slurm.accounting": DELETE, "scheduling.slurm.priorityWeights": {"fairShare": 5, "age": 0}},
    )
    assert plan_of(cfg).accounting  # asking for fair-share turns accounting on


def test_no_priority_classes_means_no_preemption():
    plan = plan_of(GKE_NO_ACCOUNTING)
    assert plan.preempt_type == SlurmPreemptType.NONE
    assert (plan.directives["PreemptType"], plan.directives["PreemptMode"]) == ("preempt/none", "OFF")
    assert [p.name for p in plan.partitions] == ["h100", "l4"]
    assert plan.partitions[0].options["Default"] == "YES"  # no `all`: the first pool's partition


def test_partition_prio_tiers_zone_tree_and_cohort_caps():
    plan = plan_of(EKS_ZONES)
    assert plan.directives["PreemptType"] == "preempt/partition_prio"
    tiers = {p.name: p.options["PriorityTier"] for p in plan.partitions}
    assert tiers == {"p5-a": "2", "p5-b": "2", "l4": "2", "train": "3", "all": "1"}
    assert plan.topology.tree.zones == {"us-east-1a": ("p5-a",), "us-east-1b": ("p5-b",)}
    assert {p.name: p.options.get("Topology") for p in plan.partitions} == {
        "p5-a": "zones",
        "p5-b": "zones",
        "l4": None,
        "train": "zones",
        "all": None,
    }
    doc = yaml.safe_load(plan.topology_yaml())
    assert doc[1]["tree"]["switches"][0] == {"switch": "root", "children": "us-east-1a,us-east-1b"}
    caps = {a.name: a.gpu_caps for a in plan.accounts}
    # in a cohort the cap is nominal + borrowingLimit; llm (p5-a) and infer (p5-b) borrow H100s without limit
    assert caps == {"llm": (), "infer": (("l4", 3),)}
    assert {a.name: a.grp_tres for a in plan.accounts} == {"llm": None, "infer": "gres/gpu:l4=3"}  # no total


def test_one_gpu_type_the_untyped_cap_equals_the_typed_one():
    """Real Slurm holds ``--gres=gpu:8`` only to ``gres/gpu`` (tests/whatif/slurm/test_whatif_real_slurm.py, caps-untyped)."""
    plan = plan_of(CAPS_STACK)
    assert [(a.name, a.gpu_total, a.grp_tres) for a in plan.accounts] == [
        ("alpha", 8, "gres/gpu=8,gres/gpu:h100=8"),
        ("beta", 8, "gres/gpu=8,gres/gpu:h100=8"),
    ]
    assert "set fairshare=1 grptres=gres/gpu=8,gres/gpu:h100=8\n" in plan.sacctmgr_script("c")
    # unlimited borrowing in a cohort: no cap of either kind, and the script clears both
    cohort = plan_of(edits(CAPS_STACK, {"scheduling.cohort": "all"}))
    assert [(a.gpu_total, a.grp_tres) for a in cohort.accounts] == [(None, None), (None, None)]
    assert "grptres=gres/gpu=-1,gres/gpu:h100=-1\n" in cohort.sacctmgr_script("c")


def test_the_script_adds_each_account_on_its_own_cluster():
    """Accounts are global in slurmdbd, associations per cluster: the check is the association on $CLUSTER, so a
    second cluster sharing slurmdbd gets its accounts too (a real two-cluster run: test_slurm_real.py)."""
    script = plan_of(CAPS_STACK).sacctmgr_script("second")
    assert (
        'here() { sacctmgr -n -P show assoc where cluster="$CLUSTER" account="$1" format=account | grep -qx "$1"; }'
    ) in script
    assert "CLUSTER=second\n" in script and "exists account" not in script
    for name in ("alpha", "beta"):
        assert f'here {name} || $S add account {name} cluster="$CLUSTER" ' in script


def test_client_config_reaches_slurmdbd_with_auth_slurm():
    conf = client_slurm_conf("h100-train")
    assert "AccountingStorageHost=slurm-accounting\nAccountingStoragePort=6819" in conf
    assert "AuthType=auth/slurm" in conf and "Pass" not in conf


@given(
    st.integers(1, 64).flatmap(
        lambda n: st.tuples(st.just(n), st.sampled_from([d for d in range(1, n + 1) if n % d == 0]))
    )
)
def test_block_sizes_double_from_the_base_up_to_the_pool(args):
    nodes, size = args
    sizes = block_sizes(size, nodes)
    assert sizes[0] == size and sizes[-1] <= nodes < sizes[-1] * 2
    assert all(b == a * 2 for a, b in zip(sizes, sizes[1:]))


def test_slurm_renderers_never_import_pulumi():
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    paths = sorted((root / "stacks" / "plan").glob("slurm*.py")) + [
        root / "render" / "slurm_values.py",
        root / "render" / "slurm_task_env.py",
    ]
    assert len(paths) == 10
    for path in paths:
        tree = ast.parse(path.read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not [m for m in names if m.split(".")[0].startswith("pulumi")], path.name


def test_slurm_on_efa_keeps_slurmds_locked_memory_limit_for_tasks():
    # a task otherwise inherits the submitter's `ulimit -l` and libfabric cannot register EFA memory
    from preview.engine import PROJECT_ROOT, read_stack_file
    from catalog import load_catalog
    from stacks.plan.facts import pool_facts
    from stacks.plan.slurm import plan_slurm
    from stacks.validate.load import decode_config, load_spec

    def directives(stack):
        spec, _ = load_spec(decode_config(read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml")))
        cat = load_catalog()
        return plan_slurm(spec.scheduling, [pool_facts(spec, p, cat) for p in spec.node_pools]).directives

    assert directives("eks-p6e-gb200")["PropagateResourceLimitsExcept"] == "MEMLOCK"
    assert "PropagateResourceLimitsExcept" not in directives("gke-h100-512")  # TCPXO: no RDMA memory registration
