"""ConvTranspose2d NCHW, 3x3 kernel, stride 2, 64 -> 32 channels, no bias."""
import torch
import torch.nn as nn

BATCH, IN_CHANNELS, OUT_CHANNELS, SIZE = 64, 64, 32, 128
SMALL = dict(BATCH=2, IN_CHANNELS=3, OUT_CHANNELS=2, SIZE=5)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size=3, stride=2, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, SIZE, SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
