"""kforge from Python: load a compiled artifact and call it on NumPy arrays or PyTorch tensors.

    import kforge
    kernel = kforge.load("art/gemm")          # the directory kforge-compile wrote
    out = kernel(a, b)                         # outputs allocated like the inputs, returned
    kernel(a, b, out)                          # or destination-passing: outputs given

GPU artifacts take CUDA tensors (PyTorch) and need kforge's mgpu runtime (libkforge_mgpu.so): pass
``runtime=`` or set ``KFORGE_RUNTIME``.

    run = kforge.tune("examples/cpu/gemm_bias_relu.mlir", "runs/gbr", target="cpu", trials=16)
    kernel = run.best_artifact()               # the fastest verified kernel kforge-tune found

    payload = kforge.import_module(model, x)   # a PyTorch module to linalg (torch-mlir); weights as arguments
    payload.save("model.mlir")                 # + model.json; then kforge-compile / kforge-tune model.mlir
    y = kforge.load("art")(*payload.arguments(model, x))

    fast = torch.compile(model, backend=kforge.backend)   # a whole model: a kernel per dispatch, tuned once
"""

from .artifact import Artifact, ArtifactError, load
from .importer import ImporterError, Payload, import_module
from .tune import TuneError, TuneRun, tune
from . import distributed  # kforge.distributed.tune_many: many payloads on a Ray cluster (Ray imported on use)
from .model import Model, ModelError, Plan, TuningDatabase, compile_payload, partition
from .dynamo import backend, compile, make_backend

__all__ = ["Artifact", "ArtifactError", "load", "ImporterError", "Payload", "import_module", "TuneError", "TuneRun",
           "tune", "Model", "ModelError", "Plan", "TuningDatabase", "compile_payload", "partition", "backend",
           "compile", "make_backend"]
