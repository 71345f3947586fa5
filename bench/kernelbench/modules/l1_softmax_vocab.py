"""Softmax over GPT-2's vocabulary: rows 50257 wide (a prime-ish width)."""
import torch
import torch.nn as nn

ROWS, COLS = 8192, 50257
SMALL = dict(ROWS=4, COLS=50257)
SOFTMAX_ROWS = True  # bench/kernelbench: also check rows sum to 1, and inputs x 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
