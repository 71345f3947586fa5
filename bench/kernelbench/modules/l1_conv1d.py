"""Conv1d NCW, kernel 3, 32 -> 64 channels, with bias."""
import torch
import torch.nn as nn

BATCH, IN_CHANNELS, OUT_CHANNELS, LENGTH = 32, 32, 64, 65536
SMALL = dict(BATCH=2, IN_CHANNELS=3, OUT_CHANNELS=4, LENGTH=17)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size=3)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
