"""A small cluster of REAL Slurm 26.05 daemons: slurmctld (+ slurmdbd when the plan has accounting) and one real
``slurmd`` per node, each in its own network namespace (``tests/support/slurm/netns.py``), all in the Debian root of
``scripts/slurm-root.sh``. The configuration is what the project renders (``stacks/plan/slurm.py`` ->
``slurm_values.py`` -> what Slinky writes, ``slinky_emulation.py``); nodes join as Slinky's do, as dynamic nodes
``slurmd -Z --conf "<NodeSet extraConf> Features=<pool> [Topology=<pool>:<block>]"``.

What the harness adds, and why (none of it changes scheduling):
- ``SlurmctldAddr``: the controller's address on the namespaces' bridge (``localhost`` inside a namespace is the
  namespace itself).
- per-node ``SlurmdSpoolDir``/``SlurmdLogFile``/``SlurmdPidFile`` (``%n``), ``ProctrackType=proctrack/pgid``,
  ``TaskPlugin=task/none`` and ``cgroup.conf: CgroupPlugin=disabled`` (the root has no cgroup mount; Kubernetes gives
  Slinky's pods one), ``SlurmdParameters=config_overrides`` (a node advertises the rendered CPUs and memory of a GPU
  machine on this small machine) and ``JobAcctGatherType=jobacct_gather/none``.
- GPUs: the rendered ``gres.conf`` names ``/dev/nvidia[0-N]``; slurmd requires character devices there, so the harness
  makes device nodes with NVIDIA's major number (195) in the work directory (no driver needed: nothing opens them)
  and points ``File=`` at them. Regular files are refused (``is not a valid character or block device``).
- ``sacctmgr add user root account=<each account>``: job submitters need an association (an admin's step, not the
  rendered script's).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from components.charts import SLURM
from components.slurm.scaling import cloud_nodes_script
from stacks.plan.slurm import SlurmPlan
from render.fabric_pod import PodFabric
from render.slurm_values import client_slurm_conf, slurm_values, task_env_config_map_data
from tests.conftest import require_shared
from tests.support.helm.values import helm_merge
from tests.support.slurm.slinky_emulation import node_topology
from tests.support.slurm.netns import NodeNetwork
from tests.support.slurm.real import STOP_TIMEOUT_S, SlurmController, SlurmDbd, Workdir, _stop, _wait
from tests.support.slurm.root import Chroot
from tests.support.slurm.task_env import mount_prefix, project, task_env_volume

NVIDIA_MAJOR = 195
STARTED_LINE = "slurmctld version"
"""The start line slurmctld logs (``slurmctld version 26.05.5 started on cluster ...``), once per (re)start."""
CLOCK_LATENCY_LINE = "High latency for 1000 calls to gettimeofday()"
"""slurmctld/slurmd time 1,000 clock reads at start-up and log an error above 1 ms: a loaded or virtual host's clock
(seen at load 9 on a 2-core runner: 1,397 us), not the configuration. Every real-Slurm log check tolerates it."""
TOLERATED_LOG_LINES = (
    "Blocks do not contain any nodes",  # at start-up, before the dynamic nodes join (as in test_slurm_real.py)
    # Slinky's slurmd fetches the config from slurmctld (configless, --conf-server, with the key mounted at
    # /etc/slurm); here slurmd reads the very file slurmctld loaded, which leaves the shared root's /etc alone
    "Running with local config file despite slurmctld having been setup for configless operation",
    "DUE TO PREEMPTION ***",  # slurmstepd's notice on a preempted job (the comparison counts preemptions per job)
    # slurmctld timing its own state save on a loaded test machine (a 2-core runner with a dozen daemons): about the
    # machine's disk, not the configuration
    "Saving to StateSaveLocation took",
    CLOCK_LATENCY_LINE,
    # Slinky's merged AuthAltParameters line after our extraConf's (test_slurm_real.py TOLERATED_ERRORS says why)
    "AuthAltParameters 1 specified more than once, latest value used",
)


@dataclass(frozen=True)
class Node:
    name: str
    pool: str
    conf: str
    """slurmd ``--conf``: the NodeSet's extraConf, its Feature and (with blocks) its ``Topology=``."""


