"""Large-K product: (256, 524288) @ (524288, 256), a long reduction into a small output."""
import torch
import torch.nn as nn

M, K, N = 256, 524288, 256
SMALL = dict(M=16, K=4096, N=16)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
