"""The real `gpuquote estimate` command: JSON equals the service dict, bad input exits 2 in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "jobs"


def test_json_matches_service(cli):
    from gpuquote.service.estimate import estimate_job

    path = EXAMPLES / "qlora-7b.yaml"
    r = cli("estimate", str(path), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == json.loads(json.dumps(estimate_job(str(path))))


def test_readable_output_and_overrides(cli):
    r = cli("estimate", str(EXAMPLES / "infer-70b-batch.yaml"), "--gpu", "h200-141gb-sxm", "--gpus", "2")
    assert r.returncode == 0, r.stderr
    assert "h200-141gb-sxm" in r.stdout and "assumptions" in r.stdout and "bound" in r.stdout


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_examples_estimate(name):
    from gpuquote.service.estimate import estimate_job

    d = estimate_job(str(EXAMPLES / name))
    assert d["fits"] and d["time_hours"] > 0 and d["throughput"]["tokens_per_s"] > 0


def test_fp8_on_a100_exit_2(cli, tmp_path):
    p = tmp_path / "fp8.yaml"
    p.write_text(
        (EXAMPLES / "pretrain-8b-100b-tokens.yaml").read_text().replace("precision: bf16", "precision: fp8")
    )
    r = cli("estimate", str(p), "--gpu", "a100-80gb-sxm4")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "Hopper" in r.stderr


def test_bad_field_exit_2(cli, tmp_path):
    p = tmp_path / "job.yaml"
    p.write_text("kind: infer\nmodel: llama-2-7b\nprecision: fp3\n")
    r = cli("estimate", str(p), "--gpu", "a100-80gb-sxm4")
    assert r.returncode == 2 and "precision" in r.stderr and "bf16" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
