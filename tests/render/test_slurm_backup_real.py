"""Accounting data survives: the rendered backup's dump (``render/slurm_backup.py``, the CronJob's exact script
and ``mariadb-dump`` flags) of a real slurmdbd 26.05 database on MariaDB 11.8, restored with the documented
restore script into a fresh MariaDB, must give a new slurmdbd the same clusters, accounts, associations (shares,
GPU caps, QOS) and QOS. The dump runs as the database's ``slurm`` user over TCP with the password in ``MYSQL_PWD``,
as in the CronJob. Not run here: the upload (GCS/S3) and the cloud identities; they are checked as objects."""

from __future__ import annotations

import re
import secrets

import pytest

from render.slurm_backup import dump_script, restore_script
from render.slurm_values import DATABASE, DATABASE_USER, client_slurm_conf
from tests.render.test_slurm_real import CONFIGS, _plan_and_values, chroot  # noqa: F401
from tests.support.slurm.real import SlurmController, SlurmDbd, Workdir


@pytest.fixture(scope="module")
def key() -> bytes:
    return secrets.token_bytes(1024)


class RestoredDbd(SlurmDbd):
    """A fresh MariaDB that gets ``dump`` restored (as root, the restore script) before slurmdbd starts on it."""

    def __init__(self, chroot, key: bytes, dump_inside: str):
        self.dump_inside = dump_inside
        super().__init__(chroot, key, name="dbd-restored")

    def _create_user(self) -> None:
        out = self.chroot.run(["bash", "-c", restore_script(self.dump_inside, f"--socket={self._sock}")], timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        super()._create_user()  # the user is not in the dump (a database dump, not the server's grants)


def _assocs(chroot, conf: str) -> list[str]:
    return sorted(
        chroot.run(
            ["sacctmgr", "-n", "-P", "show", "assoc", "format=cluster,account,user,share,grptres,qos,defaultqos"],
            conf=conf,
        ).stdout.split()
    )


def _qos(chroot, conf: str) -> list[str]:
    return sorted(
        chroot.run(["sacctmgr", "-n", "-P", "show", "qos", "format=name,priority,preempt"], conf=conf).stdout.split()
    )


def test_a_dumped_slurmdbd_database_restores_with_its_associations(chroot, key):
    plan, values = _plan_and_values(CONFIGS["gke-h100-512"])
    cluster = values["clusterName"]
    original = SlurmDbd(chroot, key, name="dbd-original")
    work = Workdir(chroot, "backup")
    work.host.mkdir(parents=True, exist_ok=True)
    restored = None
    try:
        # slurmctld registers the cluster's TRES (gres/gpu:<model>) with slurmdbd; the accounts' GPU caps need them
        ctl = SlurmController(chroot, values, key, original)
        ctl.stop()
        conf = f"{original.dir.inside}/client/slurm.conf"
        script = Workdir(chroot, "accounts")
        script.write("apply.sh", plan.sacctmgr_script(cluster), 0o755)
        out = chroot.run(["/bin/sh", f"{script.inside}/apply.sh"], conf=conf, timeout=180)
        script.remove()
        assert out.returncode == 0, out.stdout + out.stderr
        before_assoc, before_qos = _assocs(chroot, conf), _qos(chroot, conf)
        assert any(f"|{a.name}|" in line for a in plan.accounts for line in before_assoc), before_assoc

        # the CronJob's dump, as the database's slurm user over TCP
        dump = chroot.run(
            [
                "env",
                f"MYSQL_PWD={original.password}",
                "bash",
                "-c",
                dump_script("127.0.0.1", original.db_port, DATABASE_USER, DATABASE, work.inside),
            ],
            timeout=300,
        )
        assert dump.returncode == 0, dump.stdout + dump.stderr
        files = sorted((work.host).glob(f"{DATABASE}-*.sql.gz"))
        assert len(files) == 1 and not list(work.host.glob("*.part")), files
        assert re.fullmatch(rf"{DATABASE}-\d{{8}}T\d{{6}}Z\.sql\.gz", files[0].name)
        original.stop()

        restored = RestoredDbd(chroot, key, f"{work.inside}/{files[0].name}")
        rconf = f"{restored.dir.inside}/client/slurm.conf"
        restored.dir.write("client/slurm.conf", client_slurm_conf(cluster, "localhost", 1, "localhost", restored.port))
        assert _assocs(chroot, rconf) == before_assoc
        assert _qos(chroot, rconf) == before_qos
        assert [
            ln for ln in restored.log().rsplit("started", 1)[-1].splitlines() if re.search(r"\b(error|fatal):", ln)
        ] == []
    finally:
        original.stop()
        if restored is not None:
            restored.stop()
        work.remove()


def test_a_failed_dump_leaves_no_file(chroot, key, tmp_path):
    work = Workdir(chroot, "backup-fail")
    work.host.mkdir(parents=True, exist_ok=True)
    try:
        out = chroot.run(
            ["env", "MYSQL_PWD=wrong", "bash", "-c", dump_script("127.0.0.1", 1, DATABASE_USER, DATABASE, work.inside)],
            timeout=60,
        )
        assert out.returncode != 0
        assert list(work.host.glob("*")) == []
    finally:
        work.remove()
