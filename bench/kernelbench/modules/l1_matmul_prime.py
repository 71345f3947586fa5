"""Matrix product at prime sizes (no dimension divides a tile): (4093, 4099) @ (4099, 4091)."""
import torch
import torch.nn as nn

M, K, N = 4093, 4099, 4091
SMALL = dict(M=37, K=53, N=29)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
