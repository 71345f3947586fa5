"""Every benchmark task's payload computes what its NumPy definition says (small shapes, CPU build), and the
task set is what the benchmark issue asks for."""
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench", "tasks"))
BUILD = os.environ.get("KFORGE_BUILD_DIR", os.path.join(ROOT, "build"))

import kforge  # noqa: E402
import tasks  # noqa: E402


def test_the_task_set_covers_levels_1_and_2():
    level1 = [t for t in tasks.TASKS if t.level == 1]
    level2 = [t for t in tasks.TASKS if t.level == 2]
    assert len(level1) >= 12 and len(level2) >= 8
    assert len({t.name for t in tasks.TASKS}) == len(tasks.TASKS)
    for t in tasks.TASKS:
        assert t.torch.startswith("lambda"), t.name  # a PyTorch definition for the GPU benchmark


FP32_TASKS = [t for t in tasks.TASKS if t.dtype == "f32"]
BF16_TASKS = [t for t in tasks.TASKS if t.dtype == "bf16"]
HALF_TASKS = [t for t in tasks.TASKS if t.dtype in ("bf16", "f16")]


def test_bf16_variants_of_the_matmul_bound_tasks():
    names = {t.name for t in BF16_TASKS}
    assert {"matmul_square_bf16", "batch_matmul_bf16", "gemm_bias_relu_bf16"} <= names
    for t in BF16_TASKS:
        assert tasks.by_name(t.fp32_twin).dtype == "f32" and t.tolerance == 2.0 ** -8


def test_f16_variant_of_the_square_matmul():
    t = tasks.by_name("matmul_square_f16")
    assert t.dtype == "f16" and t.fp32_twin == "matmul_square" and t.tolerance == 2.0 ** -11
    assert "xf16>" in t.mlir(t.small) and "arith.truncf %x : f32 to f16" in t.mlir(t.small)


@pytest.mark.parametrize("task", HALF_TASKS, ids=lambda t: t.name)
def test_bf16_payload_matches_its_fp32_twin(task, tmp_path):
    """NumPy has no bf16, so a bf16 (or f16) payload is checked by kforge-run against its fp32 twin's payload
    (which the test below checks against NumPy); the runner rounds the inputs to the half type for both."""
    for name, source in ((task.name, task), (task.fp32_twin, tasks.by_name(task.fp32_twin))):
        (tmp_path / f"{name}.mlir").write_text(source.mlir(task.small))
        subprocess.run([os.path.join(BUILD, "bin", "kforge-compile"), str(tmp_path / f"{name}.mlir"), "--target", "cpu",
                        "-o", str(tmp_path / name)], check=True)
    run = subprocess.run([os.path.join(BUILD, "bin", "kforge-run"), "--candidate", str(tmp_path / task.name),
                          "--reference", str(tmp_path / task.fp32_twin), "--seeds", "2", "--reps", "0",
                          "--tolerance", str(task.tolerance)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]


@pytest.mark.parametrize("task", FP32_TASKS, ids=lambda t: t.name)
def test_payload_matches_numpy_definition(task, tmp_path):
    payload = tmp_path / f"{task.name}.mlir"
    payload.write_text(task.mlir(task.small))
    subprocess.run([os.path.join(BUILD, "bin", "kforge-compile"), str(payload), "--target", "cpu",
                    "-o", str(tmp_path / "art")], check=True)
    kernel = kforge.load(str(tmp_path / "art"))
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal(shape, dtype=np.float32) for shape in task.input_shapes(task.small)]
    expected = np.asarray(task.numpy(*[x.astype(np.float64) for x in inputs]))
    got = kernel(*inputs)
    assert got.shape == expected.shape
    error = np.linalg.norm(got - expected) / max(np.linalg.norm(expected), 1e-30)
    assert error < 1e-4, f"{task.name}: relative L2 error {error}"
