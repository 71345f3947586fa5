"""Tall-skinny product: (M, 64) @ (64, M), a small K and a large output."""
import torch
import torch.nn as nn

M, K = 32768, 64
SMALL = dict(M=200, K=8)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, M)]


def get_init_inputs():
    return []
