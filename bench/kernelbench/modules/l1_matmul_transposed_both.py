"""C = A^T @ B^T: both operands stored transposed."""
import torch
import torch.nn as nn

M, K, N = 4096, 4096, 4096
SMALL = dict(M=48, K=64, N=40)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a.T, b.T)


def get_inputs():
    return [torch.randn(K, M), torch.randn(N, K)]


def get_init_inputs():
    return []
