"""MaxPool2d NCHW, 3x3 window, stride 2, padding 1."""
import torch
import torch.nn as nn

BATCH, CHANNELS, SIZE = 128, 64, 256
SMALL = dict(BATCH=2, CHANNELS=3, SIZE=11)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, SIZE, SIZE)]


def get_init_inputs():
    return []
