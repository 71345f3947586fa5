"""Linear, dropout (evaluation mode: the identity), softmax over the features."""
import torch
import torch.nn as nn

BATCH, IN_FEATURES, OUT_FEATURES = 8192, 4096, 4096
SMALL = dict(BATCH=6, IN_FEATURES=12, OUT_FEATURES=20)


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(0.1)
        self.eval()

    def forward(self, x):
        return torch.softmax(self.dropout(self.linear(x)), dim=1)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
