"""Whole models (python/kforge/model.py, dynamo.py): a module imported, partitioned into kernels
(kforge-opt --kforge-partition), each kernel from the tuning database or kforge-tune, run in order; kforge.compile
and torch.compile(backend=kforge...). On the CPU target: every output is checked against the module in float64.

Needs torch and torch-mlir; run by test/Python/model.test."""

import json
import os
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")

import kforge  # noqa: E402
from conftest import BUILD, ROOT  # noqa: E402

sys.path.insert(0, ROOT)
from bench.models import blocks  # noqa: E402  (the blocks bench/models/run measures, here at small sizes)

nn = torch.nn
TOOLS = os.path.join(BUILD, "bin")


def MLPBlock():
    return blocks.MLPBlock(hidden=64, inner=128)


def DecoderBlock():
    return blocks.DecoderBlock(hidden=64, heads=4, inner=128)


def relative_error(module, inputs, actual):
    with torch.no_grad():
        reference = module.double()(*[x.double() for x in inputs])
    module.float()
    return ((actual.double() - reference).norm() / reference.norm()).item()


def test_mlp_block_is_three_kernels_and_matches_float64(tmp_path):
    torch.manual_seed(0)
    module, x = MLPBlock().eval(), torch.randn(32, 64)
    run = kforge.compile(module, x, directory=str(tmp_path / "mlp"), db=str(tmp_path / "db"), tools_dir=TOOLS)
    # layernorm (one row kernel), fc1 + bias + GELU, fc2 + bias + residual
    assert len(run.model.kernels) == 3
    assert [s["kind"] for s in run.model.plan.steps] == ["dispatch"] * 3
    for fresh in (x, torch.randn(32, 64)):
        assert relative_error(module, [fresh], run(fresh)) < 1e-5


def test_decoder_block_matches_float64_and_reuses_identical_kernels(tmp_path):
    torch.manual_seed(1)
    module, x = DecoderBlock().eval(), torch.randn(2, 16, 64)
    run = kforge.compile(module, x, directory=str(tmp_path / "decoder"), db=str(tmp_path / "db"),
                         tools_dir=TOOLS)
    plan = run.model.plan
    kinds = [s["kind"] for s in plan.steps]
    assert "slice" in kinds and "reshape" in kinds  # qkv's split and the heads' views stay between kernels
    # Q K^T's scale (computed by the importer on the heads' 4-D view) is Q K^T's epilogue, in its kernel.
    qk = [d for d in plan.dispatches if "linalg.batch_matmul" in open(plan.payload(d)).read()
          and "arith.divf" in open(plan.payload(d)).read()]
    assert len(qk) == 1
    assert relative_error(module, [x], run(x)) < 1e-5


def test_identical_kernels_are_compiled_once(tmp_path):
    torch.manual_seed(4)
    module, x = nn.Sequential(MLPBlock(), MLPBlock()).eval(), torch.randn(32, 64)
    run = kforge.compile(module, x, directory=str(tmp_path / "two"), db=str(tmp_path / "db"), tools_dir=TOOLS)
    dispatch_steps = [s for s in run.model.plan.steps if s["kind"] == "dispatch"]
    # Two blocks of the same shapes (other weights): each kernel is one function, called twice.
    assert len(dispatch_steps) == 2 * len(run.model.kernels)
    assert relative_error(module, [x], run(x)) < 1e-5


def test_torch_compile_backend_tunes_once_then_uses_the_database(tmp_path):
    torch.manual_seed(2)
    db, work = str(tmp_path / "db"), str(tmp_path / "work")
    first = kforge.make_backend(db=db, workdir=work, tools_dir=TOOLS)
    module, x = MLPBlock().eval(), torch.randn(32, 64)
    with torch.no_grad():
        y = torch.compile(module, backend=first)(x)
    assert not first.eager and len(first.models) == 1
    assert relative_error(module, [x], y) < 1e-5
    torch._dynamo.reset()

    # Another model of the same shapes (other weights): every kernel comes from the database.
    second = kforge.make_backend(db=db, workdir=str(tmp_path / "work2"), tools_dir=TOOLS)
    other = MLPBlock().eval()
    with torch.no_grad():
        z = torch.compile(other, backend=second)(x)
    assert set(second.models[0].sources.values()) == {"database"}
    assert relative_error(other, [x], z) < 1e-5
    torch._dynamo.reset()


