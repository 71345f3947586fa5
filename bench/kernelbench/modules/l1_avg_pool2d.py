"""AvgPool2d NCHW, 2x2 window, stride 2."""
import torch
import torch.nn as nn

BATCH, CHANNELS, SIZE = 128, 64, 256
SMALL = dict(BATCH=2, CHANNELS=3, SIZE=10)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, SIZE, SIZE)]


def get_init_inputs():
    return []
