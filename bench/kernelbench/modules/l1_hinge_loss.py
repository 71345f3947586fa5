"""Hinge loss mean(clamp(1 - predictions * targets, min=0)) with targets in {-1, +1}."""
import torch
import torch.nn as nn

ROWS, COLS = 16384, 32768
SMALL = dict(ROWS=16, COLS=50)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1.0 - predictions * targets, min=0.0))


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randint(0, 2, (ROWS, COLS)).float() * 2.0 - 1.0]


def get_init_inputs():
    return []
