"""Conv2d NCHW, 5x5 kernel, stride 2, no padding, on a non-square image, without bias."""
import torch
import torch.nn as nn

BATCH, IN_CHANNELS, OUT_CHANNELS, HEIGHT, WIDTH = 32, 32, 64, 256, 384
SMALL = dict(BATCH=2, IN_CHANNELS=3, OUT_CHANNELS=4, HEIGHT=11, WIDTH=14)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=5, stride=2, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
