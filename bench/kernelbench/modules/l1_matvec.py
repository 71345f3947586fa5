"""Matrix-vector product: (M, K) @ (K, 1), memory-bound (the matrix is read once)."""
import torch
import torch.nn as nn

M, K = 16384, 65536
SMALL = dict(M=96, K=256)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, v):
        return torch.matmul(a, v)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []
