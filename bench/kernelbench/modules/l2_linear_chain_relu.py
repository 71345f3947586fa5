"""Three nn.Linear layers (4096 wide) with ReLU between them."""
import torch
import torch.nn as nn

BATCH, FEATURES = 1024, 4096
SMALL = dict(BATCH=10, FEATURES=32)


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(features, features), nn.ReLU(), nn.Linear(features, features), nn.ReLU(),
                                    nn.Linear(features, features))

    def forward(self, x):
        return self.layers(x)


def get_inputs():
    return [torch.randn(BATCH, FEATURES)]


def get_init_inputs():
    return [FEATURES]
