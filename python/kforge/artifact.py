"""Loading an artifact (kforge-compile output: <name>.so + <name>.json) and calling its C entry point."""

import ctypes
import json
import os

_MANIFEST_FORMAT = "kforge-artifact/1"
# Integer and boolean arguments too: an argmax's indices (i64), class targets, masks (i1).
_INTEGER_DTYPES = {"i64": "int64", "i32": "int32", "i16": "int16", "i8": "int8", "ui8": "uint8", "i1": "bool"}
_NUMPY_DTYPES = {"f32": "float32", "f16": "float16", "f64": "float64", **_INTEGER_DTYPES}
_TORCH_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64", **_INTEGER_DTYPES}
_runtime_loaded = None
_set_stream = None  # the runtime's kforgeRuntimeSetStream, once a runtime is loaded


class ArtifactError(Exception):
    """A problem with an artifact or with the arguments it was called with."""


def _descriptor_type(rank):
    """The memref descriptor {allocated, aligned, offset, sizes[rank], strides[rank]} of the C ABI."""
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": [
        ("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64),
        ("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]})


def _load_runtime(path):
    global _runtime_loaded, _set_stream
    path = path or os.environ.get("KFORGE_RUNTIME")
    if not path:
        raise ArtifactError("a GPU artifact needs kforge's runtime: pass runtime=... or set KFORGE_RUNTIME")
    if _runtime_loaded and os.path.realpath(path) != _runtime_loaded:
        raise ArtifactError(f"runtime {_runtime_loaded} is already loaded; cannot load {path} too")
    if not _runtime_loaded:
        if not os.path.exists(path):
            raise ArtifactError(f"runtime not found: {path}")
        runtime = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)  # kernel libraries resolve mgpu* from the global scope
        _runtime_loaded = os.path.realpath(path)
        # Launches on the caller's stream (PyTorch's current one), asynchronously like PyTorch's own kernels;
        # a runtime without it (built before) waits for each call on a stream of its own.
        _set_stream = getattr(runtime, "kforgeRuntimeSetStream", None)
        if _set_stream is not None:
            _set_stream.argtypes, _set_stream.restype = [ctypes.c_void_p], None


def _caller_stream(buffers):
    """PyTorch's current stream on the buffers' device (its handle; the legacy default stream is 0), or None when
    the runtime cannot launch on a caller's stream."""
    if _set_stream is None or not buffers or buffers[0].library != "torch":
        return None
    import torch
    return torch.cuda.current_stream(buffers[0].value.device).cuda_stream


class _Buffer:
    """What the entry point needs of one argument: its data pointer, shape and element type."""

    def __init__(self, value):
        module = type(value).__module__.split(".")[0]
        if module == "numpy":
            if not value.flags["C_CONTIGUOUS"]:
                raise ArtifactError("NumPy arrays must be C-contiguous")
            self.library, self.device = "numpy", "cpu"
            self.pointer = value.ctypes.data
            self.dtype = str(value.dtype)
            self.nbytes = value.nbytes
        elif module == "torch":
            if not value.is_contiguous():
                raise ArtifactError("tensors must be contiguous")
            self.library, self.device = "torch", value.device.type
            self.pointer = value.data_ptr()
            self.dtype = str(value.dtype).replace("torch.", "")
            self.nbytes = value.numel() * value.element_size()
        else:
            raise ArtifactError(f"expected a NumPy array or a PyTorch tensor, got {type(value).__name__}")
        self.shape = tuple(value.shape)
        self.value = value


def check_alignment(buffer, index, alignment):
    """GPU kernels are compiled assuming every buffer is aligned to ``alignment`` bytes (128-bit accesses);
    a view that starts elsewhere (e.g. a slice at an odd element) would fault or read the wrong data."""
    if alignment > 1 and buffer.pointer % alignment:
        raise ArtifactError(f"argument {index}: its data is not {alignment}-byte aligned (address "
                            f"{buffer.pointer:#x}); kforge's GPU kernels require it: pass a copy (.clone())")


def check_distinct_outputs(buffers, roles):
    """kforge's kernels take each output in a buffer of its own: a block may read input another block has
    already overwritten, and with read_only_inputs inputs are read through the non-coherent cache. An output
    that overlaps any other argument (an in-place call) is refused; inputs may share memory with each other."""
    for o, (out, role) in enumerate(zip(buffers, roles)):
        if role != "output" or not out.nbytes:
            continue
        for j, other in enumerate(buffers):
            if j != o and other.nbytes and out.pointer < other.pointer + other.nbytes and \
                    other.pointer < out.pointer + out.nbytes:
                raise ArtifactError(f"argument {o} (an output) overlaps argument {j}: kforge's kernels write each "
                                    "output to a buffer of its own; pass a separate output")


class Artifact:
    """A loaded artifact: call it with the inputs (outputs are allocated and returned) or with all arguments."""

    def __init__(self, directory, name="kernel", runtime=None):
        manifest_path = os.path.join(directory, name + ".json")
        try:
            with open(manifest_path) as f:
                self.manifest = json.load(f)
        except FileNotFoundError:
            raise ArtifactError(f"no artifact manifest at {manifest_path}") from None
        except json.JSONDecodeError as error:
            raise ArtifactError(f"{manifest_path} is not valid JSON: {error}") from None
        if self.manifest.get("format") != _MANIFEST_FORMAT:
            raise ArtifactError(f"{manifest_path} is not a {_MANIFEST_FORMAT} manifest")
        self.target = self.manifest["target"]["kind"]
        self.arguments = self.manifest["arguments"]
        self.inputs = [a for a in self.arguments if a["role"] == "input"]
        self.outputs = [a for a in self.arguments if a["role"] == "output"]
        if self.target == "gpu":
            _load_runtime(runtime)
        library = os.path.join(directory, self.manifest["library"])
        try:
            self._library = ctypes.CDLL(library)
            self._entry = getattr(self._library, self.manifest["entry"])
        except (OSError, AttributeError) as error:
            raise ArtifactError(f"cannot load {library}: {error}") from None
        self._entry.restype = None
        self.alignment = int(self.manifest["target"].get("argument_alignment", 1))
        self._descriptor_types = [_descriptor_type(len(a["shape"])) for a in self.arguments]

    def _allocate_outputs(self, like):
        if like.library == "numpy":
            import numpy
            return [numpy.empty(a["shape"], dtype=_NUMPY_DTYPES[a["dtype"]]) for a in self.outputs]
        import torch
        device = like.value.device
        return [torch.empty(a["shape"], dtype=getattr(torch, _TORCH_DTYPES[a["dtype"]]), device=device)
                for a in self.outputs]

    def bind(self, *values):
        """Checks all arguments (inputs then outputs) once and returns a callable that runs the kernel on them
        with no further Python work: for timing loops. The arrays must stay alive while it is used. A GPU kernel
        launches on the PyTorch stream current at bind time and returns without waiting for the GPU (as
        PyTorch's own kernels do); a call with the arguments (``artifact(x, ...)``) uses the stream current then."""
        if len(values) != len(self.arguments):
            raise ArtifactError(f"bind takes all {len(self.arguments)} arguments, got {len(values)}")
        return self._bind([_Buffer(v) for v in values])

    def _bind(self, buffers):
        wanted_device = "cuda" if self.target == "gpu" else "cpu"
        descriptors = []
        for index, (argument, buffer) in enumerate(zip(self.arguments, buffers)):
            names = _TORCH_DTYPES if buffer.library == "torch" else _NUMPY_DTYPES
            if tuple(argument["shape"]) != buffer.shape:
                raise ArtifactError(f"argument {index}: expected shape {tuple(argument['shape'])}, got {buffer.shape}")
            if names.get(argument["dtype"]) != buffer.dtype:
                raise ArtifactError(f"argument {index}: expected {argument['dtype']}, got {buffer.dtype}")
            check_alignment(buffer, index, self.alignment)
            if buffer.device != wanted_device:
                raise ArtifactError(f"argument {index}: a {self.target} artifact takes {wanted_device} data, "
                                    f"got {buffer.device}")
            shape = argument["shape"]
            strides = [1] * len(shape)
            for d in range(len(shape) - 2, -1, -1):
                strides[d] = strides[d + 1] * shape[d + 1]
            rank = len(shape)
            descriptors.append(self._descriptor_types[index](
                buffer.pointer, buffer.pointer, 0, (ctypes.c_int64 * rank)(*shape),
                (ctypes.c_int64 * rank)(*strides)))
        check_distinct_outputs(buffers, [a["role"] for a in self.arguments])
        pointers = [ctypes.byref(d) for d in descriptors]
        entry = self._entry
        stream = _caller_stream(buffers) if self.target == "gpu" else None

        def call():
            if stream is not None:
                _set_stream(stream)
            entry(*pointers)
        call.keepalive = (descriptors, buffers)
        return call

    def __call__(self, *values):
        if len(values) not in (len(self.inputs), len(self.arguments)):
            raise ArtifactError(f"expected {len(self.inputs)} inputs or all {len(self.arguments)} arguments, "
                                f"got {len(values)}")
        buffers = [_Buffer(v) for v in values]
        returned = None
        if len(values) == len(self.inputs):
            returned = self._allocate_outputs(buffers[0])
            buffers += [_Buffer(v) for v in returned]
        self._bind(buffers)()
        if returned is None:
            return None
        return returned[0] if len(returned) == 1 else tuple(returned)


def load(directory, name="kernel", runtime=None):
    """Loads the artifact kforge-compile wrote to ``directory`` (files ``<name>.so`` and ``<name>.json``)."""
    return Artifact(directory, name, runtime)
