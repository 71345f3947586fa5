"""4-D tensor times matrix: out[b, i, j, k] = sum_l x[b, i, j, l] * w[l, k] (torch.matmul broadcasts w)."""
import torch
import torch.nn as nn

B, I, J, L, K = 8, 128, 256, 512, 512
SMALL = dict(B=2, I=3, J=8, L=16, K=12)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w):
        return torch.matmul(x, w)


def get_inputs():
    return [torch.randn(B, I, J, L), torch.randn(L, K)]


def get_init_inputs():
    return []
