"""A pods-ready timeout the stack sets below its own rack-scale cold start is refused. Kueue evicts a gang whose pods
are not all Ready by ``waitForPodsReady.timeout`` and requeues it; every gang on a rack-scale pool (GB200 NVL72)
waits for its ComputeDomain's IMEX daemons before any pod runs, so on new nodes such a gang would be evicted every
time and never start. The estimate is the preview's own (``stacks/plan/start_time.py``); without a set value
gpu-cluster raises the default to it x 1.5 instead (``pods_ready_timeout_plan``)."""

from __future__ import annotations

from catalog import Catalog
from stacks.plan.facts import pool_facts
from stacks.plan.gpu_runtime import operator_in_stack
from stacks.plan.pod_start import pod_start_plan
from stacks.plan.start_time import TIMEOUT_MARGIN, pods_ready_timeout_plan
from stacks.spec.stack import StackSpec
from stacks.validate.issues import Issues


def check_pods_ready_timeout(issues: Issues, cat: Catalog, spec: StackSpec) -> None:
    sched = spec.scheduling
    if sched is None or "timeout_seconds" not in sched.gang.model_fields_set:
        return  # unset: the plan derives it from the estimate
    operator = operator_in_stack(spec)  # once, not once per pool
    facts = [pool_facts(spec, pool, cat, i, operator) for i, pool in enumerate(spec.node_pools)]
    timeout = pods_ready_timeout_plan(spec, [pod_start_plan(spec.cloud, p) for p in spec.node_pools], facts)
    if timeout is None or timeout.estimate_s is None or timeout.seconds >= timeout.estimate_s:
        return
    issues.at("scheduling", "gang").error(
        "timeoutSeconds",
        f"Kueue's pods-ready timeout ({timeout.seconds} s) is below the cold start of pool "
        f"{timeout.pool}'s largest gang ({timeout.estimate_s:g} s, the preview's estimate: node, image pull and the "
        "ComputeDomain's IMEX daemons), so on new nodes Kueue evicts and requeues that gang before it runs, every time",
        timeout.seconds,
        allowed=f"at least {timeout.estimate_s:g} s",
        fix=f"set scheduling.gang.timeoutSeconds: {timeout.suggested_s} (the estimate x {TIMEOUT_MARGIN:g}, rounded "
        "up to a minute), or remove it and gpu-cluster sets that",
    )
