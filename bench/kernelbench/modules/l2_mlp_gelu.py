"""A transformer MLP block: Linear (4096 -> 16384), tanh GELU, Linear (16384 -> 4096)."""
import torch
import torch.nn as nn

BATCH, FEATURES, HIDDEN = 512, 4096, 16384
SMALL = dict(BATCH=8, FEATURES=24, HIDDEN=40)


class Model(nn.Module):
    def __init__(self, features, hidden):
        super().__init__()
        self.up = nn.Linear(features, hidden)
        self.act = nn.GELU(approximate="tanh")
        self.down = nn.Linear(hidden, features)

    def forward(self, x):
        return self.down(self.act(self.up(x)))


def get_inputs():
    return [torch.randn(BATCH, FEATURES)]


def get_init_inputs():
    return [FEATURES, HIDDEN]
