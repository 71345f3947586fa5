"""Rows scaled to unit L2 norm: x / ||x||_2 along dim 1 (keepdim)."""
import torch
import torch.nn as nn

ROWS, COLS = 16384, 32768
SMALL = dict(ROWS=20, COLS=70)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / torch.norm(x, p=2, dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
