"""PyTorch modules in: torch.export + torch-mlir to a linalg-on-tensors payload kforge compiles and tunes.

    import kforge
    payload = kforge.import_module(model, x)            # model's parameters and buffers become trailing arguments
    payload.save("runs/model.mlir")                      # runs/model.mlir + runs/model.json (the sidecar)
    # kforge-compile runs/model.mlir --target cpu -o art
    y = kforge.load("art")(*payload.arguments(model, x))  # the artifact called with the module's own tensors

Command line (KernelBench's format: ``class Model``, ``get_inputs()``, ``get_init_inputs()``), through
scripts/kforge-import or the ``kforge-import`` entry point ``pip install ./python`` makes:

    kforge-import MODULE.py -o payload.mlir [--class Model] [--dtype bf16] [--func-name NAME] [--eval]

Exit status: 0 written; 1 torch.export or torch-mlir cannot import the module (their reason is printed);
2 bad input (no such file, no Model class, no get_inputs, ...) or torch / torch-mlir missing.
torch and torch-mlir are pinned in python/requirements-import.txt (scripts/install-python-deps.sh).
"""

import argparse
import contextlib
import importlib.metadata
import importlib.util
import inspect
import io
import json
import os
import re
import sys
import tempfile

SIDECAR_FORMAT = "kforge-import/1"

# torch dtype name -> the element type names kforge's manifests use (MLIR's spelling).
_ELEMENT_TYPES = {
    "float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
    "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "ui8", "bool": "i1",
}
_DTYPE_ALIASES = {"f32": "float32", "fp32": "float32", "float": "float32", "f16": "float16", "fp16": "float16",
                  "half": "float16", "bf16": "bfloat16", "f64": "float64", "fp64": "float64", "double": "float64"}


class ImporterError(Exception):
    """torch.export or torch-mlir could not import a module (``reason`` is theirs), or a payload's
    arguments do not match what it was imported with."""

    def __init__(self, message, reason=None):
        super().__init__(message)
        self.reason = reason or message


def _element_type(dtype):
    name = str(dtype).replace("torch.", "")
    return _ELEMENT_TYPES.get(name, name)


def _torch_dtype(dtype):
    """A torch floating dtype from a torch.dtype or a name ("bf16", "float16", "torch.float32", ...)."""
    import torch
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    name = str(dtype).lower().replace("torch.", "")
    name = _DTYPE_ALIASES.get(name, name)
    value = getattr(torch, name, None)
    if not isinstance(value, torch.dtype) or not value.is_floating_point:
        raise ValueError(f"unknown floating-point dtype {dtype!r} (use f32, f16, bf16 or f64)")
    return value


def _require_torch_mlir():
    try:
        import torch  # noqa: F401
        from torch_mlir import fx  # noqa: F401
    except ImportError as error:
        raise ImportError(f"kforge's importer needs torch and torch-mlir ({error}); install them with "
                          "scripts/install-python-deps.sh (pinned in python/requirements-import.txt)") from None


def _versions():
    versions = {}
    for package in ("torch", "torch-mlir"):
        try:
            versions[package.replace("-", "_")] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package.replace("-", "_")] = None
    return versions


def _default_func_name(module):
    """The payload function's name: the module's class name in snake_case (Model -> model)."""
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", type(module).__name__).lower()
    name = re.sub(r"\W", "_", name)
    return name if name and not name[0].isdigit() else "module_" + name


def _input_names(module, count):
    """Names for forward's positional arguments, from its signature where it has them."""
    names = []
    try:
        for p in inspect.signature(module.forward).parameters.values():
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                names.append(p.name)
    except (TypeError, ValueError):
        pass
    return [names[i] if i < len(names) else f"input{i}" for i in range(count)]


def _first_lines(text, limit=6):
    """The head of a long exception message (torch.export's carry pages of advice) plus the user's line."""
    lines = [line for line in str(text).splitlines() if line.strip()]
    head = lines[:1]
    for i, line in enumerate(lines):  # torch.export names the forward line that failed
        if line.strip().startswith('File "') and i + 1 < len(lines):
            head += [line.strip(), "  " + lines[i + 1].strip()]
            break
    return "\n".join(head[:limit])


