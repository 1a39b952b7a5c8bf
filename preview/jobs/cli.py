"""``python -m preview job-objects --stack NAME --job JOB [--pool POOL] [--queue QUEUE] [--nodes N]``: print, as YAML,
the ComputeDomain, TrainingRuntime and TrainJob that give one job on a GB200 NVL72 pool its own NVLink IMEX domain
(``render/job_domain.py``), from the stack as it is deployed. Offline, no credentials. Exit 0: printed; 2: the stack
or an argument is invalid (every problem at once, each with the fix; nothing printed on stdout); 4: a bug."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, Sequence

import yaml

from catalog.image_digests import load_image_digests

from stacks.plan.facts import PoolFacts
from stacks.plan.kueue_topology import Placement
from stacks.plan.tas_fit import ask_of, placement_problem, pool_nodes
from preview.engine import PROJECT_ROOT, read_stack_file, stack_file
from preview.report import EXIT_INVALID
from render.compute_domain import compute_domain_name, uses_compute_domains
from render.job_domain import JOB_NAME_MAX, JOB_NAME_PATTERN, job_domain_objects
from render.kueue import namespace_of
from render.trainer import runtime_name, spanning_runtime_name, training_runtimes
from stacks.spec.scheduling import Workload
from stacks.spec.stack import StackSpec
from stacks.validate.environment import stack_name_problem
from stacks.validate.issues import SpecError, SpecIssue
from stacks.validate.load import decode_config
from stacks.validate.planned import load_planned
from stacks.validate.stack_file import StackFileError

PROG = "python -m preview job-objects"
COMMAND = "job-objects"


def parse(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__)
    p.add_argument("--stack", required=True, help="stack name: reads Pulumi.<stack>.yaml")
    p.add_argument("--stack-file", type=Path, help="read the stack config from this file instead")
    p.add_argument("--job", required=True, help="the TrainJob's name (RFC 1035 label, at most 63 characters)")
    p.add_argument("--pool", help="the GB200 pool (default: the stack's only pool with ComputeDomains)")
    p.add_argument(
        "--queue", help="the queue (LocalQueue and namespace; default: the only queue with quota on the pool)"
    )
    p.add_argument(
        "--nodes", type=int, help="trainer.numNodes (default: one NVLink domain, at most the pool's maxNodes)"
    )
    p.add_argument("--debug", action="store_true", help="on an internal error (exit 4), print the traceback")
    return p.parse_args(list(argv))


def run(argv: Sequence[str]) -> int:
    args = parse(argv)
    problem = stack_name_problem("--stack", args.stack) if args.stack_file is None else None
    if problem is not None:
        print(problem, file=sys.stderr)
        return EXIT_INVALID
    path = args.stack_file or stack_file(args.stack, PROJECT_ROOT)
    if args.stack_file is None and not path.exists():
        stacks = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in PROJECT_ROOT.glob("Pulumi.*.yaml"))
        print(
            f"error: no stack file {path.name} in {PROJECT_ROOT}\n  allowed:  {', '.join(stacks)}\n"
            f"  fix:      pass --stack with one of the allowed names, or create {path.name}",
            file=sys.stderr,
        )
        return EXIT_INVALID
    try:  # load_planned loads the catalog (once per process) and keeps the plan
        planned = load_planned(decode_config(read_stack_file(path)), stack_name=args.stack)
    except StackFileError as exc:
        return _refuse([exc.issue])
    except SpecError as exc:
        return _refuse(exc.errors)
    plan = planned.plan  # the runtime as deployed: the plan's facts and Kueue placements, as the program uses them
    objects, issues = job_objects_for(
        planned.spec,
        list(plan.facts),
        args.job,
        args.pool,
        args.queue,
        args.nodes,
        plan.kueue.placements if plan.kueue is not None else {},
    )
    if issues:
        return _refuse(issues)
    _warn_next_to_the_shared_domain(args.job, objects)
    print(
        f"# {args.job}: its own NVLink IMEX domain on pool {objects[1]['metadata']['labels'].get('gpu-cluster/pool', '')}"
        f" of stack {args.stack} ({PROG}).\n# Add image/command/args under the TrainJob's spec.trainer; "
        "apply the three together and delete them together when the job is done."
    )
    for image in _pinned_at_deploy(objects):  # the deployed runtime runs it by digest: so must the job's copy
        print(
            f"# {image} runs by the digest its registry gave at deploy: before applying, copy that digest from the "
            f"deployed ClusterTrainingRuntime (kubectl get clustertrainingruntimes -o yaml | grep '{image}@')"
        )
    print(yaml.safe_dump_all(objects, sort_keys=False, explicit_start=True), end="")
    return 0


def _warn_next_to_the_shared_domain(job: str, objects: list[dict[str, Any]]) -> None:
    """The stack keeps the team's shared domain ``<pool>-imex`` in the job's namespace on the same pool (compose
    makes one per namespace with quota there), so this job's domain can share an NVLink clique with it."""
    domain = next(o for o in objects if o["kind"] == "ComputeDomain")
    pool = objects[1]["metadata"]["labels"].get("gpu-cluster/pool", "")
    namespace = domain["metadata"].get("namespace", "")
    print(
        f"warning: --job {job}: its ComputeDomain {domain['metadata']['name']} runs on pool {pool} next to the "
        f"team's shared ComputeDomain {compute_domain_name(pool)} in namespace {namespace}: IMEX daemons of two "
        "domains can then share one NVLink clique, which upstream advises against (dra-driver-nvidia-gpu#892: "
        "intermittent CUDA_ERROR_NOT_SUPPORTED)\n"
        "  fix:      keep the team's other jobs off this job's racks while it runs (or give every job of the team "
        "its own domain)",
        file=sys.stderr,
    )


