"""kforge as a torch.compile backend, and kforge.compile for a module.

    model = torch.compile(model, backend=kforge.backend)          # defaults from KFORGE_* (below)
    model = torch.compile(model, backend=kforge.make_backend(db="~/.cache/kforge/db", tune_seconds=30))
    fast = kforge.compile(model, x, target="cpu")                  # without torch.compile: fast(x)

Each graph torch.compile captures is imported (torch-mlir), partitioned into kernels, and every kernel is
found in the tuning database or tuned (kforge.model.compile_payload). A graph kforge cannot take runs as
PyTorch would run it (eager), with the reason said once per graph; guards and recompiles are torch's own.

Defaults of ``kforge.backend``: KFORGE_DB (the tuning database; default ~/.cache/kforge/db),
KFORGE_TUNE_SECONDS (per kernel missing from the database; default 0: the heuristic's first correct kernel),
KFORGE_BUILD_DIR / tools on PATH, KFORGE_RUNTIME (kforge's GPU runtime, for CUDA tensors).
"""

import hashlib
import os
import sys
import tempfile
import warnings

from .importer import ImporterError, Payload, import_module
from .model import ModelError, compile_payload, partition
from .tune import TuneError
from .artifact import ArtifactError


class _Graph:
    """What torch.compile gets back for one graph: the kernels, called with the graph's tensor inputs."""

    def __init__(self, model, returns_tuple):
        self.model = model
        self.returns_tuple = returns_tuple

    def __call__(self, *inputs):
        outputs = self.model(*[x.contiguous() for x in inputs])
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        return outputs if self.returns_tuple else outputs[0]


def _target_of(tensors):
    import torch
    devices = {t.device.type for t in tensors if isinstance(t, torch.Tensor)}
    if devices == {"cuda"}:
        return "gpu"
    if devices <= {"cpu"}:
        return "cpu"
    raise ModelError(f"inputs on several kinds of device ({', '.join(sorted(devices))})")


def _chip_of(tensors):
    import torch
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.device.type == "cuda":
            major, minor = torch.cuda.get_device_capability(t.device)
            return f"sm_{major}{minor}"
    return None


def make_backend(*, db=None, tune_seconds=None, workdir=None, tools_dir=None, runtime=None, extra_args=(),
                 prepare_only=False):
    """A torch.compile backend with these settings (see the module's docstring for the defaults).

    Each graph's import and plan are kept in ``workdir`` under a key of the graph's code and its inputs'
    shapes and dtypes (not their device), and reused: ``prepare_only=True`` imports and partitions each graph
    there and runs it eagerly, so a machine without torch-mlir or kforge-opt (scripts/gpu/models.sh) can
    compile the same graphs from a carried ``workdir``."""
    db = db or os.environ.get("KFORGE_DB") or os.path.expanduser("~/.cache/kforge/db")
    if tune_seconds is None:
        tune_seconds = float(os.environ.get("KFORGE_TUNE_SECONDS", "0"))
    said = set()

    def backend(graph_module, example_inputs):
        import torch
        try:
            if any(not isinstance(x, torch.Tensor) for x in example_inputs):
                raise ModelError("the graph takes non-tensor inputs (symbolic sizes: use dynamic=False)")
            graph_text = graph_module.code
            key = hashlib.sha256((graph_text + repr([(tuple(x.shape), str(x.dtype)) for x in example_inputs]))
                                 .encode()).hexdigest()[:16]
            directory = os.path.join(workdir or os.path.join(tempfile.gettempdir(), "kforge-dynamo"), key)
            os.makedirs(directory, exist_ok=True)
            payload_path = os.path.join(directory, "graph.mlir")
            if os.path.exists(payload_path) and os.path.exists(os.path.join(directory, "graph.json")):
                payload = Payload.load(payload_path)
            else:
                with torch.no_grad():
                    payload = import_module(graph_module, *example_inputs, func_name="graph")
                payload.save(payload_path)
            # Dynamo's graphs take the module's weights as inputs (inlined nn.Modules): a graph module that
            # still owns parameters gets them appended as the payload's trailing arguments.
            weights = [a for a in payload.sidecar["arguments"] if a["kind"] != "input"]
            if prepare_only:
                partition(payload_path, os.path.join(directory, "plan"), tools_dir=tools_dir)
                backend.prepared.append(directory)
                return graph_module.forward
            target = _target_of(example_inputs)
            chip = _chip_of(example_inputs)
            model = compile_payload(payload_path, directory, target=target, chip=chip, db=db,
                                    tune_seconds=tune_seconds, tools_dir=tools_dir, runtime=runtime,
                                    extra_args=extra_args)
            backend.models.append(model)
            returns_tuple = _returns_tuple(graph_module)
            compiled = _Graph(model, returns_tuple)
            if weights:
                parameters = {**dict(graph_module.named_parameters()), **dict(graph_module.named_buffers())}
                fixed = [parameters[w["name"]].detach().contiguous() for w in weights]
                return lambda *inputs: compiled(*inputs, *fixed)
            return compiled
        except (ImporterError, ModelError, TuneError, ArtifactError) as error:
            reason = str(error).splitlines()[0]
            if reason not in said:
                said.add(reason)
                warnings.warn(f"kforge: running a graph eagerly: {reason}", stacklevel=2)
            backend.eager.append(reason)
            return graph_module.forward

    backend.models = []  # the kforge.Model of each graph compiled, in order (sources, plan)
    backend.eager = []   # the reason for each graph run eagerly
    backend.prepared = []  # prepare_only: the directory of each graph imported and partitioned
    return backend


def _returns_tuple(graph_module):
    for node in graph_module.graph.nodes:
        if node.op == "output":
            return isinstance(node.args[0], (tuple, list))
    return False


def backend(graph_module, example_inputs):
    """torch.compile(model, backend=kforge.backend): defaults from the environment (module docstring)."""
    global _default_backend
    if _default_backend is None:
        _default_backend = make_backend()
    return _default_backend(graph_module, example_inputs)


_default_backend = None


def compile(module, *example_inputs, directory=None, target=None, db=None, tune_seconds=0, tools_dir=None,
            runtime=None, extra_args=()):
    """``module``'s forward on inputs like ``example_inputs`` as kforge kernels (no torch.compile): returns a
    callable taking forward's inputs, that runs with the module's own weights (read at this call)."""
    target = target or _target_of(example_inputs)
    directory = directory or tempfile.mkdtemp(prefix="kforge-compile-")
    import torch
    with torch.no_grad():
        payload = import_module(module, *example_inputs)
    payload_path = os.path.join(directory, "model.mlir")
    payload.save(payload_path)
    model = compile_payload(payload_path, directory, target=target, chip=_chip_of(example_inputs),
                            db=db, tune_seconds=tune_seconds, tools_dir=tools_dir, runtime=runtime,
                            extra_args=extra_args)
    weights = payload.arguments(module, *example_inputs)[len(example_inputs):]

    def run(*inputs):
        return model(*[x.contiguous() for x in inputs], *weights)
    run.model = model
    return run