def _make_wrapper(module, names, input_count, written, baked=None):
    """forward(*inputs, *weights) -> module(*inputs) with the weights given: they become function arguments
    instead of constants baked into the IR. ``baked`` ({position: value}) are forward's non-tensor inputs: the
    wrapper takes the others only and passes these as constants (torch.export would otherwise make a float a
    scalar argument of the function). Weights the module writes in place (BatchNorm's running statistics
    in training mode) are copied first: the update becomes dead code rather than a mutated argument, which
    torch.export cannot decompose and torch-mlir would return as extra results."""
    import torch

    class WeightsAsArguments(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.module = module

        def forward(self, *args):
            given = input_count - len(baked or {})
            weights = {n: a.clone() if n in written else a for n, a in zip(names, args[given:])}
            for name in written - weights.keys():  # not an argument (never read): its update must stay dead
                weights[name] = self.module.get_buffer(name).clone()
            tensors = iter(args[:given])
            inputs = tuple((baked or {})[i] if i in (baked or {}) else next(tensors) for i in range(input_count))
            return torch.func.functional_call(self.module, weights, inputs)

    return WeightsAsArguments()


class Payload:
    """An imported module: ``mlir`` (linalg on tensors, one public function) and ``sidecar`` (a dict: the
    function's arguments in order with their names, kinds, shapes and dtypes; results; versions)."""

    def __init__(self, mlir, sidecar):
        self.mlir = mlir
        self.sidecar = sidecar

    @property
    def func_name(self):
        return self.sidecar["func_name"]

    @property
    def argument_names(self):
        """Names of the function's arguments in order: forward's inputs, then parameters, then buffers."""
        return [a["name"] for a in self.sidecar["arguments"]]

    @classmethod
    def load(cls, path):
        """Reads a payload that ``save`` (or kforge-import) wrote: PATH (.mlir) and its .json sidecar."""
        with open(path) as f:
            mlir = f.read()
        with open(_sidecar_path(path)) as f:
            sidecar = json.load(f)
        if sidecar.get("format") != SIDECAR_FORMAT:
            raise ImporterError(f"{_sidecar_path(path)} is not a {SIDECAR_FORMAT} sidecar")
        return cls(mlir, sidecar)

    def save(self, path):
        """Writes PATH (the MLIR) and PATH with .json for .mlir (the sidecar), each whole or not at all.
        Returns the sidecar's path."""
        sidecar_path = _sidecar_path(path)
        _write_whole(path, self.mlir)
        _write_whole(sidecar_path, json.dumps(self.sidecar, indent=2) + "\n")
        return sidecar_path

    def arguments(self, module, *inputs):
        """The payload function's arguments from ``module``'s own tensors and forward's inputs, in the
        payload's order: a flat list of contiguous tensors (cast to the dtype imported with), ready for
        ``kforge.load(dir)(*payload.arguments(module, x))``. Non-tensor inputs were baked in at import and
        are dropped here."""
        tensors = dict(module.named_parameters(remove_duplicate=False))
        tensors.update(module.named_buffers(remove_duplicate=False))
        baked = {b["position"] for b in self.sidecar["baked_inputs"]}
        given = [x for i, x in enumerate(inputs) if i not in baked]
        expected_inputs = [a for a in self.sidecar["arguments"] if a["kind"] == "input"]
        if len(given) != len(expected_inputs) or len(inputs) != self.sidecar["input_count"]:
            raise ImporterError(f"expected {self.sidecar['input_count']} inputs to forward, got {len(inputs)}")
        result = []
        for argument in self.sidecar["arguments"]:
            if argument["kind"] == "input":
                value = given.pop(0)
            elif argument["name"] in tensors:
                value = tensors[argument["name"]]
            else:
                raise ImporterError(f"module has no {argument['kind']} named {argument['name']!r}")
            if tuple(value.shape) != tuple(argument["shape"]):
                raise ImporterError(f"{argument['kind']} {argument['name']!r}: expected shape "
                                    f"{tuple(argument['shape'])}, got {tuple(value.shape)}")
            value = value.detach()
            if _element_type(value.dtype) != argument["dtype"]:
                value = value.to(_torch_dtype_of_element(argument["dtype"]))
            result.append(value.contiguous())
        return result


def _torch_dtype_of_element(element_type):
    import torch
    names = {v: k for k, v in _ELEMENT_TYPES.items()}
    return getattr(torch, names[element_type])


def _sidecar_path(path):
    base, extension = os.path.splitext(path)
    return (base if extension == ".mlir" else path) + ".json"


def _write_whole(path, text):
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".kforge-import-")
    try:
        with os.fdopen(handle, "w") as f:
            f.write(text)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _weight_nodes(program, names):
    """The placeholder node of each weight (the trailing user inputs), by name."""
    from torch.export.graph_signature import InputKind
    user = [s.arg.name for s in program.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]
    nodes = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    return {name: nodes[node_name] for name, node_name in zip(names, user[len(user) - len(names):])}


