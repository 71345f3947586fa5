"""InstanceNorm2d (no affine): each (sample, channel) plane normalised by its own mean and variance."""
import torch
import torch.nn as nn

BATCH, CHANNELS, SIZE = 64, 64, 256
SMALL = dict(BATCH=2, CHANNELS=3, SIZE=6)


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, SIZE, SIZE)]


def get_init_inputs():
    return [CHANNELS]
