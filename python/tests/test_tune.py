"""kforge.tune: running kforge-tune from Python and calling the best kernel it found (CPU target)."""
import os

import numpy as np
import pytest

import kforge
from conftest import BUILD, ROOT

PAYLOAD = os.path.join(ROOT, "examples", "cpu", "gemm_bias_relu.mlir")


def test_tune_finds_a_faster_kernel_and_it_computes_the_payload(tmp_path):
    run = kforge.tune(PAYLOAD, tmp_path / "run", target="cpu", policy="heuristic", trials=4, seeds=1, reps=10,
                      tools_dir=os.path.join(BUILD, "bin"))
    assert run.best is not None and run.best["speedup_vs_baseline"] > 1.0
    assert run.summary["best"]["id"] == run.best["id"]
    assert run.best_schedule.endswith("best.mlir")
    kernel = run.best_artifact()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 256), dtype=np.float32)
    b = rng.standard_normal((256, 256), dtype=np.float32)
    bias = rng.standard_normal(256, dtype=np.float32)
    expected = np.maximum(a.astype(np.float64) @ b + bias, 0)
    out = kernel(a, b, bias)
    assert np.linalg.norm(out - expected) / np.linalg.norm(expected) < 1e-5

    # The same run directory, read back.
    again = kforge.TuneRun(str(tmp_path / "run"))
    assert again.best["id"] == run.best["id"] and len(again.records) == len(run.records)


def test_tune_reports_kforge_tune_errors(tmp_path):
    with pytest.raises(kforge.TuneError, match="cannot analyse"):
        kforge.tune(tmp_path / "missing.mlir", tmp_path / "run", target="cpu", trials=1,
                    tools_dir=os.path.join(BUILD, "bin"))
    with pytest.raises(kforge.TuneError, match="not a tuning run"):
        kforge.TuneRun(str(tmp_path))