def plan_nodes(values: dict) -> list[Node]:
    """Every NodeSet pod of the rendered values, filling topology blocks in ordinal order (as the operator would
    from the Kubernetes node annotation)."""
    out = []
    for pool, ranges in node_topology(values).items():
        extra = values["nodesets"][pool]["extraConf"]
        for first, last, topo in ranges:
            for i in range(first, last + 1):
                conf = f"{extra} Features={pool}" + (f" Topology={topo}" if topo else "")
                out.append(Node(f"{pool}-{i}", pool, conf))
    return out


def spare_nodes(plan: SlurmPlan, values: dict) -> list[Node]:
    """The ordinals ``minNodes..maxNodes-1`` of each scaling pool (no pod at deploy: the NodeSet's replicas are
    ``minNodes``), with the same slurmd ``--conf`` as the pool's pods."""
    out = []
    for pool, lo, hi in plan.scaling.pools:
        extra = values["nodesets"][pool]["extraConf"]
        out += [Node(f"{pool}-{i}", pool, f"{extra} Features={pool}") for i in range(lo, hi)]
    return out


def chart_values(plan: SlurmPlan, cluster: str, fabrics: dict[str, PodFabric | None] | None = None) -> dict:
    """The values the slurm chart's templates see: its defaults under the values the program passes."""
    defaults = yaml.safe_load(require_shared("schemas", SLURM.default_values).read_text())
    return helm_merge(defaults, slurm_values(plan, cluster, fabrics=fabrics))


def _fake_gpus(gres_conf: str, workdir: Workdir) -> str:
    """Device nodes standing in for ``/dev/nvidiaN``, and the gres.conf pointing at them."""
    top = 0
    for m in re.finditer(r"/dev/nvidia(?:\[0-(\d+)\]|(\d+))", gres_conf):
        top = max(top, int(m.group(1) or m.group(2)))
    (workdir.host / "dev").mkdir(exist_ok=True)
    for i in range(top + 1):
        path = workdir.host / "dev" / f"nvidia{i}"
        if not path.exists():
            subprocess.run(["mknod", str(path), "c", str(NVIDIA_MAJOR), str(i)], check=True)
    return gres_conf.replace("/dev/nvidia", f"{workdir.inside}/dev/nvidia")


