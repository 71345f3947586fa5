"""Square matrix product C = A @ B (fp32)."""
import torch
import torch.nn as nn

N = 4096
SMALL = dict(N=64)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []
