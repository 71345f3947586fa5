"""GPU machine: kforge.load on GPU artifacts with PyTorch CUDA tensors (one call each, vs float64 torch)."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import kforge  # noqa: E402

table = sys.argv[1]
runtime = os.path.join(table, "..", "libkforge_mgpu.so")
torch.backends.cuda.matmul.allow_tf32 = False
cases = {
    "gemm_bias_relu.gemm_fused_epilogue": (lambda a, b, c: torch.relu(a @ b + c), [(4096, 4096), (4096, 4096), (4096,)]),
    "softmax.row_reduction": (lambda x: torch.softmax(x, 1), [(4096, 4096)]),
}
failures = 0
for name, (reference, shapes) in cases.items():
    kernel = kforge.load(os.path.join(table, name), runtime=runtime)
    args = [torch.randn(s, device="cuda") for s in shapes]
    out = kernel(*args)
    torch.cuda.synchronize()
    ref = reference(*[a.double() for a in args])
    rel = float((out.double() - ref).norm() / ref.norm())
    ok = rel < 1e-5 and bool(torch.isfinite(out).all())
    failures += not ok
    print(f"{name}: returned {tuple(out.shape)} {out.dtype} on {out.device}, rel L2 {rel:.1e}: {'ok' if ok else 'WRONG'}")
try:
    kforge.load(os.path.join(table, "softmax.row_reduction"), runtime=runtime)(torch.randn(4096, 4096))
    print("cpu tensor accepted: WRONG"); failures += 1
except kforge.ArtifactError as error:
    print(f"cpu tensor refused: {error}")
print(f"{len(cases) + 1 - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
