# Regenerates the importer payloads beside it (parameters as trailing arguments), in a venv with
# torch-mlir and torch from PyPI: python gen.py [NAME...]; writes to the current directory.
import torch, torch.nn as nn, math, sys
from torch_mlir import fx

def wrap(module):
    params = dict(module.named_parameters()); params.update(module.named_buffers())
    names = list(params)
    class W(nn.Module):
        def forward(self, *args):
            n = len(args) - len(names)
            return torch.func.functional_call(module, {k: v for k, v in zip(names, args[n:])}, args[:n])
    return W(), [params[k].detach() for k in names]

class GeluMinGPT(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

class RMSNorm4d(nn.Module):
    def __init__(self, c, eps=1e-5):
        super().__init__(); self.eps = eps
    def forward(self, x):
        rms = torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + self.eps)
        return x / rms

class LinearGelu(nn.Module):
    def __init__(self):
        super().__init__(); self.l1 = nn.Linear(16, 32); self.l2 = nn.Linear(32, 8)
    def forward(self, x):
        return self.l2(nn.functional.gelu(self.l1(x)))

class GemmMulLeaky(nn.Module):
    def __init__(self, k, n, mult=2.0, slope=0.1):
        super().__init__(); self.gemm = nn.Linear(k, n); self.m = mult; self.l = nn.LeakyReLU(slope)
    def forward(self, x):
        return self.l(self.gemm(x) * self.m)

class Softmax(nn.Module):
    def forward(self, x): return torch.softmax(x, dim=1)

cases = {
  "linear": (nn.Linear(64, 32), [torch.randn(16, 64)]),
  "layernorm3": (nn.LayerNorm([4, 8, 8]), [torch.randn(2, 4, 8, 8)]),
  "rmsnorm4d": (RMSNorm4d(4), [torch.randn(2, 4, 8, 8)]),
  "gelu_mingpt": (GeluMinGPT(), [torch.randn(8, 64)]),
  "softmax": (Softmax(), [torch.randn(8, 64)]),
  "linear_gelu": (LinearGelu(), [torch.randn(4, 16)]),
  "conv2d_bias": (nn.Conv2d(3, 8, 3), [torch.randn(2, 3, 10, 10)]),
  "gemm_mul_leaky": (GemmMulLeaky(64, 32), [torch.randn(16, 64)]),
}
for name, (m, inputs) in cases.items():
    if len(sys.argv) > 1 and name not in sys.argv[1:]: continue
    m.eval()
    w, params = wrap(m)
    mod = fx.export_and_import(w, *inputs, *params, output_type="linalg-on-tensors", func_name=name)
    open(f"{name}.mlir", "w").write(str(mod))
    print(name, "ok")