def _pinned_at_deploy(objects: list[dict[str, Any]]) -> list[str]:
    """The images of the printed objects that the stack pins by a digest resolved at deploy (no registry offline)."""
    rows = load_image_digests()
    text = yaml.safe_dump_all(objects)
    return sorted(i for i, row in rows.items() if row.at_deploy and re.search(rf"image: {re.escape(i)}$", text, re.M))


def _refuse(issues: list[SpecIssue]) -> int:
    print("\n".join(str(i) for i in issues), file=sys.stderr)
    return EXIT_INVALID


def job_objects_for(
    spec: StackSpec,
    facts: list[PoolFacts],
    job: str,
    pool_name: str | None,
    queue_name: str | None,
    nodes: int | None,
    placements: dict[str, Placement],
) -> tuple[list[dict[str, Any]], list[SpecIssue]]:
    """The job's objects, or every problem with the arguments against this stack (``facts`` and ``placements``: the
    StackPlan's)."""
    issues: list[SpecIssue] = []
    if not re.fullmatch(JOB_NAME_PATTERN, job) or len(job) > JOB_NAME_MAX:
        issues.append(
            SpecIssue(
                "--job",
                "is not a TrainJob name",
                job,
                f"an RFC 1035 label of at most {JOB_NAME_MAX} characters: lower-case letters, digits "
                "and '-', starting with a letter (the TrainJob CRD's rules)",
                "e.g. --job llama-70b-sft",
            )
        )
    sched = spec.scheduling
    if sched is None or sched.workload != Workload.KUBEFLOW:
        shared = (
            f"Slurm jobs run in the NodeSet's slurmd pods, which share the pool's ComputeDomain "
            f"{compute_domain_name('<pool>')} in the Slurm namespace"
            if sched is not None
            else "the stack has no scheduling section, so no Kubeflow Trainer"
        )
        issues.append(
            SpecIssue(
                "gpu-cluster:scheduling.workload",
                f"a job's own ComputeDomain is for Kubeflow TrainJobs: {shared}",
                sched.workload.value if sched else None,
                "kubeflow",
                "use a stack with scheduling.workload: kubeflow",
            )
        )
        return [], issues
    racks = [f for f in facts if uses_compute_domains(f)]
    rack_names = ", ".join(f.name for f in racks) or "none in this stack"
    pool = _pick(facts, racks, pool_name, issues)
    if pool is None:
        return [], issues
    queues = [q for q in sched.queues if any(quota.pool == pool.name for quota in q.quotas)]
    queue = None
    if not queues:
        issues.append(
            SpecIssue(
                "--pool",
                f"no queue has quota on pool {pool.name}, so Kueue admits no job there",
                pool.name,
                rack_names,
                f"add a quota on {pool.name} to a queue in scheduling.queues",
            )
        )
    elif queue_name is None and len(queues) > 1:
        issues.append(
            SpecIssue(
                "--queue",
                f"several queues have quota on pool {pool.name}: name one",
                None,
                ", ".join(q.name for q in queues),
                f"--queue {queues[0].name}",
            )
        )
    else:
        queue = next((q for q in queues if q.name == queue_name), None) if queue_name else queues[0]
        if queue is None:
            issues.append(
                SpecIssue(
                    "--queue",
                    f"is not a queue with quota on pool {pool.name}",
                    queue_name,
                    ", ".join(q.name for q in queues),
                    f"--queue {queues[0].name}",
                )
            )
    assert pool.nvlink is not None
    if job in {f.name for f in racks}:  # <job>-imex would be the pool's shared domain of the namespace
        issues.append(
            SpecIssue(
                "--job",
                f"names a rack pool: its ComputeDomain {compute_domain_name(job)} is the "
                "domain the pool's jobs share in the namespace",
                job,
                "any other name",
                f"--job {job}-run",
            )
        )
    per_rack = pool.nvlink.domain_nodes
    wanted = min(per_rack, pool.max_nodes) if nodes is None else nodes
    runtimes = {r["metadata"]["name"]: r for r in training_runtimes(facts, placements)}
    runtime = runtimes[runtime_name(pool.name)]
    spanning = runtimes.get(spanning_runtime_name(pool.name))
    if spanning is not None and wanted > per_rack:  # a gang of several racks: the block-level runtime
        runtime = spanning
    required = _pod_annotations(runtime).get("kueue.x-k8s.io/podset-required-topology")
    if not 1 <= wanted <= pool.max_nodes:
        issues.append(
            SpecIssue(
                "--nodes",
                f"pool {pool.name} has {pool.max_nodes} nodes at most",
                wanted,
                f"1..{pool.max_nodes}",
                f"--nodes {min(per_rack, pool.max_nodes)} (one NVLink domain)",
            )
        )
    elif required == pool.nvlink.domain_label and wanted > per_rack:
        issues.append(
            SpecIssue(
                "--nodes",
                f"the torch-{pool.name} runtime requires each gang inside one NVLink domain "
                f"({pool.nvlink.domain_label}), so Kueue would never admit a larger one",
                wanted,
                f"1..{per_rack}",
                f"--nodes {per_rack}, or a scheduling.topology level above the domain (block)",
            )
        )
    elif runtime is spanning and wanted % per_rack:
        issues.append(
            SpecIssue(
                "--nodes",
                f"a gang larger than one rack on pool {pool.name} runs in whole racks "
                f"(the {runtime['metadata']['name']} runtime places it in slices of {per_rack} "
                f"nodes, one NVLink domain each)",
                wanted,
                f"1..{per_rack}, or a multiple of {per_rack} up to {pool.max_nodes}",
                f"--nodes {wanted - wanted % per_rack or per_rack} or --nodes "
                f"{min(wanted + per_rack - wanted % per_rack, pool.max_nodes)}",
            )
        )
    elif required is not None and pool.nvlink.racks > 1 and wanted > per_rack:
        levels = placements[pool.name].levels
        problem = placement_problem(levels, pool_nodes(pool, levels), 1, wanted, ask_of(_pod_annotations(runtime)))
        if problem is not None:  # e.g. racks from different reservation blocks: Kueue would hold it for ever
            issues.append(
                SpecIssue(
                    "--nodes",
                    f"Kueue could never place this gang on pool {pool.name}: {problem}",
                    wanted,
                    f"1..{per_rack}",
                    "set the pool's capacity.reservationBlock so every "
                    f"rack comes from one block, or --nodes {per_rack}",
                )
            )
    if issues or queue is None:
        return [], issues
    return job_domain_objects(pool, runtime, job, namespace_of(queue), queue.name, wanted), []


