"""The model blocks bench/models/run compiles: realistic sizes (2048 tokens, hidden 4096)."""

import torch

nn = torch.nn
F = torch.nn.functional


class MLPBlock(nn.Module):
    """Pre-norm MLP block: layernorm, Linear (4x wider), GELU, Linear, residual."""

    def __init__(self, hidden, inner):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.fc1, self.fc2 = nn.Linear(hidden, inner), nn.Linear(inner, hidden)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class DecoderBlock(nn.Module):
    """Pre-norm decoder block: attention (fused qkv Linear split into heads, Q K^T scaled, softmax, x V, output
    projection) and an MLP block, with residuals; attention as batched matmul + softmax + batched matmul."""

    def __init__(self, hidden, heads, inner):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.qkv, self.proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
        self.fc1, self.fc2 = nn.Linear(hidden, inner), nn.Linear(inner, hidden)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = (t.view(b, s, self.heads, -1).transpose(1, 2) for t in self.qkv(self.ln1(x)).split(h, dim=-1))
        attention = torch.softmax(q @ k.transpose(-2, -1) / (h // self.heads) ** 0.5, dim=-1)
        x = x + self.proj((attention @ v).transpose(1, 2).reshape(b, s, h))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


TOKENS, HIDDEN, HEADS = 2048, 4096, 32
CONFIGS = {
    "mlp-f32": ("mlp", torch.float32), "decoder-f32": ("decoder", torch.float32),
    "mlp-bf16": ("mlp", torch.bfloat16), "decoder-bf16": ("decoder", torch.bfloat16),
}


def build(config, device):
    """(module in eval mode, input) for ``config`` on ``device`` ("meta": shapes only, for --prepare)."""
    kind, dtype = CONFIGS[config]
    torch.manual_seed(0)
    with torch.device(device):
        module = MLPBlock(HIDDEN, 4 * HIDDEN) if kind == "mlp" else DecoderBlock(HIDDEN, HEADS, 4 * HIDDEN)
        x = torch.randn(1, TOKENS, HIDDEN)
    return module.to(dtype).eval(), x.to(dtype)
