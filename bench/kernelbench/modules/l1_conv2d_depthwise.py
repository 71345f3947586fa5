"""Depthwise Conv2d NCHW (groups = channels), 3x3 kernel, padding 1, no bias."""
import torch
import torch.nn as nn

BATCH, CHANNELS, SIZE = 64, 64, 256
SMALL = dict(BATCH=2, CHANNELS=3, SIZE=8)


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, padding=1, groups=channels, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, SIZE, SIZE)]


def get_init_inputs():
    return [CHANNELS]