def _decomposition_table():
    """torch-mlir's decompositions (what export_and_import would run), plus PyTorch's own of the ops torch-mlir
    would otherwise lower in ways kforge cannot take. aten.native_group_norm: torch-mlir's lowering reshapes
    through a gather whose indices are constants the size of the tensor (8 int64 tensors of 8192 x 4096, 4 GB
    of payload text, for a GroupNorm after a 4096-wide Linear); PyTorch's decomposition reshapes with views
    and reduces with var_mean, which torch-mlir lowers to linalg reductions and reshapes."""
    import torch
    from torch._decomp import decomposition_table as torch_decompositions
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table
    table = dict(get_decomposition_table())
    for op in (torch.ops.aten.native_group_norm.default,):
        if op in torch_decompositions:
            table[op] = torch_decompositions[op]
    return table


def _views_for_contiguous_as_strided(program):
    """Rewrites, in the exported graph, each aten.as_strided that reads a contiguous tensor whole, in order
    (offset 0, as many elements, the contiguous strides of its new shape), as the aten.view it is.
    PyTorch's GroupNorm decomposition ends that way; torch-mlir lowers as_strided to a gather whose indices are
    constants as large as the tensor (4 GB of payload text after a 4096-wide Linear), a view to a reshape."""
    import math
    import torch
    graph = program.graph_module.graph
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target != torch.ops.aten.as_strided.default:
            continue
        source, size, stride = node.args[0], list(node.args[1]), list(node.args[2])
        offset = node.args[3] if len(node.args) > 3 else node.kwargs.get("storage_offset", 0)
        value = source.meta.get("val") if hasattr(source, "meta") else None
        if value is None or offset not in (0, None) or not value.is_contiguous():
            continue
        contiguous = [math.prod(size[i + 1:]) for i in range(len(size))]
        if math.prod(size) != value.numel() or any(s != c for s, c, n in zip(stride, contiguous, size) if n > 1):
            continue
        with graph.inserting_before(node):
            view = graph.call_function(torch.ops.aten.view.default, (source, size))
        view.meta = dict(node.meta)
        node.replace_all_uses_with(view)
        graph.erase_node(node)
        changed = True
    if changed:
        program.graph_module.recompile()


def _written_buffers(module, example_inputs, decompositions):
    """Buffers the module's forward updates (BatchNorm's running statistics and counter in training mode),
    from an export of the module itself: with its buffers as module state, torch.export records the updates
    (graph_signature.buffers_to_mutate), which a composite op such as aten.batch_norm hides from its schema."""
    import torch
    if not any(True for _ in module.buffers()):
        return set()
    try:
        program = torch.export.export(module, tuple(example_inputs), strict=False).run_decompositions(decompositions)
    except Exception:  # the import itself reports why the module cannot be traced
        return set()
    return set(program.graph_signature.buffers_to_mutate.values())


def _lower(program, func_name):
    """torch-mlir's FX import and its linalg-on-tensors pipeline, with MLIR's diagnostics collected (they
    are printed to the process's stderr otherwise, and missing from torch-mlir's exception)."""
    from torch_mlir import ir
    from torch_mlir.extras.fx_importer import FxImporter
    from torch_mlir.fx import export_and_import
    from torch_mlir.dialects import torch as torch_dialect

    context = ir.Context()
    torch_dialect.register_dialect(context)
    diagnostics = []

    def collect(diagnostic):
        if diagnostic.severity == ir.DiagnosticSeverity.ERROR:
            diagnostics.append(f"{diagnostic.location}: {diagnostic.message}")
        return True

    handler = context.attach_diagnostic_handler(collect)
    try:
        module = export_and_import(program, output_type="linalg-on-tensors", func_name=func_name,
                                   fx_importer=FxImporter(context=context), decomposition_table={})
        return str(module)
    except Exception as error:  # torch-mlir raises TorchMlirCompilerError, or anything from its importer
        reason = "\n".join(diagnostics) or _first_lines(error)
        raise ImporterError(f"torch-mlir cannot lower the module to linalg: {reason}", reason) from None
    finally:
        handler.detach()


