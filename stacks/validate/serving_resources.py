"""A service's own CPU and memory (``resources``) must fit one node of its pool: a larger request never schedules,
and the replica would wait forever while the autoscaler counts it. Reports through ``Issues``; never raises."""

from __future__ import annotations

from catalog import MachineType
from stacks.plan.serving_resources import default_resources, node_allocatable
from stacks.spec.serving import Service
from stacks.validate.issues import Issues


def check_resources(at: Issues, svc: Service, machine: MachineType) -> None:
    if svc.resources is None:
        return
    node = node_allocatable(machine)
    if node is None:
        return  # the catalog lists no vCPUs or RAM for this machine: nothing to compare against
    share = default_resources(svc, machine)
    per_gpu = f" (default: {share.cpu:g} cores, {share.memory_gib} GiB)" if share else ""
    where = (
        f"one {machine.machine_type} node has {node.cpu} cores and {node.memory_gib} GiB for pods "
        "after the system reserve"
    )
    cpu, mem = svc.resources.cpu, svc.resources.memory_gib
    if cpu is not None and cpu > node.cpu:
        at.error(
            ("resources", "cpu"),
            f"more CPU than one node offers: {where}",
            cpu,
            allowed=f"at most {node.cpu}",
            fix=f"lower resources.cpu to {node.cpu} or less, or leave it out for the GPUs' share{per_gpu}",
        )
    if mem is not None and mem > node.memory_gib:
        at.error(
            ("resources", "memoryGib"),
            f"more memory than one node offers: {where}",
            mem,
            allowed=f"at most {node.memory_gib}",
            fix=f"lower resources.memoryGib to {node.memory_gib} or less, or leave it out for the GPUs' share{per_gpu}",
        )
