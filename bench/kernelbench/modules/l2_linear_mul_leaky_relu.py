"""Linear without bias (1024 x 8192 x 8192), times a constant, then leaky ReLU (slope 0.1)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, IN_FEATURES, OUT_FEATURES = 1024, 8192, 8192
SMALL = dict(BATCH=12, IN_FEATURES=40, OUT_FEATURES=24)


class Model(nn.Module):
    def __init__(self, in_features, out_features, multiplier):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)
        self.multiplier = multiplier

    def forward(self, x):
        return F.leaky_relu(self.linear(x) * self.multiplier, negative_slope=0.1)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, 2.0]
