"""Conv2d (3x3, padding 1, no bias), BatchNorm with running statistics (inference), ReLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, IN_CHANNELS, OUT_CHANNELS, SIZE = 32, 64, 64, 128
SMALL = dict(BATCH=2, IN_CHANNELS=3, OUT_CHANNELS=4, SIZE=8)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        bn = self.bn
        y = F.batch_norm(self.conv(x), bn.running_mean, bn.running_var, bn.weight, bn.bias, training=False, eps=bn.eps)
        return torch.relu(y)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, SIZE, SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
