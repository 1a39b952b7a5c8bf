"""Every rendered Slurm config, loaded by a real Slurm 26.05 controller (the release the pinned Slinky images run;
a newer one only when the Debian mirror has no 26.05 any more, reported as such).

For each stack with ``workload: slurm`` (every example stack that has it, plus synthetic ones), the Helm values the
program really registers are turned into what Slinky would write (``tests/support/slurm/slinky_emulation.py``); then a real
slurmctld must start with no ``error:``/``fatal:`` line and no warning outside ``TOLERATED_WARNINGS``, show exactly
the planned partitions, nodes, GRES and blocks, accept each pool's largest gang and refuse one node or one GPU
more. With accounting, a real slurmdbd on a real MariaDB gets the rendered ``sacctmgr`` script (twice: idempotent)
through the rendered client slurm.conf, and ``sshare`` must show the declared shares; the script run for a second
cluster on the same slurmdbd must give that cluster its own associations and limits. The root's own build script
(suite choice, versioned path, privileges) is tested in ``test_slurm_root.py``.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import time

import pytest
import yaml

from components.charts import SLURM
from components.slurm.scaling import cloud_nodes_script
from preview.engine import run_program
from stacks.plan.slurm import ALL_NODESETS, SlurmPlan, plan_slurm
from render.slurm_jobs import KEY_FILE_MODE
from render.slurm_values import client_slurm_conf
from stacks.plan.facts import pool_facts
from stacks.validate.load import decode_config, load_spec
from tests.conftest import require_shared
from tests.support.helm.values import helm_merge
from tests.support.preview.recorded import one
from tests.support.slurm import ports as slurm_ports
from tests.support.slurm.cluster import CLOCK_LATENCY_LINE
from tests.support.slurm.configs import slurm_configs
from tests.support.slurm.netns import in_namespace
from tests.support.slurm.real import SlurmController, SlurmDbd, Workdir
from tests.support.slurm.root import Chroot, ensure_root, release_check, user_ids, versions

TOLERATED_WARNINGS = (
    # Slinky's nodes are dynamic: at start-up no node exists yet, so no block has one (they join from the
    # Kubernetes node annotation, as the test's `scontrol create ... Topology=` does).
    re.compile(r"warning: Blocks do not contain any nodes"),
    re.compile(r"warning: Switches do not contain any nodes"),
)
TOLERATED_ERRORS = (
    # Slinky's operator writes its own AuthAltParameters (jwt_key=...) and, because our extraConf sets one too
    # (max_token_lifespan), a merged line after the extra config (BuildMergedConfig): slurmctld logs this and uses
    # the last, merged value (test_slurm_access_real.py checks it holds both options).
    re.compile(r"error: AuthAltParameters 1 specified more than once, latest value used"),
    re.compile(re.escape(CLOCK_LATENCY_LINE)),  # the host's load, not the config (tests/support/slurm/cluster.py)
)
CONFIGS = slurm_configs()


@pytest.fixture(scope="module")
def chroot():
    root = ensure_root()
    c = Chroot(root)
    print(f"\nreal Slurm: {'; '.join(versions(root))}")
    yield c
    c.close()


@pytest.fixture(scope="module")
def slurm_key() -> bytes:
    return secrets.token_bytes(1024)


@pytest.fixture(scope="module")
def dbd(chroot, slurm_key):
    d = SlurmDbd(chroot, slurm_key)
    yield d
    d.stop()


class NewerSlurmThanPinned(UserWarning):
    """The test root's Slurm is newer than the pinned Slinky images' release (the mirror no longer has it)."""


def test_the_root_runs_the_pinned_slurm_release_or_a_newer_one(chroot):
    out = chroot.run(["slurmctld", "-V"], check=True)
    status, sentence = release_check(out.stdout.strip())
    print(f"slurmctld -V: {out.stdout.strip()} ({sentence})")
    assert status != "older", sentence
    if status == "newer":  # shown in pytest's warnings summary, and in the final "real Slurm:" line (conftest)
        import warnings

        warnings.warn(sentence, NewerSlurmThanPinned)


def _plan_and_values(config: dict) -> tuple[SlurmPlan, dict]:
    spec, _ = load_spec(decode_config(config))
    from catalog import load_catalog

    cat = load_catalog()
    plan = plan_slurm(spec.scheduling, [pool_facts(spec, p, cat) for p in spec.node_pools])
    release = one(run_program(config), "kubernetes:helm.sh/v3:Release", "slurm-slurm")
    defaults = yaml.safe_load(require_shared("schemas", SLURM.default_values).read_text())
    return plan, helm_merge(defaults, release.redacted_inputs["values"])  # what the chart's templates see


def _bad_log_lines(log: str) -> list[str]:
    bad = []
    for line in log.splitlines():
        if re.search(r"\b(error|fatal):", line):
            if not any(t.search(line) for t in TOLERATED_ERRORS):
                bad.append(line)
        elif "warning:" in line and not any(t.search(line) for t in TOLERATED_WARNINGS):
            bad.append(line)
    return bad


def _records(text: str, key: str) -> dict[str, dict[str, str]]:
    """``scontrol show ... -o`` lines -> {name: {field: value}}."""
    out = {}
    for line in text.splitlines():
        fields = dict(re.findall(r"(\w+)=(\S*)", line))
        if key in fields:
            out[fields[key]] = fields
    return out


@pytest.mark.parametrize("name", list(CONFIGS))
def test_real_slurmctld_accepts_and_schedules_the_rendered_config(name, chroot, slurm_key, request):
    plan, values = _plan_and_values(CONFIGS[name])
    dbd = request.getfixturevalue("dbd") if plan.accounting else None
    ctl = SlurmController(chroot, values, slurm_key, dbd)
    try:
        assert _bad_log_lines(ctl.log()) == [], "slurmctld logged errors or unexpected warnings at start-up"
        ctl.create_nodes()
        if plan.scaling.pools:  # the rendered Job's script: powered-down records for ordinals minNodes..maxNodes-1
            ctl.run_script("create-nodes.sh", cloud_nodes_script(plan.scaling.cloud_nodes(plan.nodesets)))

        # partitions: exactly the planned ones, with the planned node counts and topology
        parts = _records(ctl.run("scontrol", "-o", "show", "partition").stdout, "PartitionName")
        assert sorted(parts) == sorted(p.name for p in plan.partitions)
        replicas = {n.pool: n.replicas for n in plan.nodesets}
        for p in plan.partitions:
            pools = list(replicas) if p.nodesets == (ALL_NODESETS,) else list(p.nodesets)
            assert int(parts[p.name]["TotalNodes"]) == sum(replicas[x] for x in pools), p.name
            assert parts[p.name].get("Topology") == p.options.get("Topology"), p.name
            assert parts[p.name]["Default"] == p.options["Default"], p.name

        # nodes: every NodeSet pod, with the catalog's GRES and the planned CPUs/memory
        nodes = _records(ctl.run("scontrol", "-o", "show", "node").stdout, "NodeName")
        assert len(nodes) == sum(replicas.values())
        for n in plan.nodesets:
            mine = [f for f in nodes.values() if f["AvailableFeatures"] == n.pool]
            assert len(mine) == n.replicas, n.pool
            assert {f["Gres"] for f in mine} == {n.gres}
            assert {int(f["CPUTot"]) for f in mine} == {n.cpus}
            assert {int(f["RealMemory"]) for f in mine} == {n.real_memory_mib}

        # blocks: the declared blocks, each with block-size nodes once the nodes have joined
        for b in plan.topology.blocks:
            shown = _records(ctl.run("scontrol", "show", "topology", b.name).stdout, "BlockName")
            assert sorted(shown) == sorted(b.blocks), b.name
            assert {int(f["BlockSize"]) for f in shown.values()} == {b.block_size}
        if plan.topology.tree is not None:
            shown = ctl.run("scontrol", "show", "topology", plan.topology.tree.name).stdout
            for leaves in plan.topology.tree.zones.values():
                for leaf in leaves:
                    assert re.search(rf"SwitchName={re.escape(leaf)} .*Nodes={re.escape(leaf)}-", shown), shown

        # scheduling: each pool's largest gang fits; one node or one GPU more does not
        for n in plan.nodesets:
            gang = ["sbatch", "--test-only", "-p", n.pool, "--wrap", "true"]
            ok = ctl.run(*gang, "-N", str(n.replicas), f"--gres=gpu:{n.gpu_type}:{n.gpus}")
            assert ok.returncode == 0 and f"in partition {n.pool}" in ok.stderr, ok.stderr
            assert ctl.run(*gang, "-N", str(n.replicas + 1), f"--gres=gpu:{n.gpus}").returncode != 0
            too_many = ctl.run(*gang, "-N", str(n.replicas), f"--gres=gpu:{n.gpus + 1}")
            assert too_many.returncode != 0 and "Requested node configuration is not available" in too_many.stderr

        if plan.accounting:
            _apply_and_check_accounts(ctl, chroot, plan, values["clusterName"], dbd, slurm_key)
        assert _bad_log_lines(ctl.log()) == [], "slurmctld logged errors or unexpected warnings"
    finally:
        ctl.stop()


def _minutes(shown: str) -> int | None:
    """sacctmgr's ``[days-]hours:minutes:seconds`` -> minutes; empty: no limit."""
    if not shown:
        return None
    days, _, hms = shown.rpartition("-")
    h, m, sec = (int(x) for x in hms.split(":"))
    return (int(days or 0) * 24 + h) * 60 + m + sec // 60


