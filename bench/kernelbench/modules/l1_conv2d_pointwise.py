"""Conv2d NCHW with a 1x1 kernel (a channel-mixing matmul in convolution form), 256 -> 256 channels."""
import torch
import torch.nn as nn

BATCH, CHANNELS, SIZE = 32, 256, 128
SMALL = dict(BATCH=2, CHANNELS=12, SIZE=7)


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, SIZE, SIZE)]


def get_init_inputs():
    return [CHANNELS]
