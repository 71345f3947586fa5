"""nn.Linear followed by the exact (erf) GELU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, IN_FEATURES, OUT_FEATURES = 2048, 4096, 8192
SMALL = dict(BATCH=12, IN_FEATURES=40, OUT_FEATURES=24)


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return F.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
