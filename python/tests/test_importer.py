"""kforge.import_module and kforge-import: PyTorch modules to linalg payloads (torch.export + torch-mlir).

Needs torch and torch-mlir (python/requirements-import.txt, installed into build/venv by scripts/test.sh);
skipped without them. Run by test/Python/importer.test."""

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")

import kforge  # noqa: E402
from conftest import BUILD, ROOT  # noqa: E402

nn = torch.nn
KFORGE_OPT = os.path.join(BUILD, "bin", "kforge-opt")
KFORGE_COMPILE = os.path.join(BUILD, "bin", "kforge-compile")


class LinearGeluSoftmax(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(32, 16)

    def forward(self, x):
        return torch.softmax(nn.functional.gelu(self.linear(x)), dim=-1)


class BmmTransposed(nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b.transpose(1, 2))


# (module, example inputs): the forms issue 26 saw the importer emit (transposed weights, broadcasts,
# keepdim reductions, f64 statistics, convolutions). Kept small: this is a parse test.
MODULES = {
    "linear": lambda: (nn.Linear(32, 16), torch.randn(8, 32)),
    "layer_norm": lambda: (nn.LayerNorm([4, 8, 8]), torch.randn(2, 4, 8, 8)),
    "linear_gelu_softmax": lambda: (LinearGeluSoftmax(), torch.randn(8, 32)),
    "conv2d_nchw": lambda: (nn.Conv2d(3, 8, kernel_size=3, padding=1), torch.randn(2, 3, 16, 16)),
    "bmm_transposed": lambda: (BmmTransposed(), torch.randn(4, 8, 16), torch.randn(4, 12, 16)),
}


def function_argument_types(mlir, name):
    """The tensor types of @name's arguments, from the text."""
    signature = re.search(r"func\.func @" + re.escape(name) + r"\((.*?)\) ->", mlir).group(1)
    return re.findall(r"%\w+: (tensor<[^>]*>)", signature)


def tensor_type(argument):
    return "tensor<" + "".join(f"{d}x" for d in argument["shape"]) + argument["dtype"] + ">"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imported_ir_parses_with_kforge_opt(name, tmp_path):
    """torch-mlir bundles its own (newer) MLIR; its text must still parse with Debian's MLIR 22."""
    module, *inputs = MODULES[name]()
    payload = kforge.import_module(module, *inputs, func_name=name)
    path = tmp_path / f"{name}.mlir"
    payload.save(str(path))
    result = subprocess.run([KFORGE_OPT, str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert f"func.func @{name}(" in result.stdout
    types = function_argument_types(payload.mlir, name)
    assert types == [tensor_type(a) for a in payload.sidecar["arguments"]]


class Net(nn.Module):
    """Nested parameters and buffers, one buffer registered by hand, one the graph never reads."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 6)
        self.norm = nn.BatchNorm1d(6)
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(6, 4, bias=False))
        self.register_buffer("scale", torch.full((4,), 0.5))

    def forward(self, x, y):
        return self.head(self.norm(self.fc(x))) * self.scale + y


def test_sidecar_names_parameters_then_buffers_in_argument_order(tmp_path):
    net = Net().eval()
    x, y = torch.randn(3, 8), torch.randn(3, 4)
    payload = kforge.import_module(net, x, y)
    arguments = payload.sidecar["arguments"]
    assert [(a["name"], a["kind"]) for a in arguments] == [
        ("x", "input"), ("y", "input"),
        ("fc.weight", "parameter"), ("fc.bias", "parameter"), ("norm.weight", "parameter"),
        ("norm.bias", "parameter"), ("head.1.weight", "parameter"),
        ("scale", "buffer"), ("norm.running_mean", "buffer"), ("norm.running_var", "buffer")]  # named_buffers' order
    assert "norm.num_batches_tracked" not in payload.argument_names  # unread in eval mode: no argument
    assert arguments[2]["shape"] == [6, 8] and arguments[2]["dtype"] == "f32"
    assert payload.sidecar["results"] == [{"shape": [3, 4], "dtype": "f32"}]
    assert payload.func_name == "net"
    assert function_argument_types(payload.mlir, "net") == [tensor_type(a) for a in arguments]
    versions = payload.sidecar["versions"]
    assert versions["torch"] == torch.__version__.split("+")[0] and versions["torch_mlir"]

    sidecar_path = payload.save(str(tmp_path / "net.mlir"))
    assert sidecar_path == str(tmp_path / "net.json")
    assert json.load(open(sidecar_path)) == payload.sidecar
    loaded = kforge.Payload.load(str(tmp_path / "net.mlir"))
    assert loaded.mlir == payload.mlir and loaded.argument_names == payload.argument_names


def test_arguments_are_the_modules_own_tensors_in_payload_order():
    net = Net().eval()
    x, y = torch.randn(3, 8), torch.randn(3, 4)
    payload = kforge.import_module(net, x, y)
    arguments = payload.arguments(net, x, y)
    own = {**dict(net.named_parameters()), **dict(net.named_buffers())}
    expected = [x, y] + [own[name] for name in payload.argument_names[2:]]
    assert len(arguments) == len(expected)
    for got, want in zip(arguments, expected):
        assert got.data_ptr() == want.data_ptr() and not got.requires_grad  # the same storage, detached

    with pytest.raises(kforge.ImporterError, match="expected 2 inputs to forward, got 1"):
        payload.arguments(net, x)
    with pytest.raises(kforge.ImporterError, match=r"input 'x': expected shape \(3, 8\), got \(4, 8\)"):
        payload.arguments(net, torch.randn(4, 8), y)
    with pytest.raises(kforge.ImporterError, match="module has no parameter named 'fc.weight'"):
        payload.arguments(nn.Linear(8, 4), x, y)


def test_dtype_converts_a_copy_and_arguments_cast_to_it():
    linear = nn.Linear(16, 8)
    x = torch.randn(4, 16)
    payload = kforge.import_module(linear, x, dtype="bf16")
    assert linear.weight.dtype == torch.float32  # the caller's module is untouched
    assert {a["dtype"] for a in payload.sidecar["arguments"]} == {"bf16"}
    assert "tensor<8x16xbf16>" in payload.mlir
    arguments = payload.arguments(linear, x)
    assert [a.dtype for a in arguments] == [torch.bfloat16] * 3
    assert torch.equal(arguments[1], linear.weight.detach().to(torch.bfloat16))


def test_non_tensor_inputs_are_baked_in():
    class Scaled(nn.Module):
        def forward(self, x, factor):
            return x * factor

    x = torch.randn(4, 4)
    payload = kforge.import_module(Scaled(), x, 3.0)
    assert payload.argument_names == ["x"]
    assert payload.sidecar["baked_inputs"] == [{"position": 1, "value": "3.0"}]
    assert len(payload.arguments(Scaled(), x, 3.0)) == 1
    # ... and the function takes the tensor only (torch.export alone made the float an f64 argument)
    signature = re.search(r"func\.func @\w+\(([^)]*)\)", payload.mlir).group(1)
    assert signature == "%arg0: tensor<4x4xf32>", signature


class DataDependent(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x


class CumSum(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=1)


class ComplexAbs(nn.Module):
    def forward(self, x):
        return torch.fft.rfft(x).abs()


@pytest.mark.parametrize("module, reason", [
    (DataDependent(), r"torch\.export cannot trace the module: Could not guard on data-dependent expression"),
    (CumSum(), r"own TMTensor dialect \(tm_tensor\.scan\)"),
    (ComplexAbs(), r"'math\.absf' op operand #0 must be floating-point-like, but got 'complex<f32>'"),
])
def test_modules_torch_mlir_cannot_import_raise_its_reason(module, reason):
    with pytest.raises(kforge.ImporterError, match=reason):
        kforge.import_module(module, torch.randn(4, 4))


# kforge-import -----------------------------------------------------------------------------------------------

KERNELBENCH_FILE = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, features, outputs):
        super().__init__()
        self.linear = nn.Linear(features, outputs)

    def forward(self, x):
        return torch.relu(self.linear(x))

def get_inputs():
    return [torch.randn(4, 16)]

def get_init_inputs():
    return [16, 8]
"""


def kforge_import(*args):
    environment = dict(os.environ, KFORGE_BUILD_DIR=BUILD)
    return subprocess.run([os.path.join(ROOT, "scripts", "kforge-import"), *map(str, args)], capture_output=True,
                          text=True, env=environment)


def write(directory, name, text):
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return path


def test_cli_writes_payload_and_sidecar(tmp_path):
    module = write(tmp_path, "relu_linear.py", KERNELBENCH_FILE)
    result = kforge_import(module, "-o", tmp_path / "out" / "payload.mlir")
    assert result.returncode == 0, result.stderr
    sidecar = json.load(open(tmp_path / "out" / "payload.json"))
    assert sidecar["func_name"] == "relu_linear" and sidecar["module"] == "Model"
    assert [a["name"] for a in sidecar["arguments"]] == ["x", "linear.weight", "linear.bias"]
    assert "func.func @relu_linear(" in (tmp_path / "out" / "payload.mlir").read_text()


@pytest.mark.parametrize("forward, reason", [
    ("return torch.cumsum(x, dim=1)", "(tm_tensor.scan), which upstream MLIR cannot parse"),
    ("return x if x.sum() > 0 else -x", "torch.export cannot trace the module: Could not guard on data-dependent"),
])
def test_cli_reports_the_importers_reason_and_exits_1(tmp_path, forward, reason):
    module = write(tmp_path, "bad.py", f"""
        import torch
        class Model(torch.nn.Module):
            def forward(self, x):
                {forward}
        def get_inputs():
            return [torch.randn(4, 4)]
        def get_init_inputs():
            return []
        """)
    result = kforge_import(module, "-o", tmp_path / "payload.mlir")
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("kforge-import: error: ") and reason in result.stderr
    assert "Traceback" not in result.stderr and "def forward" not in result.stderr  # no torch logs around it
    assert not (tmp_path / "payload.mlir").exists()


@pytest.mark.parametrize("name, text, message", [
    ("missing.py", None, "no such file: "),
    ("no_model.py", "import torch\ndef get_inputs():\n    return [torch.randn(2)]\n", "has no class Model"),
    ("no_inputs.py", KERNELBENCH_FILE.replace("def get_inputs", "def inputs"), "has no get_inputs()"),
    ("broken.py", "import torch\nclass Model(torch.nn.Module):\n    def __init__(self:\n", "failed to load: SyntaxError"),
    ("not_module.py", "class Model:\n    pass\ndef get_inputs():\n    return []\n", "Model is not a torch.nn.Module"),
])
def test_cli_bad_input_exits_2(tmp_path, name, text, message):
    module = tmp_path / name
    if text is not None:
        module.write_text(text)
    result = kforge_import(module, "-o", tmp_path / "payload.mlir")
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


def test_cli_bad_dtype_and_class_exit_2(tmp_path):
    module = write(tmp_path, "m.py", KERNELBENCH_FILE)
    result = kforge_import(module, "-o", tmp_path / "p.mlir", "--dtype", "int7")
    assert result.returncode == 2 and "unknown floating-point dtype 'int7'" in result.stderr
    result = kforge_import(module, "-o", tmp_path / "p.mlir", "--class", "Other")
    assert result.returncode == 2 and "has no class Other" in result.stderr


# End to end on the CPU target ---------------------------------------------------------------------------------

class LinearRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(64, 32, bias=False)

    def forward(self, x):
        return torch.relu(self.linear(x))


def test_imported_module_compiles_and_matches_pytorch_on_cpu(tmp_path):
    torch.manual_seed(0)
    module = LinearRelu()
    x = torch.randn(16, 64)
    payload = kforge.import_module(module, x)
    payload.save(str(tmp_path / "payload.mlir"))
    artifact = tmp_path / "artifact"
    result = subprocess.run([KFORGE_COMPILE, str(tmp_path / "payload.mlir"), "--target", "cpu", "-o", str(artifact)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr

    kernel = kforge.load(str(artifact))
    for seed in range(3):  # fresh inputs through the same kernel, the module's own weight
        x = torch.randn(16, 64, generator=torch.Generator().manual_seed(seed))
        y = kernel(*payload.arguments(module, x))
        with torch.no_grad():
            expected = torch.relu(x.double() @ module.linear.weight.double().T)
        assert y.dtype == torch.float32 and y.shape == expected.shape
        error = ((y.double() - expected).norm() / expected.norm()).item()
        assert error < 1e-5, error


def test_group_norm_imports_as_reshapes_not_gathers_of_constant_indices(tmp_path):
    """GroupNorm after a Linear: PyTorch's decomposition ends in an as_strided that reads its contiguous result
    whole (a view), and torch-mlir's own lowering of native_group_norm gathers through constants as large as
    the tensor (4 GB of text at 8192 x 4096). Imported, it has neither; compiled for the CPU it matches the module
    in float64."""
    torch.manual_seed(1)
    module = nn.Sequential(nn.Linear(40, 64), nn.GroupNorm(8, 64), nn.Hardtanh()).eval()
    x = torch.randn(32, 40)
    payload = kforge.import_module(module, x)
    assert "dense_resource" not in payload.mlir and "tensor.extract" not in payload.mlir
    assert len(payload.mlir) < 30000
    payload.save(str(tmp_path / "payload.mlir"))
    result = subprocess.run([KFORGE_COMPILE, str(tmp_path / "payload.mlir"), "--target", "cpu", "-o",
                             str(tmp_path / "artifact")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    kernel = kforge.load(str(tmp_path / "artifact"))
    y = kernel(*payload.arguments(module, x))
    with torch.no_grad():
        expected = module.double()(x.double())
    error = ((y.double() - expected).norm() / expected.norm()).item()
    assert error < 1e-5, error


def conv_batch_norm_training():
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()), torch.randn(2, 3, 8, 8)


def test_training_mode_batch_norm_uses_batch_statistics_and_leaves_buffers_alone():
    module, x = conv_batch_norm_training()
    running_mean = module[1].running_mean.clone()
    payload = kforge.import_module(module, x)
    # The running-statistics update is dead code in a pure function: no buffer arguments, one result.
    assert payload.argument_names == ["input", "0.weight", "0.bias", "1.weight", "1.bias"]
    assert payload.sidecar["results"] == [{"shape": [2, 4, 6, 6], "dtype": "f32"}]
    assert torch.equal(module[1].running_mean, running_mean) and module[1].num_batches_tracked.item() == 0


MORE_MODULES = {
    "batch_norm_net": lambda: (Net().eval(), torch.randn(3, 8), torch.randn(3, 4)),
    "conv_batch_norm_training": conv_batch_norm_training,
}


@pytest.mark.parametrize("name", sorted(MODULES) + sorted(MORE_MODULES))
def test_parse_test_modules_compile_and_match_pytorch_on_cpu(name, tmp_path):
    """The untransformed payload (kforge-compile with no recipe) computes what the module does."""
    torch.manual_seed(1)
    module, *inputs = {**MODULES, **MORE_MODULES}[name]()
    payload = kforge.import_module(module, *inputs)
    payload.save(str(tmp_path / "payload.mlir"))
    result = subprocess.run([KFORGE_COMPILE, str(tmp_path / "payload.mlir"), "--target", "cpu", "-o",
                             str(tmp_path / "artifact")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    y = kforge.load(str(tmp_path / "artifact"))(*payload.arguments(module, *inputs))
    with torch.no_grad():
        expected = module.double()(*[x.double() for x in inputs])
    error = ((y.double() - expected).norm() / expected.norm()).item()
    assert error < 1e-5, error