def _apply_and_check_accounts(
    ctl: SlurmController, chroot: Chroot, plan: SlurmPlan, cluster: str, dbd: SlurmDbd, slurm_key: bytes
) -> None:
    """The script, twice, for this cluster; then for a second cluster on the same slurmdbd (accounts and QOS exist
    already, associations not): each cluster must get its own associations with the declared limits."""
    client = Workdir(chroot, f"client-{cluster}")
    try:
        client.write("etc/slurm.conf", client_slurm_conf(cluster, "localhost", ctl.port, "localhost", dbd.port))
        # as the Job mounts it (render/slurm_jobs.py): owner root, group slurm (fsGroup), 0440; the script runs as
        # the slurm user, not root
        client.write("etc/slurm.key", slurm_key, KEY_FILE_MODE)
        os.chown(client.host / "etc" / "slurm.key", 0, user_ids(chroot.root, "slurm")[1])
        conf = f"{client.inside}/etc/slurm.conf"
        for target in (cluster, cluster, f"{cluster}-second"):  # run 2 must succeed and change nothing
            client.write("apply-accounts.sh", plan.sacctmgr_script(target), 0o755)
            out = chroot.run(
                ["runuser", "-u", "slurm", "--", "/bin/sh", f"{client.inside}/apply-accounts.sh"],
                conf=conf,
                timeout=120,
            )
            assert out.returncode == 0, f"{target}: {out.stdout}{out.stderr}"
        shown_qos = {
            line.split("|")[0]: line.split("|")[1:]
            for line in chroot.run(
                ["sacctmgr", "-n", "-P", "show", "qos", "format=name,priority,preempt,maxwall,maxtrespu,grptres,flags"],
                conf=conf,
            ).stdout.splitlines()
        }
        for q in plan.qos:
            priority, preempt, maxwall, per_user, grp, flags = shown_qos[q.name]
            assert priority == str(q.priority)
            assert sorted(filter(None, preempt.split(","))) == sorted(q.preempts)
            # slurmdbd keeps the declared limits (MaxWall shown as [days-]hh:mm:ss), and DenyOnLimit with them
            assert _minutes(maxwall) == q.max_wall_minutes, (q.name, maxwall)
            assert per_user == (f"gres/gpu={q.max_gpus_per_user}" if q.max_gpus_per_user else ""), (q.name, per_user)
            assert grp == (f"gres/gpu={q.grp_gpus}" if q.grp_gpus else ""), (q.name, grp)
            assert ("DenyOnLimit" in flags) == q.limited, (q.name, flags)
        share = {
            line.split("|")[0].strip(): line.split("|")[1]
            for line in chroot.run(
                ["sshare", "-n", "-P", "-a", "-o", "Account,RawShares,User"], conf=ctl.conf
            ).stdout.splitlines()
            if line.split("|")[2] == ""
        }
        for a in plan.accounts:
            assert share.get(a.name) == str(a.fairshare), share
        for target in (cluster, f"{cluster}-second"):
            assoc = {
                f[0]: f[2:]
                for f in (
                    line.split("|")
                    for line in chroot.run(
                        [
                            "sacctmgr",
                            "-n",
                            "-P",
                            "show",
                            "assoc",
                            f"cluster={target}",
                            "format=account,user,grptres,qos,defaultqos",
                        ],
                        conf=conf,
                    ).stdout.splitlines()
                )
                if f[1] == ""
            }  # account-level associations (no user)
            for a in plan.accounts:
                assert a.name in assoc, f"{target}: no association for account {a.name}: {assoc}"
                grp, qos_list, default = assoc[a.name]
                assert sorted(filter(None, grp.split(","))) == sorted(f"{k}={v}" for k, v in a.tres_caps.items())
                assert sorted(filter(None, qos_list.split(","))) == sorted(a.qos)
                assert default == (a.default_qos or "")
        _check_qos_max_wall_is_enforced(ctl, chroot, plan, cluster, conf)
        since_start = dbd.log().rsplit("started", 1)[-1]  # a retried first start may have logged error 5027
        assert [ln for ln in since_start.splitlines() if re.search(r"\b(error|fatal):", ln)] == [], since_start
    finally:
        client.remove()


