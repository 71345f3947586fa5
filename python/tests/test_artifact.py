"""kforge.load on CPU artifacts with NumPy (GPU artifacts are exercised on the GPU machine)."""

import numpy as np
import pytest

import kforge


@pytest.fixture(scope="module")
def matmul_plus_one(compile_artifact):
    return compile_artifact("test/Runner/Inputs/reference.mlir", "--target", "cpu")


def inputs(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((64, 64), dtype=np.float32), rng.standard_normal((64, 64), dtype=np.float32))


def test_returns_allocated_outputs(matmul_plus_one):
    x, w = inputs()
    y = kforge.load(matmul_plus_one)(x, w)
    assert y.shape == (64, 64) and y.dtype == np.float32
    np.testing.assert_allclose(y, x.astype(np.float64) @ w + 1, rtol=1e-4, atol=1e-4)


def test_destination_passing_writes_the_given_output(matmul_plus_one):
    x, w = inputs(1)
    out = np.full((64, 64), np.nan, dtype=np.float32)
    assert kforge.load(matmul_plus_one)(x, w, out) is None
    np.testing.assert_allclose(out, x.astype(np.float64) @ w + 1, rtol=1e-4, atol=1e-4)


def test_bound_call_runs_without_rechecking(matmul_plus_one):
    x, w = inputs(2)
    out = np.full((64, 64), np.nan, dtype=np.float32)
    call = kforge.load(matmul_plus_one).bind(x, w, out)
    call()
    np.testing.assert_allclose(out, x.astype(np.float64) @ w + 1, rtol=1e-4, atol=1e-4)
    with pytest.raises(kforge.ArtifactError, match="bind takes all 3 arguments, got 2"):
        kforge.load(matmul_plus_one).bind(x, w)


def test_manifest_describes_the_call(matmul_plus_one):
    kernel = kforge.load(matmul_plus_one)
    assert kernel.target == "cpu"
    assert [a["role"] for a in kernel.arguments] == ["input", "input", "output"]


def test_half_precision(compile_artifact):
    kernel = kforge.load(compile_artifact("test/Runner/Inputs/scale-f16.mlir", "--target", "cpu"))
    x = np.linspace(-4, 4, 1024, dtype=np.float16)
    np.testing.assert_array_equal(kernel(x), (x * np.float16(2) + np.float16(1)).astype(np.float16))


@pytest.mark.parametrize("args, message", [
    (lambda x, w: (x,), "expected 2 inputs or all 3 arguments, got 1"),
    (lambda x, w: (x[:32], w), "argument 0: expected shape (64, 64), got (32, 64)"),
    (lambda x, w: (x.astype(np.float64), w), "argument 0: expected f32, got float64"),
    (lambda x, w: (x.T, w), "NumPy arrays must be C-contiguous"),
    (lambda x, w: ([[1.0]], w), "expected a NumPy array or a PyTorch tensor, got list"),
])
def test_bad_arguments_are_clear_errors(matmul_plus_one, args, message):
    x, w = inputs()
    with pytest.raises(kforge.ArtifactError, match=message.replace("(", r"\(").replace(")", r"\)")):
        kforge.load(matmul_plus_one)(*args(x, w))


def test_an_output_overlapping_an_argument_is_refused(matmul_plus_one):
    """In place (the output in an input's buffer, or over part of it) is refused before the kernel runs; the same
    array passed as both inputs is fine (inputs are only read)."""
    x, w = inputs(3)
    kernel = kforge.load(matmul_plus_one)
    with pytest.raises(kforge.ArtifactError, match=r"argument 2 \(an output\) overlaps argument 0"):
        kernel(x, w, x)
    both = np.zeros((128, 64), dtype=np.float32)
    with pytest.raises(kforge.ArtifactError, match=r"argument 2 \(an output\) overlaps argument 1"):
        kernel(x, both[32:96], both[64:])
    out = np.full((64, 64), np.nan, dtype=np.float32)
    kernel(x, x, out)
    np.testing.assert_allclose(out, x.astype(np.float64) @ x + 1, rtol=1e-4, atol=1e-4)


def test_missing_or_foreign_artifact(tmp_path):
    with pytest.raises(kforge.ArtifactError, match="no artifact manifest"):
        kforge.load(str(tmp_path))
    (tmp_path / "kernel.json").write_text('{"format": "other"}')
    with pytest.raises(kforge.ArtifactError, match="is not a kforge-artifact/1 manifest"):
        kforge.load(str(tmp_path))


def test_gpu_artifact_needs_the_runtime(compile_artifact, monkeypatch):
    directory = compile_artifact("examples/gemm.mlir", recipe="recipes/matmul_register_tiled.mlir")
    monkeypatch.delenv("KFORGE_RUNTIME", raising=False)
    with pytest.raises(kforge.ArtifactError, match="needs kforge's runtime"):
        kforge.load(directory)


def test_gpu_artifacts_declare_and_check_argument_alignment(compile_artifact):
    """GPU kernels are compiled assuming 16-byte aligned buffers (128-bit accesses): the manifest says so, and a
    misaligned view is refused before any kernel runs."""
    import json
    import os
    from kforge.artifact import _Buffer, check_alignment
    directory = compile_artifact("examples/gemm.mlir", recipe="recipes/matmul_register_tiled.mlir")
    manifest = json.load(open(os.path.join(directory, "kernel.json")))
    assert manifest["target"]["argument_alignment"] == 16
    storage = np.zeros(64, dtype=np.float32)
    aligned = next(storage[i:] for i in range(4) if storage[i:].ctypes.data % 16 == 0)
    check_alignment(_Buffer(aligned), 0, 16)
    misaligned = next(storage[i:] for i in range(4) if storage[i:].ctypes.data % 16)
    with pytest.raises(kforge.ArtifactError, match="not 16-byte aligned"):
        check_alignment(_Buffer(misaligned), 0, 16)
    check_alignment(_Buffer(misaligned), 0, 1)  # CPU artifacts make no such assumption
