"""``scripts/fetch-upstream.sh`` and its list: the list is current and covers every upstream file the tests read from
``../shared``; the script verifies checksums (and repeats the packaging edits) so a bad download never reaches a test;
the tests find the fetched cache when ``../shared`` is absent. (The download itself needs the internet: not run
here.)"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from components.charts import GPU_RUNTIME_CHARTS, KUBEFLOW_TRAINER, KUEUE, SLURM_CHARTS
from tests import conftest
from tests.conftest import PROJECT_ROOT, require_shared
from tests.support.kube.crd_schemas import CRD_FILES
from tests.support.kube.upstream_files import EDITS, LIST_FILE, expected_lines

SCRIPT = PROJECT_ROOT / "scripts" / "fetch-upstream.sh"


def listed() -> dict[str, list[str]]:
    lines = (PROJECT_ROOT / LIST_FILE).read_text(encoding="utf-8").splitlines()
    return {parts[1]: parts for parts in (line.split(" ", 3) for line in lines)}


def test_the_list_is_current_with_shared():
    """Every file of ../shared/schemas and ../shared/charts, with its sha256 and URL (regenerate with
    ``expected_lines`` after a bump)."""
    assert (PROJECT_ROOT / LIST_FILE).read_text(encoding="utf-8").splitlines() == expected_lines(
        require_shared("schemas").parent
    )


def test_every_file_the_tests_name_is_listed():
    files = listed()
    named = [f"schemas/{p}" for p in CRD_FILES.values()]
    named += [f"schemas/{pin.default_values}" for pin in (*GPU_RUNTIME_CHARTS, KUEUE, KUBEFLOW_TRAINER, *SLURM_CHARTS)]
    named += [
        f"schemas/{pin.default_values.rsplit('/', 1)[0]}/Chart.yaml" for pin in (KUEUE, KUBEFLOW_TRAINER, *SLURM_CHARTS)
    ]
    assert [n for n in named if n not in files] == []
    charts = {p.split("/")[1] for p in files if p.startswith("charts/")}
    assert {p.name for p in require_shared("charts").iterdir() if p.is_dir()} == charts


def _run(list_file: Path, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "UPSTREAM_LIST": str(list_file), "GPU_CLUSTER_UPSTREAM": str(cache)}
    return subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, check=False, timeout=120)


def test_fetch_refuses_a_file_whose_checksum_differs(tmp_path):
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text("a: 1\n")
    bad.write_text("b: 2\n")
    sha = hashlib.sha256(b"a: 1\n").hexdigest()
    (tmp_path / "list").write_text(f"{sha} schemas/x/good.yaml file://{good}\n{sha} schemas/x/bad.yaml file://{bad}\n")
    result = _run(tmp_path / "list", tmp_path / "cache")
    assert result.returncode == 1
    got = hashlib.sha256(b"b: 2\n").hexdigest()
    assert f"error: schemas/x/bad.yaml: sha256 {got}, expected {sha}" in result.stderr
    assert (tmp_path / "cache/schemas/x/good.yaml").read_text() == "a: 1\n"
    assert not (tmp_path / "cache/schemas/x/bad.yaml").exists() and not list((tmp_path / "cache").rglob("*.part"))
    (tmp_path / "list").write_text(f"{sha} schemas/x/good.yaml file://{good}\n")
    assert _run(tmp_path / "list", tmp_path / "cache").stdout.startswith("fetch-upstream: 1 files verified")


@pytest.mark.parametrize(
    "staged, original",
    [
        ("charts/gpu-operator-v26.7.0/Chart.yaml", "schemas/gpu-operator/v26.7.0/deployments/gpu-operator/Chart.yaml"),
        ("charts/kueue-0.19.2/values.yaml", "schemas/kueue/v0.19.2/charts/kueue/values.yaml"),
    ],
)
def test_the_packaging_edits_turn_the_tagged_file_into_the_staged_one(tmp_path, staged, original):
    """Where ../shared/schemas holds the untouched file at the tag, the listed edit is proven offline."""
    sha, path, _, edit = listed()[staged]
    assert edit == EDITS[staged]
    (tmp_path / "list").write_text(f"{sha} {path} file://{require_shared(*original.split('/'))} {edit}\n")
    result = _run(tmp_path / "list", tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "cache" / path).read_bytes() == require_shared(*staged.split("/")).read_bytes()


def test_tests_read_the_fetched_cache_when_shared_is_absent(monkeypatch, tmp_path):
    monkeypatch.setattr(conftest, "PROJECT_ROOT", tmp_path / "project")
    monkeypatch.setenv("GPU_CLUSTER_UPSTREAM", str(tmp_path / "cache"))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="run `bash scripts/fetch-upstream.sh`"):
        conftest.require_shared("charts", "kueue-0.19.2")
    (tmp_path / "cache" / "charts" / "kueue-0.19.2").mkdir(parents=True)
    assert conftest.require_shared("charts", "kueue-0.19.2") == tmp_path / "cache" / "charts" / "kueue-0.19.2"
    with pytest.raises(pytest.skip.Exception, match="exist only in the shared folder"):
        conftest.require_shared("facts", "gpu-catalog-aws.csv")


def test_without_a_network_the_fetch_stops_at_the_first_file_with_a_clear_message(tmp_path):
    """No network used to cost every file its own connect timeouts and retries (73 minutes for the list); the first
    file that cannot connect now ends the run, naming the host and what to do."""
    refused = "http://127.0.0.1:9"  # the discard port: nothing listens, so connecting fails at once
    sha = hashlib.sha256(b"a: 1\n").hexdigest()
    (tmp_path / "list").write_text("".join(f"{sha} schemas/x/{n}.yaml {refused}/{n}.yaml\n" for n in "abc"))
    result = _run(tmp_path / "list", tmp_path / "cache")
    assert result.returncode == 1
    assert result.stderr.count("cannot reach 127.0.0.1:9") == 1, result.stderr
    assert "schemas/x/a.yaml: cannot reach 127.0.0.1:9 (curl exit 7)" in result.stderr
    assert "schemas/x/b.yaml" not in result.stderr and "fix: run it where 127.0.0.1:9 is reachable" in result.stderr
