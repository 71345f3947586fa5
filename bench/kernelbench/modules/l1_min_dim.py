"""Min over the middle dimension (values only)."""
import torch
import torch.nn as nn

D0, D1, D2 = 64, 4096, 4096
SMALL = dict(D0=3, D1=17, D2=40)


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.min(x, dim=self.dim)[0]


def get_inputs():
    return [torch.randn(D0, D1, D2)]


def get_init_inputs():
    return [1]
