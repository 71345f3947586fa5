"""Conv2d (3x3), ReLU, then a per-channel bias parameter of shape (C, 1, 1) added (a broadcast)."""
import torch
import torch.nn as nn

BATCH, IN_CHANNELS, OUT_CHANNELS, SIZE = 32, 64, 128, 128
SMALL = dict(BATCH=2, IN_CHANNELS=3, OUT_CHANNELS=5, SIZE=9)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.1)

    def forward(self, x):
        return torch.relu(self.conv(x)) + self.bias


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, SIZE, SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
