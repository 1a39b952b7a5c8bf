"""A stand-in for what follows a NodeSet's ``replicas`` on Kubernetes (Slinky's NodeSet controller creating and
deleting pods, the node autoscaler adding a node for a new pod), for a real cluster (``cluster.py``) whose slurmctld
runs the rendered Resume/SuspendProgram against the stand-in API server (``tests/support/kube/fake_api.py``).

The programs set ``replicas`` through the API; this thread turns it into slurmd processes: an ordinal below
``replicas`` without a pod gets its slurmd ``boot_s`` later (the node's provisioning, compressed), an ordinal at or
above ``replicas`` loses its slurmd at once (the pod deleted), and a pod DELETE (ResumeProgram restarting a kept
node's pod) restarts that slurmd on the same machine (its boot time unchanged). Each change is recorded with its time.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from stacks.plan.slurm_scaling import NODESET_PREFIX
from tests.support.kube.fake_api import POD, FakeKubeApi
from tests.support.slurm.cluster import SlurmCluster


@dataclass
class NodeSetOperator:
    cluster: SlurmCluster
    api: FakeKubeApi
    boot_s: float
    events: list[tuple[float, str, str]] = field(default_factory=list)
    """(epoch, "up" | "down", node) in order."""

    def __post_init__(self) -> None:
        self.pools = {pool: lo for pool, lo, _ in self.cluster.plan.scaling.pools}
        self.running = {pool: set(range(lo)) for pool, lo in self.pools.items()}
        self.due: dict[tuple[str, int], float] = {}
        self.seen_calls = 0
        self.stopped = threading.Event()
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.stopped.is_set():
            try:
                self.step(time.time())
            except Exception as exc:  # noqa: BLE001 (reported by the test, the thread must not die silently)
                self.errors.append(repr(exc))
            time.sleep(0.1)

    def step(self, now: float) -> None:
        with self.api.lock:
            calls = self.api.calls[self.seen_calls :]
            self.seen_calls += len(calls)
            replicas = {pool: self.api.replicas[f"{NODESET_PREFIX}{pool}"] for pool in self.pools}
        for method, path, _ in calls:
            pod = POD.match(path)
            if method == "DELETE" and pod:  # the pod restarts on its node (no reboot): its slurmd registers again
                name = pod.group(2).removeprefix(NODESET_PREFIX)
                self.cluster.restart_node(name)
                self.events.append((now, "restart", name))
        for pool, want in replicas.items():
            running = self.running[pool]
            for i in sorted(running):
                if i >= want:
                    self.cluster.stop_node(f"{pool}-{i}")
                    running.discard(i)
                    self.events.append((now, "down", f"{pool}-{i}"))
            for i in range(want):
                if i not in running:
                    self.due.setdefault((pool, i), now + self.boot_s)
            for (p, i), at in list(self.due.items()):
                if p != pool:
                    continue
                if i >= want:
                    del self.due[(p, i)]
                elif at <= now:
                    del self.due[(p, i)]
                    self.cluster.start_node(f"{pool}-{i}")
                    running.add(i)
                    self.events.append((now, "up", f"{pool}-{i}"))

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=10)
