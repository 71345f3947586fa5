"""nn.Linear followed by a softmax over its output features."""
import torch
import torch.nn as nn

BATCH, IN_FEATURES, OUT_FEATURES = 1024, 8192, 8192
SMALL = dict(BATCH=12, IN_FEATURES=40, OUT_FEATURES=24)
SOFTMAX_ROWS = True  # bench/kernelbench: also check rows sum to 1, and inputs x 1000


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.softmax(self.linear(x), dim=1)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