def _check_qos_max_wall_is_enforced(ctl: SlurmController, chroot: Chroot, plan: SlurmPlan, cluster: str, conf: str):
    """With the rendered DenyOnLimit, slurmctld refuses a job over its QOS's MaxWall at submission and accepts one at
    it (what the what-if's refusal models)."""
    limited = [q for q in plan.qos if q.max_wall_minutes is not None]
    if not limited or not plan.accounts:
        return
    q, acct, part = limited[0], plan.accounts[0].name, plan.nodesets[0].pool
    added = chroot.run(["sacctmgr", "-i", "add", "user", "root", f"account={acct}", f"cluster={cluster}"], conf=conf)
    assert added.returncode == 0, added.stdout + added.stderr
    job = ["sbatch", "--hold", "-A", acct, f"--qos={q.name}", "-p", part, "--wrap", "true"]
    for _ in range(20):  # slurmdbd pushes the new association to slurmctld
        at = ctl.run(*job, f"--time={q.max_wall_minutes}")
        if at.returncode == 0:
            break
        time.sleep(0.5)
    assert at.returncode == 0, at.stderr
    over = ctl.run(*job, f"--time={q.max_wall_minutes + 1}")
    assert over.returncode != 0 and "QOS policy" in over.stderr, over.stderr
    ctl.run("scancel", "-u", "root")


