"""nn.Linear, then the sum of each output row (keepdim): the product is reduced as it is made."""
import torch
import torch.nn as nn

BATCH, IN_FEATURES, OUT_FEATURES = 1024, 8192, 8192
SMALL = dict(BATCH=12, IN_FEATURES=40, OUT_FEATURES=24)


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.sum(self.linear(x), dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
