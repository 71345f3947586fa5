"""y = Linear(x); sigmoid(y) * scale + y."""
import torch
import torch.nn as nn

BATCH, IN_FEATURES, OUT_FEATURES = 1024, 8192, 8192
SMALL = dict(BATCH=12, IN_FEATURES=40, OUT_FEATURES=24)


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        y = self.linear(x)
        return torch.sigmoid(y) * self.scale + y


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, 2.0]