def _pick(
    facts: list[PoolFacts], racks: list[PoolFacts], name: str | None, issues: list[SpecIssue]
) -> PoolFacts | None:
    rack_names = ", ".join(f.name for f in racks) or "none in this stack"
    if name is None:
        if len(racks) == 1:
            return racks[0]
        issues.append(
            SpecIssue(
                "--pool",
                "name the GB200 pool"
                if racks
                else "the stack has no pool whose jobs use ComputeDomains (a multiNode rack-scale "
                "NVLink pool: a4x-highgpu-4g, p6e-gb200.36xlarge)",
                None,
                rack_names,
                f"--pool {racks[0].name}" if racks else "add such a pool",
            )
        )
        return None
    pool = next((f for f in facts if f.name == name), None)
    if pool is None or not uses_compute_domains(pool):
        problem = (
            "is not a pool of the stack"
            if pool is None
            else "does not use ComputeDomains (only multiNode pools of rack-scale NVLink machines do)"
        )
        issues.append(
            SpecIssue(
                "--pool",
                problem,
                name,
                rack_names,
                f"--pool {racks[0].name}" if racks else "pick a stack with a GB200 pool",
            )
        )
        return None
    return pool


def _pod_annotations(runtime: dict[str, Any]) -> dict[str, str]:
    (rjob,) = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    meta = rjob["template"]["spec"]["template"].get("metadata", {})
    return dict(meta.get("annotations", {}))
