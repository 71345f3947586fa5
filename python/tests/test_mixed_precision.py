"""bf16 modules as torch-mlir writes them (python/kforge/importer.py, kforge-opt --kforge-normalize-importer): the
inputs and the transposed weights of every nn.Linear are extended to f32 before an f32 matmul. kforge reads the
bf16 tensors in the matmul itself (bf16 inputs, f32 accumulation: the tensor cores' form), so no kernel converts
weights, and the result is what PyTorch computes. CPU target; needs torch and torch-mlir (test/Python/
mixed-precision.test)."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")

import kforge  # noqa: E402
from conftest import BUILD, ROOT  # noqa: E402

sys.path.insert(0, ROOT)
from bench.models import blocks  # noqa: E402

TOOLS = os.path.join(BUILD, "bin")


def float64_error(module, x, actual):
    reference = blocks.MLPBlock(hidden=64, inner=128)
    reference.load_state_dict({k: v.double() for k, v in module.state_dict().items()})
    with torch.no_grad():
        expected = reference.double()(x.double())
    return ((actual.double() - expected).norm() / expected.norm()).item()


def test_bf16_mlp_block_is_three_kernels_on_bf16_operands_and_matches_pytorch(tmp_path):
    torch.manual_seed(3)
    module = blocks.MLPBlock(hidden=64, inner=128).eval().to(torch.bfloat16)
    x = torch.randn(32, 64).to(torch.bfloat16)
    run = kforge.compile(module, x, directory=str(tmp_path / "mlp"), db=str(tmp_path / "db"), tools_dir=TOOLS)
    # layernorm, fc1 + bias + GELU, fc2 + bias + residual: no kernel extends or transposes a weight.
    assert len(run.model.kernels) == 3
    payloads = [open(os.path.join(run.model.plan.directory, d["payload"])).read()
                for d in run.model.plan.dispatches]
    matmuls = [line for text in payloads for line in text.splitlines() if "linalg.matmul" in line]
    assert len(matmuls) == 2
    for line in matmuls:
        # bf16 operands, the weight read through the transposed map, f32 accumulation
        assert "indexing_maps" in line and line.count("xbf16>") == 2 and "xf32>)" in line, line
    with torch.no_grad():
        eager = module(x)
    out = run(x)
    assert out.dtype == torch.bfloat16
    # bf16 rounding dominates both errors: kforge's may differ from eager's by the order of the sums only.
    assert float64_error(module, x, out) <= 1.5 * float64_error(module, x, eager) + 1e-6
