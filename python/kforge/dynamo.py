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

    def compile_graph(graph_module, example_inputs):
        """The graph as kforge kernels (a callable), or raises with the reason it cannot be."""
        import torch
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
        # PyTorch's own switch decides, as it does for its kernels: TF32 only where the user allowed it.
        tf32 = target == "gpu" and bool(torch.backends.cuda.matmul.allow_tf32)
        model = compile_payload(payload_path, directory, target=target, chip=chip, db=db,
                                tune_seconds=tune_seconds, tools_dir=tools_dir, runtime=runtime,
                                extra_args=extra_args, allow_tf32=tf32)
        backend.models.append(model)
        compiled = _Graph(model, _returns_tuple(graph_module))
        if weights:
            parameters = {**dict(graph_module.named_parameters()), **dict(graph_module.named_buffers())}
            fixed = [parameters[w["name"]].detach().contiguous() for w in weights]
            return lambda *inputs: compiled(*inputs, *fixed)
        return compiled

    def say(reason):
        if reason not in said:
            said.add(reason)
            warnings.warn(f"kforge: {reason}", stacklevel=3)

    def backend(graph_module, example_inputs):
        try:
            return compile_graph(graph_module, example_inputs)
        except ImporterError as error:
            # Some op torch-mlir cannot lower: find which (each op alone), run those eagerly and the rest of
            # the graph, in the pieces between them, as kforge kernels.
            unsupported = _unsupported_ops(graph_module)
            if unsupported and not prepare_only:
                for op in sorted(unsupported):
                    say(f"running {op} eagerly: torch-mlir cannot lower it to linalg")
                    backend.eager.append(op)
                return _split_around(graph_module, unsupported, compile_graph, say)
            reason = str(error).splitlines()[0]
        except (ModelError, TuneError, ArtifactError) as error:
            reason = str(error).splitlines()[0]
        say(f"running a graph eagerly: {reason}")
        backend.eager.append(reason)
        return graph_module.forward

    backend.models = []  # the kforge.Model of each graph compiled, in order (sources, plan)
    backend.eager = []   # the reason for each graph run eagerly, or each op run eagerly in a split graph
    backend.prepared = []  # prepare_only: the directory of each graph imported and partitioned
    return backend


_OP_SUPPORT = {}  # op name -> whether torch-mlir lowers it alone (a process-wide cache: imports take seconds)


def _op_name(node):
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    return getattr(node.target, "__name__", str(node.target))


def _real_like(value):
    """A real tensor with ``value``'s shape and dtype (Dynamo's example values are fake)."""
    import torch
    if value.dtype.is_floating_point:
        return torch.randn(tuple(value.shape), dtype=value.dtype)
    return torch.zeros(tuple(value.shape), dtype=value.dtype)


def _node_alone(node):
    """A graph module computing ``node`` alone from placeholders for its tensor operands, and example inputs."""
    import torch
    import torch.fx
    graph = torch.fx.Graph()
    inputs, mapping = [], {}
    for argument in node.all_input_nodes:
        value = argument.meta.get("example_value")
        if not isinstance(value, torch.Tensor):
            return None, None
        mapping[argument] = graph.placeholder(f"input_{len(inputs)}")
        inputs.append(_real_like(value))
    graph.output(graph.node_copy(node, lambda n: mapping[n]))
    return torch.fx.GraphModule(torch.nn.Module(), graph), inputs


def _unsupported_ops(graph_module):
    """The ops of the graph that torch-mlir cannot import, each tried alone (cached by op name)."""
    from .importer import import_module as importer
    unsupported = set()
    for node in graph_module.graph.nodes:
        if node.op not in ("call_function", "call_method"):
            continue
        name = _op_name(node)
        if name not in _OP_SUPPORT:
            alone, inputs = _node_alone(node)
            if alone is None:
                continue
            try:
                importer(alone, *inputs, func_name="op")
                _OP_SUPPORT[name] = True
            except ImporterError:
                _OP_SUPPORT[name] = False
            except Exception:  # an op that cannot stand alone (a getitem of a tuple): judged with the rest
                continue
        if not _OP_SUPPORT[name]:
            unsupported.add(name)
    return unsupported


def _split_around(graph_module, unsupported, compile_graph, say):
    """The graph with the ops in ``unsupported`` left to PyTorch and every maximal piece between them compiled
    by ``compile_graph`` (a piece kforge cannot take runs eagerly too, said once)."""
    import torch
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.operator_support import OperatorSupportBase

    class Support(OperatorSupportBase):
        def is_node_supported(self, submodules, node):
            return node.op in ("call_function", "call_method") and _op_name(node) not in unsupported

    split = CapabilityBasedPartitioner(graph_module, Support(), allows_single_node_partition=True) \
        .partition_and_fuse()
    for node in list(split.graph.nodes):
        if node.op != "call_module" or not node.target.startswith("fused_"):
            continue
        piece = getattr(split, node.target)
        values = [argument.meta.get("example_value") for argument in node.all_input_nodes]
        if not all(isinstance(v, torch.Tensor) for v in values):
            continue
        device = values[0].device if values else torch.device("cpu")
        inputs = [_real_like(v).to(device) for v in values]
        try:
            compiled = compile_graph(piece, inputs)
        except (ImporterError, ModelError, TuneError, ArtifactError) as error:
            say(f"running a piece of a graph eagerly: {str(error).splitlines()[0]}")
            continue
        # The piece's submodule returns what its graph returns; the compiled kernels return the same.
        graph_returns_tuple = _returns_tuple(piece)

        def run(*args, compiled=compiled, as_tuple=graph_returns_tuple):
            outputs = compiled(*args)
            if as_tuple and not isinstance(outputs, tuple):
                outputs = (outputs,)
            return outputs
        with split.graph.inserting_before(node):
            replacement = split.graph.call_function(run, tuple(node.args), dict(node.kwargs))
        node.replace_all_uses_with(replacement)
        split.graph.erase_node(node)
        delattr(split, node.target)
    split.graph.lint()
    split.recompile()
    return split.forward


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
    tensor_inputs = sum(a["kind"] == "input" for a in payload.sidecar["arguments"])
    weights = payload.arguments(module, *example_inputs)[tensor_inputs:]
    baked = {b["position"]: b["value"] for b in payload.sidecar["baked_inputs"]}

    def run(*inputs):
        if len(inputs) != len(example_inputs):
            raise ModelError(f"expected {len(example_inputs)} inputs to forward, got {len(inputs)}")
        for position, value in baked.items():  # non-tensor inputs are constants of the compiled kernels
            if repr(inputs[position]) != value:
                raise ModelError(f"forward's input {position} was compiled as {value}, got {inputs[position]!r}: "
                                 "compile again for another value")
        tensors = [x.contiguous() for i, x in enumerate(inputs) if i not in baked]
        return model(*tensors, *weights)
    run.model = model
    return run
