"""Read a workload file: YAML shape (the stack files' error quality: path, value, allowed values, fix, every problem at
once), then its names against the stack (queues, priority classes, pools), then the jobs it describes."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any, Union

import yaml

from stacks.validate.issues import NAMESPACE, Issues, SpecIssue, allowed_list, choice_fix
from stacks.validate.shape import parse_part
from whatif.cluster import ClusterModel
from whatif.model import Job, Workload
from whatif.workload.spec import JobList, Profile, Trace
from whatif.yaml_read import safe_load

__all__ = ["Workload", "WorkloadError", "load_workload", "parse_workload", "check_names"]

KINDS = {"profile": Profile, "jobs": JobList, "trace": Trace}
AnyWorkload = Union[Profile, JobList, Trace]


class WorkloadError(Exception):
    def __init__(self, path: Path, issues: list[SpecIssue]):
        self.issues = issues
        head = f"{len(issues)} error{'s' if len(issues) != 1 else ''} in the workload file {path}"
        super().__init__("\n".join([head + ":", *(str(i) for i in issues)]))


def _relabel(issues: list[SpecIssue], path: Path) -> list[SpecIssue]:
    """Stack-style paths (``gpu-cluster:queues[0]``) -> workload paths (``file.yaml: queues[0]``)."""
    prefix = f"{NAMESPACE}:"
    return [
        dataclasses.replace(i, path=f"{path.name}: {i.path[len(prefix) :] if i.path.startswith(prefix) else i.path}")
        for i in issues
    ]


def parse_workload(path: Path) -> AnyWorkload:
    issues = Issues()
    try:
        doc = safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise WorkloadError(
            path,
            [
                SpecIssue(
                    str(path),
                    f"cannot read the file: {exc.strerror}",
                    fix=("pass --workload with an existing file, e.g. workloads/gke-kueue.yaml"),
                )
            ],
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise WorkloadError(
            path,
            [
                SpecIssue(
                    path.name, f"not valid YAML{where}: {getattr(exc, 'problem', exc)}", fix="correct the YAML syntax"
                )
            ],
        ) from None
    if not isinstance(doc, dict):
        raise WorkloadError(
            path,
            [
                SpecIssue(
                    path.name,
                    "the file must be a YAML mapping",
                    type(doc).__name__,
                    fix="start with `kind: profile` (or jobs, trace)",
                )
            ],
        )
    kind = doc.get("kind")
    if kind not in KINDS:
        issues.error(
            "kind",
            "missing or unknown workload kind" if kind else "required setting is missing",
            kind,
            allowed=allowed_list(KINDS),
            fix=choice_fix("kind", kind, KINDS),
        )
        raise WorkloadError(path, _relabel(issues.found, path))
    parsed = parse_part(issues, KINDS[kind], doc)
    if parsed is None:
        raise WorkloadError(path, _relabel(issues.found, path))
    return parsed


def check_names(w: AnyWorkload, cluster: ClusterModel, issues: Issues) -> None:
    """Every queue, priority class and pool the workload names exists in the stack."""
    queues, classes = list(cluster.queues), list(cluster.class_values)

    def queue(where: Issues, key: Any, name: str | None) -> None:
        if name is not None and name not in cluster.queues:
            where.error(
                key,
                f"no queue {name!r} in stack {cluster.stack}",
                name,
                allowed=allowed_list(queues),
                fix=choice_fix("it", name, queues),
            )

    def klass(where: Issues, key: Any, name: str | None) -> None:
        if name is not None and name not in cluster.class_values:
            where.error(
                key,
                f"no priority class {name!r} in stack {cluster.stack}",
                name,
                allowed=allowed_list(classes) or "none (the stack declares no priorityClasses)",
                fix=choice_fix("it", name, classes) if classes else "remove it",
            )

    def pool(where: Issues, key: Any, name: str | None, q: str | None) -> None:
        if name is None:
            return
        by_queue = q is not None and q in cluster.queues and cluster.slurm is None
        allowed = list(cluster.queues[q].quotas) if by_queue and q is not None else list(cluster.pools)
        if name not in allowed:
            where.error(
                key,
                f"pool {name!r} is not one {f'queue {q} has quota in' if by_queue else 'of the stack'}",
                name,
                allowed=allowed_list(allowed),
                fix=choice_fix("it", name, allowed),
            )

    if isinstance(w, Profile):
        for i, qp in enumerate(w.queues):
            at = issues.at("queues", i)
            queue(at, "queue", qp.queue)
            for k, p in enumerate(qp.priorities):
                klass(at.at("priorities", k), "name", p.name)
            pool(at, "pool", qp.pool, qp.queue)
    elif isinstance(w, JobList):
        for i, j in enumerate(w.jobs):
            at = issues.at("jobs", i)
            queue(at, "queue", j.queue)
            klass(at, "priority", j.priority)
            pool(at, "pool", j.pool, j.queue)
    else:
        m = w.mapping
        for value, q in m.queues.items():
            queue(issues.at("mapping", "queues"), value, q)
        queue(issues.at("mapping"), "default", m.default)
        for q in m.weights:
            queue(issues.at("mapping", "weights"), q, q)
        for value, c in m.priorities.items():
            klass(issues.at("mapping", "priorities"), value, c)
        pool(issues, "pool", w.pool, None)
        if m.by == "hash" and not m.weights:
            issues.error(("mapping", "weights"), "`by: hash` needs queue weights", fix="add weights: {QUEUE: 1, …}")
        if m.by != "hash" and not m.queues and m.default is None:
            issues.error(
                ("mapping", "queues"),
                f"no queue for any `{m.by}` value",
                fix="map trace values to queues, or set mapping.default",
            )


def _outages(parsed: Profile | JobList) -> list[tuple[str, float, float]]:
    return [(o.worker, o.at_s, o.for_s) for o in parsed.outages]


def load_workload(path: Path, cluster: ClusterModel, seed: int) -> Workload:
    """Parse, check against the stack and expand to jobs; raise WorkloadError with every problem at once."""
    parsed = parse_workload(path)
    issues = Issues()
    check_names(parsed, cluster, issues)
    if issues.found:
        raise WorkloadError(path, _relabel(issues.found, path))
    if isinstance(parsed, Profile):
        from whatif.workload.profile import generate

        return Workload(path.stem, "profile", generate(parsed, seed), parsed.description, outages=_outages(parsed))
    if isinstance(parsed, JobList):
        jobs = [
            Job(
                id=j.id,
                submit_s=j.submit_s,
                queue=j.queue,
                gpus_per_node=j.gpus_per_node,
                nodes=j.nodes,
                run_s=j.run_s,
                time_limit_s=j.time_limit_s,
                priority=j.priority,
                pool=j.pool,
                gpu_share=j.gpu_share,
                checkpoint_s=j.checkpoint_s,
                user=j.user,
            )
            for j in parsed.jobs
        ]
        counts = Counter(j.id for j in jobs)
        dup = sorted(i for i, n in counts.items() if n > 1)
        if dup:
            raise WorkloadError(
                path, [SpecIssue(f"{path.name}: jobs", "job ids must be unique", dup, fix="rename the repeated ids")]
            )
        return Workload(path.stem, "jobs", jobs, parsed.description, outages=_outages(parsed))
    from whatif.traces.replay import load_trace  # lazy: the trace readers are for trace workloads only

    try:
        return load_trace(parsed, path, cluster)
    except (OSError, ValueError, KeyError) as exc:
        raise WorkloadError(
            path,
            [
                SpecIssue(
                    f"{path.name}: path",
                    f"cannot read the trace: {exc}",
                    parsed.path,
                    fix="point path at a trace file in the format named by `format`",
                )
            ],
        ) from None