@dataclass
class SlurmCluster:
    chroot: Chroot
    plan: SlurmPlan
    cluster: str
    slurm_key: bytes
    dbd: SlurmDbd | None = None
    fabrics: dict[str, PodFabric | None] | None = None
    """Per pool, the fabric its NodeSet gets (``render/fabric_pod.py``), as the program passes it."""
    programs: dict[str, str] | None = None
    """The rendered Resume/SuspendProgram (pointed at a stand-in API server, ``tests/support/kube/fake_api.py``) for
    a plan with scaling pools; their nodes above ``minNodes`` start as the rendered Job's CLOUD records."""
    nodes: list[Node] = field(init=False)
    spare: list[Node] = field(init=False)
    """Nodes of scaling pools above ``minNodes``: no slurmd until their NodeSet's replicas reach them."""
    values: dict = field(init=False)
    net: NodeNetwork = field(init=False)
    ctl: SlurmController = field(init=False)
    slurmd: dict[str, subprocess.Popen] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.values = values = chart_values(self.plan, self.cluster, self.fabrics)
        self.nodes = plan_nodes(values)
        self.spare = spare_nodes(self.plan, values)
        self.net = NodeNetwork(len(self.nodes) + len(self.spare), home=self.chroot.netns)
        self.ctl = None  # type: ignore[assignment]
        try:
            self.ctl = SlurmController(
                self.chroot,
                values,
                self.slurm_key,
                self.dbd,
                name=f"cluster-{self.cluster}",
                extra_conf=self._harness_conf,
                programs=self.programs,
            )
            self._fix_files()
            if self.dbd is not None:
                self._apply_accounts()
            for i, node in enumerate(self.nodes):  # one at a time: registration order is Slurm's node order,
                self._start_slurmd(i, node)  # which decides placement among equal nodes
                _wait(f"slurmd {node.name} registered and idle", lambda: self._all_idle(i + 1), log=self._logs)
            if self.spare:  # the rendered Job: powered-down CLOUD records for the ordinals above minNodes
                self.ctl.run_script(
                    "create-nodes.sh", cloud_nodes_script(self.plan.scaling.cloud_nodes(self.plan.nodesets))
                )
        except BaseException:
            self.stop()
            raise

    def start_node(self, name: str) -> None:
        """A NodeSet pod for ``name`` started on a new node (its slurmd registers as a dynamic node, as Slinky's pods
        do, and reports a fresh boot)."""
        every = self.nodes + self.spare
        i = next(k for k, n in enumerate(every) if n.name == name)
        self._start_slurmd(i, every[i], fresh_boot=True)

    def restart_node(self, name: str) -> None:
        """``name``'s pod deleted and started again on the same Kubernetes node (a kept pod the ResumeProgram
        restarts): its slurmd starts again on a machine that did not reboot, so the machine's boot time is old."""
        every = self.nodes + self.spare
        i = next(k for k, n in enumerate(every) if n.name == name)
        self.stop_node(name)
        self._start_slurmd(i, every[i], fresh_boot=False)

    def stop_node(self, name: str) -> None:
        """``name``'s pod deleted (its slurmd stops)."""
        proc = self.slurmd.pop(name, None)
        if proc is not None:
            _stop(proc)

    def _harness_conf(self, inside: str) -> str:
        return (
            "\n".join(
                [
                    "### TEST HARNESS: real slurmd daemons in network namespaces (tests/support/slurm/cluster.py) ###",
                    f"SlurmctldAddr={self.net.controller}",
                    f"SlurmdSpoolDir={inside}/spool/%n",
                    f"SlurmdLogFile={inside}/slurmd-%n.log",
                    f"SlurmdPidFile={inside}/slurmd-%n.pid",
                    "ProctrackType=proctrack/pgid",
                    "TaskPlugin=task/none",
                    "JobAcctGatherType=jobacct_gather/none",
                    "SlurmdParameters=config_overrides",
                ]
            )
            + "\n"
        )

    def _fix_files(self) -> None:
        d = self.ctl.dir
        gres = d.host / "etc" / "gres.conf"
        gres.write_text(_fake_gpus(gres.read_text(), d))
        d.write("etc/cgroup.conf", "CgroupPlugin=disabled\n")
        for node in self.nodes + self.spare:
            (d.host / "spool" / node.name).mkdir(parents=True, exist_ok=True)
        d.write("out/.keep", "")
        (d.host / "out").chmod(0o777)

    def _apply_accounts(self) -> None:
        assert self.dbd is not None
        d = self.ctl.dir
        d.write(
            "client/slurm.conf", client_slurm_conf(self.cluster, "localhost", self.ctl.port, "localhost", self.dbd.port)
        )
        d.write("client/slurm.key", self.slurm_key, 0o600)
        script = self.plan.sacctmgr_script(self.cluster)
        script = script.replace(
            "echo 'gpu-cluster: Slurm QOS and accounts applied'",
            "\n".join(f'$S add user root account={a.name} cluster="$CLUSTER"' for a in self.plan.accounts),
        )
        d.write("client/apply.sh", script, 0o755)
        out = self.chroot.run(
            ["/bin/sh", f"{d.inside}/client/apply.sh"], conf=f"{d.inside}/client/slurm.conf", timeout=120
        )
        assert out.returncode == 0, f"sacctmgr script: {out.stdout}{out.stderr}"
        # slurmctld learns new associations from slurmdbd asynchronously: wait until it knows root's
        _wait("slurmctld knows root's associations (sshare)", self._assoc_ok, log=self._logs)

    def _assoc_ok(self) -> bool:
        """slurmctld learns associations from slurmdbd asynchronously; sshare asks slurmctld."""
        shown = self.ctl.run("sshare", "-n", "-P", "-a", "-o", "Account,User").stdout
        return all(f"{a.name}|root" in shown for a in self.plan.accounts)

    def _volumes(self, node: Node) -> list[str]:
        """The NodeSet's task-env ConfigMap volume (TaskProlog + fabric env), projected for this node and mounted
        at its path in the node's own mount namespace; [] when the values mount none."""
        volume = task_env_volume(self.values["nodesets"][node.pool])
        data = task_env_config_map_data(self.plan, self.fabrics or {})
        if volume is None or data is None:
            return []
        source = self.ctl.dir.host / "task-env" / node.name
        project(volume, data, source)
        prefix, _ = mount_prefix(source, self.chroot.root)
        return prefix

    def _args(self, node: Node) -> list[str]:
        """The NodeSet's rendered ``slurmd.args`` (Slinky appends them to slurmd's command line)."""
        return [str(a) for a in self.values["nodesets"][node.pool]["slurmd"].get("args") or []]

    def _start_slurmd(self, i: int, node: Node, fresh_boot: bool = False) -> None:
        """``fresh_boot``: the node reports an uptime of 1 s (a time namespace, ``unshare --boottime``), as a newly
        provisioned node does: slurmctld completes a resume only for a node booted after the resume was asked for
        (a slurmd on this long-running machine stays POWERING_UP + NOT_RESPONDING until ResumeTimeout)."""
        boot: list[str] = []
        if fresh_boot:
            uptime = float(Path("/proc/uptime").read_text().split()[0])
            boot = ["unshare", "--time", f"--boottime={-int(uptime - 1)}", "--fork", "--kill-child"]
        self.slurmd[node.name] = subprocess.Popen(
            [
                *self.net.exec_prefix(i),
                *boot,
                *self._volumes(node),
                *self.chroot.run_prefix(),
                "chroot",
                str(self.chroot.root),
                "env",
                f"SLURM_CONF={self.ctl.conf}",
                "slurmd",
                "-D",
                "-Z",
                "-N",
                node.name,
                "-f",
                self.ctl.conf,
                "--conf",
                node.conf,
                *self._args(node),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def _all_idle(self, count: int | None = None) -> bool:
        count = count or len(self.nodes) + len(self.spare)
        for name, proc in self.slurmd.items():
            if proc.poll() is not None:
                raise AssertionError(f"slurmd {name} exited with {proc.returncode}: {self._logs()[-3000:]}")
        states = dict(
            re.findall(r"NodeName=(\S+) .*?State=(\S+)", self.ctl.run("scontrol", "-o", "show", "node").stdout)
        )
        return len(states) == count and all(s.startswith("IDLE") for s in states.values())

    def reconfigure(self) -> None:
        """``scontrol reconfigure``, then ``wait_ready`` for the slurmctld it starts (26.05 restarts itself: its log
        gets a new start line, and only then may an answer come from the new process)."""
        before = self.ctl.log().count(STARTED_LINE)
        out = self.ctl.run("scontrol", "reconfigure")
        assert out.returncode == 0, f"scontrol reconfigure: {out.stdout}{out.stderr}"
        _wait(
            "slurmctld restarted by scontrol reconfigure (a new start line in its log)",
            lambda: self.ctl.log().count(STARTED_LINE) > before,
            log=self._logs,
        )
        self.wait_ready()

    def wait_ready(self) -> None:
        """slurmctld answers and every node is idle."""
        _wait(
            "slurmctld answers scontrol ping and every node is idle",
            lambda: "UP" in self.ctl.run("scontrol", "ping").stdout and self._all_idle(),
            log=self._logs,
        )

    def _logs(self) -> str:
        d = self.ctl.dir.host if self.ctl is not None else None
        if d is None:
            return ""
        return "\n".join(f"== {p.name}\n{p.read_text(errors='replace')[-1500:]}" for p in sorted(d.glob("*.log")))

    def log_problems(self) -> list[str]:
        """``error:``/``fatal:``/``warning:`` lines of slurmctld and every slurmd, less the expected ones."""
        bad = []
        for path in sorted(self.ctl.dir.host.glob("*.log")):
            for line in path.read_text(errors="replace").splitlines():
                if re.search(r"\b(error|fatal|warning):", line) and not any(t in line for t in TOLERATED_LOG_LINES):
                    bad.append(f"{path.name}: {line}")
        return bad

    @property
    def out_dir(self) -> tuple[Path, str]:
        """Where job scripts write their start/end marks: (host path, path inside the root)."""
        return self.ctl.dir.host / "out", f"{self.ctl.dir.inside}/out"

    def stop(self) -> None:
        if self.ctl is not None:
            self.ctl.run("scancel", "--full", "-u", "root")
            try:  # let the steps end while slurmd can still report them
                _wait(
                    "every job gone after scancel (squeue empty)",
                    lambda: not self.ctl.run("squeue", "-h").stdout.strip(),
                    log=self._logs,
                    timeout=STOP_TIMEOUT_S,
                )
            except AssertionError:
                pass  # stopping anyway: `scontrol shutdown` ends what is left
            self.ctl.stop()  # `scontrol shutdown` stops the slurmd daemons too
        for proc in self.slurmd.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _stop(proc)
        self.net.close()
