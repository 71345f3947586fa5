"""Conv2d NCHW 3x3 (with bias), InstanceNorm2d, then a division by 2."""
import torch
import torch.nn as nn

BATCH, IN_CHANNELS, OUT_CHANNELS, SIZE = 32, 32, 64, 128
SMALL = dict(BATCH=2, IN_CHANNELS=3, OUT_CHANNELS=4, SIZE=7)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3)
        self.norm = nn.InstanceNorm2d(out_channels)

    def forward(self, x):
        return self.norm(self.conv(x)) / 2.0


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, SIZE, SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
