"""Linear, then GroupNorm over the features (8 groups), then hardtanh."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, IN_FEATURES, OUT_FEATURES, GROUPS = 8192, 4096, 4096, 8
SMALL = dict(BATCH=6, IN_FEATURES=12, OUT_FEATURES=16, GROUPS=4)


class Model(nn.Module):
    def __init__(self, in_features, out_features, groups):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.GroupNorm(groups, out_features)

    def forward(self, x):
        return F.hardtanh(self.norm(self.linear(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, GROUPS]
