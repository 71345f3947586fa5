"""BatchNorm2d with running statistics (inference), written with training=False so the module's mode does not
matter; the running mean and variance are buffers, set away from 0 and 1 so that they count."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CHANNELS, HEIGHT, WIDTH = 32, 64, 512, 512
SMALL = dict(BATCH=2, CHANNELS=6, HEIGHT=7, WIDTH=9)


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        bn = self.bn
        return F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, training=False, eps=bn.eps)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
