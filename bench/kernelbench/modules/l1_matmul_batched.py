"""Batched matrix product of 3-D tensors: torch.bmm over 128 independent 512 x 1024 x 512 products."""
import torch
import torch.nn as nn

B, M, K, N = 128, 512, 1024, 512
SMALL = dict(B=4, M=24, K=32, N=20)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(B, M, K), torch.randn(B, K, N)]


def get_init_inputs():
    return []
