"""Conv2d NCHW 3x3 (padding 1, with bias), then MaxPool2d 2x2, then ReLU."""
import torch
import torch.nn as nn

BATCH, IN_CHANNELS, OUT_CHANNELS, SIZE = 32, 64, 128, 128
SMALL = dict(BATCH=2, IN_CHANNELS=3, OUT_CHANNELS=4, SIZE=8)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        return torch.relu(self.pool(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, SIZE, SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
