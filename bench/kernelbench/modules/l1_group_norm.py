"""GroupNorm: 64 channels in 8 groups, statistics over each group's channels and the image."""
import torch
import torch.nn as nn

BATCH, CHANNELS, GROUPS, HEIGHT, WIDTH = 32, 64, 8, 512, 512
SMALL = dict(BATCH=2, CHANNELS=8, GROUPS=4, HEIGHT=6, WIDTH=5)


class Model(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [GROUPS, CHANNELS]