class LinearCumsumLinear(nn.Module):
    """torch-mlir lowers cumsum to its own TMTensor dialect (tm_tensor.scan), which upstream MLIR cannot parse."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(8, 16), nn.Linear(16, 8)

    def forward(self, x):
        return self.b(torch.cumsum(torch.relu(self.a(x)), 1) * 2)


def test_an_op_kforge_cannot_take_runs_eagerly_said_once_and_the_rest_compiles(tmp_path):
    torch.manual_seed(7)
    backend = kforge.make_backend(db=str(tmp_path / "db"), workdir=str(tmp_path / "work"), tools_dir=TOOLS)
    module, x = LinearCumsumLinear().eval(), torch.randn(4, 8)
    compiled = torch.compile(module, backend=backend)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.no_grad():
            y = compiled(x)
            y2 = compiled(torch.randn(4, 8))
    said = [str(w.message) for w in caught if "kforge" in str(w.message)]
    assert said == ["kforge: running cumsum eagerly: torch-mlir cannot lower it to linalg"]
    assert backend.eager == ["cumsum"]
    # linear + relu before it, mul + linear after it: kforge kernels
    assert len(backend.models) == 2
    assert relative_error(module, [x], y) < 1e-5 and y2.shape == y.shape
    torch._dynamo.reset()


def test_a_graph_kforge_cannot_compile_runs_eagerly_said_once(tmp_path, monkeypatch):
    from kforge import dynamo

    def broken(*args, **kwargs):
        raise kforge.ModelError("cannot partition graph.mlir: planted")
    monkeypatch.setattr(dynamo, "compile_payload", broken)
    backend = kforge.make_backend(db=str(tmp_path / "db"), workdir=str(tmp_path / "work"), tools_dir=TOOLS)
    module, x = MLPBlock().eval(), torch.randn(32, 64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.no_grad():
            y = torch.compile(module, backend=backend)(x)
    said = [str(w.message) for w in caught if "kforge" in str(w.message)]
    assert said == ["kforge: running a graph eagerly: cannot partition graph.mlir: planted"]
    with torch.no_grad():
        assert torch.equal(y, module(x))
    torch._dynamo.reset()


def test_database_entries_from_another_target_or_build_are_not_trusted(tmp_path, capfd):
    torch.manual_seed(3)
    module, x = MLPBlock().eval(), torch.randn(32, 64)
    db = tmp_path / "db"
    run = kforge.compile(module, x, directory=str(tmp_path / "a"), db=str(db), tools_dir=TOOLS)
    names = sorted(run.model.kernels)
    entries = [db / "cpu" / name for name in names]

    # Another build: the entry is replayed (rebuilt and re-verified) before use, then trusted again.
    (entries[0] / "kforge-build").write_text("another-build\n")
    # An entry whose header says another target: tuned again; the old entry is set aside, not deleted.
    header = json.loads((entries[1] / "run.json").read_text())
    header["target"] = "gpu"
    (entries[1] / "run.json").write_text(json.dumps(header))
    capfd.readouterr()
    again = kforge.compile(module, x, directory=str(tmp_path / "b"), db=str(db), tools_dir=TOOLS)
    said = capfd.readouterr().err
    assert "was tuned for gpu" in said
    assert again.model.sources[names[0]] == "database"
    assert again.model.sources[names[1]] in ("first", "naive")
    assert any(p.name.startswith(names[1] + ".old-") for p in (db / "cpu").iterdir())
    assert (entries[0] / "kforge-build").read_text() != "another-build\n"
    assert relative_error(module, [x], again(x)) < 1e-5


def test_bad_input_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%x: tensor<4xf32>) -> f32 {\n  %c0 = arith.constant 0 : index\n"
                   "  %v = tensor.extract %x[%c0] : tensor<4xf32>\n  return %v : f32\n}\n")
    with pytest.raises(kforge.ModelError, match="tensor.extract"):
        kforge.partition(str(bad), str(tmp_path / "plan"), tools_dir=TOOLS)
    with pytest.raises(kforge.ModelError, match="target must be cpu or gpu"):
        kforge.compile_payload(str(bad), str(tmp_path / "x"), target="tpu", tools_dir=TOOLS)
    torch.manual_seed(4)
    module, x = MLPBlock().eval(), torch.randn(32, 64)
    run = kforge.compile(module, x, directory=str(tmp_path / "m"), db=str(tmp_path / "db"), tools_dir=TOOLS)
    with pytest.raises(kforge.ModelError, match="takes 7 arguments, got 1"):
        run.model(x)


def test_tf32_kernels_are_opt_in_and_kept_apart(tmp_path, monkeypatch):
    """allow_tf32 (issue 34) is the GPU's: refused for the CPU target; its kernels live under their own database
    key, so a request that does not allow TF32 never gets one, and kforge.tune passes --allow-tf32 only when
    asked; the torch.compile backend follows torch.backends.cuda.matmul.allow_tf32 (off by default)."""
    import importlib
    from kforge import model
    tune_module = importlib.import_module("kforge.tune")  # (kforge.tune is also the function)
    payload = tmp_path / "p.mlir"
    payload.write_text("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}\n")
    with pytest.raises(kforge.ModelError, match="allow_tf32 is for the gpu target"):
        kforge.compile_payload(str(payload), str(tmp_path / "x"), target="cpu", allow_tf32=True, tools_dir=TOOLS)
    assert model._target_key("gpu", "sm_90", allow_tf32=True) == "gpu-sm_90-tf32"
    assert model._target_key("gpu", "sm_90") == "gpu-sm_90" and model._target_key("cpu", None, True) == "cpu"
    assert torch.backends.cuda.matmul.allow_tf32 is False  # PyTorch's default: the backend adds no TF32
    commands = []

    def fake_run(command, **kwargs):
        commands.append(command)
        raise RuntimeError("stop")  # the command is all this test looks at
    monkeypatch.setattr(tune_module.subprocess, "run", fake_run)
    for allow in (True, False):
        with pytest.raises(RuntimeError):
            kforge.tune(str(payload), str(tmp_path / "run"), target="gpu", allow_tf32=allow, tools_dir=TOOLS)
    assert "--allow-tf32" in commands[0] and "--allow-tf32" not in commands[1]


def test_graphs_prepared_here_compile_where_torch_mlir_is_missing(tmp_path, monkeypatch):
    """scripts/gpu/models.sh's route: import and partition on this machine (prepare_only), then compile the same
    graphs from the carried workdir on a machine with neither torch-mlir nor kforge-opt."""
    torch.manual_seed(5)
    module, x = MLPBlock().eval(), torch.randn(32, 64)
    work = str(tmp_path / "work")
    prepare = kforge.make_backend(db=str(tmp_path / "db"), workdir=work, tools_dir=TOOLS, prepare_only=True)
    with torch.no_grad():
        eager = torch.compile(module, backend=prepare)(x)
    assert len(prepare.prepared) == 1 and not prepare.models
    torch._dynamo.reset()

    from kforge import dynamo, model

    def no_import(*args, **kwargs):
        raise AssertionError("imported again")
    monkeypatch.setattr(dynamo, "import_module", no_import)
    def tools_without_kforge_opt(name, tools_dir=None):  # as on the GPU machine
        if name == "kforge-opt":
            raise kforge.TuneError("kforge-opt not found")
        return os.path.join(TOOLS, name)
    monkeypatch.setattr(model, "_find_tool", tools_without_kforge_opt)
    run = kforge.make_backend(db=str(tmp_path / "db"), workdir=work, tools_dir=TOOLS)
    with torch.no_grad():
        y = torch.compile(module, backend=run)(x)
    assert not run.eager and len(run.models) == 1
    assert relative_error(module, [x], y) < 1e-5 and torch.allclose(y, eager, rtol=1e-4, atol=1e-5)
    torch._dynamo.reset()


def test_a_dispatch_this_build_cannot_tune_is_remembered(tmp_path, monkeypatch, capfd):
    """A dispatch kforge-tune fails on gets the naive kernel (the reference's computation), and a later process
    with the same build takes it at once instead of tuning again."""
    from kforge import model as model_module
    torch.manual_seed(6)
    module, x = MLPBlock().eval(), torch.randn(32, 64)

    def failing(*args, **kwargs):
        raise kforge.TuneError("planted failure")
    monkeypatch.setattr(model_module, "tune", failing)
    run = kforge.compile(module, x, directory=str(tmp_path / "a"), db=str(tmp_path / "db"), tools_dir=TOOLS)
    assert set(run.model.sources.values()) == {"naive"}
    assert set(run.model.naive_reasons.values()) == {"kforge-tune: planted failure"}
    assert relative_error(module, [x], run(x)) < 1e-5

    def never(*args, **kwargs):
        raise AssertionError("tuned again")
    monkeypatch.setattr(model_module, "tune", never)
    capfd.readouterr()
    again = kforge.compile(module, x, directory=str(tmp_path / "b"), db=str(tmp_path / "db"), tools_dir=TOOLS)
    assert set(again.model.sources.values()) == {"naive"}
    assert set(again.model.naive_reasons.values()) == {"kforge-tune: planted failure"}
    assert "no verified schedule with this kforge build (kforge-tune: planted failure)" in capfd.readouterr().err
    assert relative_error(module, [x], again(x)) < 1e-5


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x, factor):
        return self.linear(x) * factor


def test_kforge_compile_bakes_non_tensor_inputs_and_refuses_other_values(tmp_path):
    torch.manual_seed(8)
    module, x = Scaled().eval(), torch.randn(4, 8)
    run = kforge.compile(module, x, 3.0, directory=str(tmp_path / "s"), db=str(tmp_path / "db"), tools_dir=TOOLS)
    with torch.no_grad():
        expected = module.double()(x.double(), 3.0)
    module.float()
    y = run(x, 3.0)
    assert ((y.double() - expected).norm() / expected.norm()).item() < 1e-5
    with pytest.raises(kforge.ModelError, match="input 1 was compiled as 3.0, got 2.0"):
        run(x, 2.0)
    with pytest.raises(kforge.ModelError, match="expected 2 inputs to forward, got 1"):
        run(x)


_EMPTY_SCHEDULE = """// A kforge schedule (comments before the module are dropped by the export)
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    transform.yield  // a "string" with a } inside a comment
  }
}
"""


def test_a_database_exports_as_one_tuned_library_kforge_opt_reads(tmp_path, capfd, monkeypatch):
    """kforge-db export (kforge.model.export_tuned_library): every entry of the target with a best schedule, as one
    module keyed by content name; the rest counted; the file read back by the apply pass before it is written.
    (test/Transforms/apply-tuned.test applies an export of a tuned database.)"""
    from kforge.model import export_tuned_library
    db = tmp_path / "db"

    def entry(key, name, target, schedule=_EMPTY_SCHEDULE, chip=None):
        directory = db / key / name
        directory.mkdir(parents=True)
        (directory / "run.json").write_text(json.dumps({"target": target, "chip": chip}))
        if schedule is not None:
            (directory / "best.mlir").write_text(schedule)
            (directory / "best.json").write_text(json.dumps({"time_ms": 0.25, "description": 'tile("x")'}))
        (directory / "kforge-build").write_text("abc123\n")

    entry("cpu", "k_00000000000000a1", "cpu")
    # Not the plain form (an attribute alias before the module): reprinted by kforge-opt, then taken.
    entry("cpu", "k_00000000000000a2", "cpu", "#c = 4 : i64\n" + _EMPTY_SCHEDULE.replace(
        "transform.yield", "%p = transform.param.constant #c -> !transform.param<i64>\n    transform.yield"))
    entry("cpu", "k_00000000000000a3", "cpu", schedule=None)  # nothing verified: skipped, counted
    entry("cpu", "k_00000000000000a4", "gpu", chip="sm_90")  # its header says another target: skipped
    entry("cpu", "k_00000000000000a1.old-1", "cpu")  # set aside by a retune: not an entry
    capfd.readouterr()
    out = tmp_path / "lib" / "tuned.mlir"
    summary = kforge.TuningDatabase(db).export_library("cpu", out, tools_dir=TOOLS)
    assert (summary["entries"], summary["skipped"]) == (2, 2)
    assert "exported 2 schedules for cpu" in capfd.readouterr().err
    text = out.read_text()
    assert 'module attributes {kforge.target = "cpu", kforge.tuned_library = "kforge-tuned/1"} {' in text
    assert ('module @k_00000000000000a1 attributes {kforge.content_name = "k_00000000000000a1", '
            'kforge.build = "abc123", kforge.time_ms = 2.500000e-01 : f64, kforge.actions = "tile(\\22x\\22)", '
            'transform.with_named_sequence} {') in text
    assert "transform.param.constant 4 : i64" in text and "#c" not in text
    assert "k_00000000000000a3" not in text and "k_00000000000000a4" not in text and "comments before" not in text

    # Another target's key, a schedule that is not one module, a machine without kforge-opt: clear errors.
    with pytest.raises(kforge.ModelError, match="no entries for target gpu-sm_90 in .* \\(it has cpu\\)"):
        export_tuned_library(db, "gpu-sm_90", out, tools_dir=TOOLS)
    (db / "cpu" / "k_00000000000000a1" / "best.mlir").write_text(_EMPTY_SCHEDULE + "module {}\n")
    with pytest.raises(kforge.ModelError, match="is not one transform-library module"):
        export_tuned_library(db, "cpu", out, tools_dir=TOOLS)
    assert out.read_text() == text  # the earlier library is left as it was
    monkeypatch.delenv("KFORGE_BUILD_DIR", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(kforge.ModelError, match="cannot validate the tuned library: kforge-opt not found"):
        export_tuned_library(db, "cpu", out)


def test_a_new_partition_leaves_no_dispatch_of_the_last_one(tmp_path):
    payload = tmp_path / "two.mlir"
    payload.write_text(open(os.path.join(ROOT, "test", "Tune", "Inputs", "linear_relu_3d.mlir")).read())
    plan_dir = tmp_path / "plan"
    plan_dir.mkdir()
    (plan_dir / "k_0000000000000000.mlir").write_text("// a dispatch of an older partition\n")
    (plan_dir / "notes.txt").write_text("the user's\n")
    plan = kforge.partition(str(payload), str(plan_dir), tools_dir=TOOLS)
    files = sorted(p.name for p in plan_dir.iterdir())
    assert "k_0000000000000000.mlir" not in files and "notes.txt" in files
    assert sorted(f for f in files if f.startswith("k_")) == sorted(d["payload"] for d in plan.dispatches)


def test_a_run_carried_without_its_kernels_is_rebuilt_not_tuned_again(tmp_path):
    """scripts/gpu/kernelbench.sh carries tuning runs from one device call to the next without their kernels
    (best/, baseline/): the next call rebuilds and verifies the best schedule (kforge-tune --replay) instead of
    setting the run aside and tuning the kernel again."""
    import glob
    import shutil
    payload = tmp_path / "two.mlir"
    payload.write_text(open(os.path.join(ROOT, "test", "Tune", "Inputs", "linear_relu_3d.mlir")).read())
    work = tmp_path / "work"
    first = kforge.compile_payload(str(payload), str(work), target="cpu", tools_dir=TOOLS)
    runs = [d for d in glob.glob(str(work / "runs" / "*" / "k_*")) if os.path.isdir(d)]
    assert runs and set(first.sources.values()) == {"first"}
    records = {d: open(os.path.join(d, "db.jsonl")).read() for d in runs}
    for run in runs:
        shutil.rmtree(os.path.join(run, "best"))
        shutil.rmtree(os.path.join(run, "baseline"), ignore_errors=True)
    again = kforge.compile_payload(str(payload), str(work), target="cpu", tools_dir=TOOLS)
    assert set(again.sources.values()) == {"database"}
    assert not glob.glob(str(work / "runs" / "*" / "k_*.old-*"))
    for run in runs:
        assert os.path.exists(os.path.join(run, "best", "kernel.json"))
        assert open(os.path.join(run, "db.jsonl")).read().startswith(records[run])

