"""LayerNorm over the last three dimensions of an NCHW tensor (statistics per sample)."""
import torch
import torch.nn as nn

BATCH, CHANNELS, HEIGHT, WIDTH = 32, 64, 512, 512
SMALL = dict(BATCH=2, CHANNELS=4, HEIGHT=6, WIDTH=10)


class Model(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.norm = nn.LayerNorm(shape)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [(CHANNELS, HEIGHT, WIDTH)]