def test_a_daemon_whose_port_was_taken_starts_again_on_fresh_ports(chroot, slurm_key, monkeypatch):
    """Something binds the port between free_port() and the daemon's bind: each daemon is started again on fresh
    ports instead of failing the test. Only the session's own processes share its network namespace, so the holder
    binds there."""

    def listening() -> socket.socket:
        sock = socket.socket()
        sock.bind(("0.0.0.0", 0))
        sock.listen()
        return sock

    holder = in_namespace(chroot.netns, listening)
    taken = holder.getsockname()[1]
    handed: list[int] = []
    script = iter([taken, None, taken])  # mariadbd, (retry), slurmdbd; then slurmctld below

    def racing_free_port() -> int:
        port = next(script, None) or real_free_port()
        handed.append(port)
        return port

    real_free_port = slurm_ports.free_port
    monkeypatch.setattr(slurm_ports, "free_port", racing_free_port)
    try:
        d = SlurmDbd(chroot, slurm_key, name="dbd-port-race")
        try:
            assert d.starts["mariadbd"] == 2 and d.db_port != taken
            assert d.starts["slurmdbd"] >= 2 and d.port != taken
        finally:
            d.stop()
        script = iter([taken])
        _, values = _plan_and_values(CONFIGS["gke-no-accounting"])
        ctl = SlurmController(chroot, values, slurm_key, name="ctld-port-race")
        try:
            assert ctl.starts == 2 and ctl.port != taken
            assert "UP" in ctl.run("scontrol", "ping").stdout
        finally:
            ctl.stop()
    finally:
        holder.close()
    assert handed.count(taken) == 3