def import_module(module, *example_inputs, dtype=None, func_name=None):
    """Imports ``module`` called on ``example_inputs`` into a linalg-on-tensors payload (torch.export, then
    torch-mlir), with its parameters and buffers as trailing function arguments (those the graph reads, in
    named_parameters then named_buffers order). ``dtype`` (e.g. torch.bfloat16 or "bf16") converts the
    module (a copy) and floating inputs first. Raises ImporterError with torch's or torch-mlir's reason when
    the module cannot be imported."""
    _require_torch_mlir()
    import copy
    import torch

    dtype = _torch_dtype(dtype)
    if dtype is not None:
        module = copy.deepcopy(module).to(dtype)
        example_inputs = tuple(x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                               for x in example_inputs)
    func_name = func_name or _default_func_name(module)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", func_name):
        raise ValueError(f"func_name {func_name!r} is not a valid MLIR symbol name")

    input_names = _input_names(module, len(example_inputs))
    tensor_inputs = [i for i, x in enumerate(example_inputs) if isinstance(x, torch.Tensor)]
    baked = [{"position": i, "value": repr(x)} for i, x in enumerate(example_inputs) if not isinstance(x, torch.Tensor)]
    parameters = dict(module.named_parameters())
    buffers = dict(module.named_buffers())
    weights = {**parameters, **buffers}

    table = _decomposition_table()

    def export(names, written):
        constants = {i: x for i, x in enumerate(example_inputs) if not isinstance(x, torch.Tensor)}
        wrapper = _make_wrapper(module, names, len(example_inputs), written, constants)
        try:
            tensors = tuple(x for x in example_inputs if isinstance(x, torch.Tensor))
            return torch.export.export(wrapper, tensors + tuple(weights[n] for n in names), strict=False)
        except Exception as error:  # torch.export's errors have no common base class
            reason = _first_lines(error)
            raise ImporterError(f"torch.export cannot trace the module: {reason}", reason) from None

    def decompose(program):
        """torch-mlir's decompositions (what export_and_import would run), which also drop dead code."""
        try:
            return program.run_decompositions(table)
        except Exception as error:
            reason = _first_lines(error)
            raise ImporterError(f"torch.export cannot decompose the module: {reason}", reason) from None

    names = list(weights)
    written = _written_buffers(module, example_inputs, table) & set(buffers)
    program = decompose(export(names, written))
    # Weights the graph never reads get no argument: BatchNorm's num_batches_tracked in eval mode, its
    # running statistics in training mode (their update is dead once copied).
    unused = {name for name, node in _weight_nodes(program, names).items() if not node.users}
    if unused:
        names = [n for n in names if n not in unused]
        program = decompose(export(names, written))

    _views_for_contiguous_as_strided(program)
    mlir = _lower(program, func_name)
    foreign = sorted(set(re.findall(r"\btm_tensor\.(?!yield\b)(\w+)", mlir)))
    if foreign:
        reason = (f"torch-mlir lowered part of the module to its own TMTensor dialect "
                  f"({', '.join('tm_tensor.' + op for op in foreign)}), which upstream MLIR cannot parse")
        raise ImporterError(f"torch-mlir cannot lower the module to linalg: {reason}", reason)

    def describe(value):
        return {"shape": list(value.shape), "dtype": _element_type(value.dtype)}

    arguments = [{"name": input_names[i], "kind": "input", **describe(example_inputs[i])} for i in tensor_inputs]
    arguments += [{"name": n, "kind": "parameter" if n in parameters else "buffer", **describe(weights[n])}
                  for n in names]
    output_node = next(n for n in program.graph.nodes if n.op == "output")
    results = [describe(v.meta["val"]) for v in output_node.args[0] if hasattr(v, "meta") and "val" in v.meta]
    sidecar = {
        "format": SIDECAR_FORMAT,
        "module": type(module).__qualname__,
        "func_name": func_name,
        "dtype": _element_type(dtype) if dtype is not None else None,
        "input_count": len(example_inputs),
        "baked_inputs": baked,
        "arguments": arguments,
        "results": results,
        "versions": _versions(),
    }
    return Payload(mlir, sidecar)


