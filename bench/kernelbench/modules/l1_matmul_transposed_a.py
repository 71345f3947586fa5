"""C = A^T @ B with A stored K x M: the transpose is taken in forward."""
import torch
import torch.nn as nn

M, K, N = 4096, 4096, 4096
SMALL = dict(M=48, K=64, N=40)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a.T, b)


def get_inputs():
    return [torch.randn(K, M), torch.randn(K, N)]


def get_init_inputs():
    return []