# Command line ------------------------------------------------------------------------------------------------

class _BadInput(Exception):
    pass


def _load_kernelbench_file(path, class_name):
    if not os.path.isfile(path):
        raise _BadInput(f"no such file: {path}")
    name = "_kforge_import_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise _BadInput(f"{path} is not a Python file")
    source = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(source)
    except Exception as error:
        raise _BadInput(f"{path} failed to load: {type(error).__name__}: {error}") from None
    finally:
        sys.path.pop(0)
    model_class = getattr(source, class_name, None)
    if not isinstance(model_class, type):
        raise _BadInput(f"{path} has no class {class_name} (use --class NAME for another)")
    if not callable(getattr(source, "get_inputs", None)):
        raise _BadInput(f"{path} has no get_inputs() (KernelBench's format: the example inputs to forward)")
    get_init_inputs = getattr(source, "get_init_inputs", lambda: [])
    try:
        init_inputs = list(get_init_inputs())
        model = model_class(*init_inputs)
        inputs = list(source.get_inputs())
    except Exception as error:
        raise _BadInput(f"{path}: building {class_name} or its inputs failed: {type(error).__name__}: {error}") \
            from None
    import torch
    if not isinstance(model, torch.nn.Module):
        raise _BadInput(f"{path}: {class_name} is not a torch.nn.Module")
    return model, inputs


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="kforge-import", description="Import a KernelBench-format PyTorch module (class Model, get_inputs(), "
        "get_init_inputs()) into a linalg-on-tensors payload plus a JSON sidecar naming its arguments.")
    parser.add_argument("module_file", metavar="MODULE.py")
    parser.add_argument("-o", "--output", required=True, metavar="PAYLOAD.mlir",
                        help="the payload; the sidecar goes beside it with .json")
    parser.add_argument("--class", dest="class_name", default="Model", help="the nn.Module class (default Model)")
    parser.add_argument("--dtype", help="convert the module and floating inputs first (f32, f16, bf16, f64)")
    parser.add_argument("--func-name", help="the payload function's name (default: the file's name)")
    parser.add_argument("--eval", action="store_true", help="put the module in eval mode (BatchNorm, Dropout)")
    args = parser.parse_args(argv)

    def fail(status, message):
        print(f"kforge-import: error: {message}", file=sys.stderr)
        return status

    if not os.path.isfile(args.module_file):  # before importing torch (seconds)
        return fail(2, f"no such file: {args.module_file}")
    try:
        _require_torch_mlir()
    except ImportError as error:
        return fail(2, str(error))
    try:
        dtype = _torch_dtype(args.dtype)
    except ValueError as error:
        return fail(2, str(error))
    func_name = args.func_name or re.sub(r"\W", "_", os.path.splitext(os.path.basename(args.module_file))[0])
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", func_name):
        func_name = "module_" + func_name
    try:
        model, inputs = _load_kernelbench_file(args.module_file, args.class_name)
    except _BadInput as error:
        return fail(2, str(error))
    if args.eval:
        model.eval()
    try:
        # torch.export logs partial graphs when a trace fails: they would bury the reason, printed below.
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            payload = import_module(model, *inputs, dtype=dtype, func_name=func_name)
    except ImporterError as error:
        return fail(1, f"{args.module_file}: {error}")
    except ValueError as error:
        return fail(2, str(error))
    payload.sidecar["source"] = args.module_file
    sidecar_path = payload.save(args.output)
    kinds = [a["kind"] for a in payload.sidecar["arguments"]]
    print(f"kforge-import: wrote {args.output} (@{func_name}: {kinds.count('input')} inputs, "
          f"{kinds.count('parameter')} parameters, {kinds.count('buffer')} buffers) and {sidecar_path}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
