"""bench/kernelbench/run and its judge (suite.py): the two rules catch wrong, unwritten and constant outputs,
one-element outputs included; the runner works end to end on the CPU backend (import, kforge-tune --target
cpu, verification, timing beside eager, the report); a module that fails gets a row with its stage and error;
bad input fails clearly with a non-zero exit. Run by test/Python/kernelbench.test."""

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import suite  # noqa: E402

BUILD = os.environ.get("KFORGE_BUILD_DIR", os.path.join(suite.ROOT, "build"))
RUN = os.path.join(suite.ROOT, "bench", "kernelbench", "run")
MODULES = suite.MODULES_DIR


def module_task(name="l1_relu", small=True):
    module_file = suite.ModuleFile(os.path.join(MODULES, name + ".py"), small=small)
    return suite.ModuleTask(module_file, module_file.build(), "cpu")


def test_judge_applies_kforges_rule_and_kernelbenchs():
    task = module_task()
    ref = torch.linspace(-1, 1, 200, dtype=torch.float64).reshape(10, 20)
    assert task.compare(ref.float(), ref, 1e-4)["status"] == "correct"
    assert task.compare(ref.float(), ref, 1e-4)["kernelbench_allclose"] is True
    unwritten = ref.float().clone()
    unwritten[3, 4] = float("nan")
    assert "non-finite" in task.compare(unwritten, ref, 1e-4)["why"]
    assert task.compare((ref * 1.001).float(), ref, 1e-4)["status"] == "incorrect"  # kforge's rule
    # Within kforge's relative L2 tolerance (10000 elements) but off by 0.05 on one: KernelBench's allclose
    # and the max-abs rule both reject it.
    big = torch.sin(torch.arange(10000, dtype=torch.float64))
    out = big.clone()
    out[42] += 0.05
    assert task.compare(out, big, 1e-3)["status"] == "incorrect"
    # Integer results (argmax) are compared as numbers.
    indices = torch.arange(12).reshape(3, 4)
    assert task.compare(indices, indices, 1e-4)["status"] == "correct"
    assert task.compare(indices.flip(0), indices, 1e-4)["status"] == "incorrect"


def test_judge_of_a_one_element_output():
    """A loss: judged by its relative error; a reference equal for every input set proves nothing."""
    task = module_task("l1_mse_loss")
    assert task.compare(torch.tensor(2.0), torch.tensor(2.0, dtype=torch.float64), 1e-4)["status"] == "correct"
    assert task.compare(torch.tensor(2.001), torch.tensor(2.0, dtype=torch.float64), 1e-4)["status"] == "incorrect"
    assert "non-finite" in task.compare(torch.tensor(float("nan")), torch.tensor(2.0, dtype=torch.float64),
                                        1e-4)["why"]
    results = {"kforge": {"status": "correct"}}
    task.finish(results)  # two input sets with the same reference, 2.0 and 2.0
    assert results["kforge"]["status"] == "inconclusive"
    task.compare(torch.tensor(3.0), torch.tensor(3.0, dtype=torch.float64), 1e-4)
    results = {"kforge": {"status": "correct"}}
    task.finish(results)
    assert results["kforge"]["status"] == "correct"


def test_judge_catches_a_kernel_of_another_module(tmp_path):
    """kforge's kernel for ReLU, called as the GELU module's kernel: incorrect on the first input set."""
    relu = suite.ModuleFile(os.path.join(MODULES, "l1_relu.py"), small=True)
    gelu = suite.ModuleFile(os.path.join(MODULES, "l1_gelu_erf.py"), small=True)
    payload = suite.import_payload(relu, relu.build(), relu.inputs(0), str(tmp_path / "relu.mlir"))
    artifact = suite.compile_payload(str(tmp_path / "relu.mlir"), str(tmp_path / "art"), os.path.join(BUILD, "bin"))
    import measure
    result = suite.judge(measure.CpuBackend(), gelu, gelu.build(), payload, artifact, seeds=2, timing=False,
                         implementations=("kforge",))["implementations"]["kforge"]
    assert result["status"] == "incorrect" and result["why"].startswith("seed 0: relative L2 error")


def test_softmax_modules_get_the_harness_softmax_checks(tmp_path):
    """SOFTMAX_ROWS = True in a module file: rows summing to 1 and inputs x 1000 are checked too."""
    module_file = suite.ModuleFile(os.path.join(MODULES, "l1_softmax_4095.py"), small=True)
    model = module_file.build()
    payload = suite.import_payload(module_file, model, module_file.inputs(0), str(tmp_path / "p.mlir"))
    artifact = suite.compile_payload(str(tmp_path / "p.mlir"), str(tmp_path / "art"), os.path.join(BUILD, "bin"))
    import measure
    results = suite.judge(measure.CpuBackend(), module_file, model, payload, artifact, seeds=2, timing=False)
    for name in ("kforge", "eager"):
        result = results["implementations"][name]
        assert result["status"] == "correct", result
        assert result["checks"]["large_inputs"]["status"] == "correct"
        assert result["checks"]["rows_sum_max_error"] < 1e-5


def test_small_variants_are_small_and_the_inputs_fresh_per_seed():
    module_file = suite.ModuleFile(os.path.join(MODULES, "l1_matmul_prime.py"), small=True)
    a, b = module_file.inputs(0)
    assert a.shape == (37, 53) and b.shape == (53, 29)
    assert not torch.equal(module_file.inputs(1)[0], a) and torch.equal(module_file.inputs(0)[0], a)
    assert suite.ModuleFile(os.path.join(MODULES, "l1_matmul_prime.py")).source.M == 4093


def kernelbench_run(*args, out):
    return subprocess.run([sys.executable, RUN, "--backend", "cpu", "--small", "--tools", os.path.join(BUILD, "bin"),
                           "--out", str(out), *map(str, args)], capture_output=True, text=True)


def test_runner_end_to_end_on_the_cpu(tmp_path):
    """Two modules tuned and verified; GroupNorm (per-group statistics broadcast back over the channels, which
    no fused kernel computes) verified as several kernels, each tuned; one with no kernel (cumsum, which
    torch-mlir cannot lower to linalg: see KNOWN_FAILURES) gets its row with the reason. (The Frobenius norm, a whole-tensor reduction broadcast back,
    was the partitioned module here until its four loops were merged into one: it is one kernel on the CPU.)"""
    result = kernelbench_run(os.path.join(MODULES, "l1_relu.py"), os.path.join(MODULES, "l2_linear_relu.py"),
                             os.path.join(MODULES, "l1_group_norm.py"), os.path.join(MODULES, "l1_cumsum.py"),
                             "--trials", 2, "--seeds", 3, "--reps", 3, out=tmp_path)
    assert result.returncode == 1, result.stderr  # one module failed
    results = json.load(open(tmp_path / "report.json"))
    rows = {r["task"]: r for r in results["tasks"]}
    # (A module that fails to import gets its row at once, before the others are tuned.)
    assert sorted(rows) == ["l1_cumsum", "l1_group_norm", "l1_relu", "l2_linear_relu"]
    assert results["complete"] is True
    for name in ("l1_relu", "l2_linear_relu"):
        row = rows[name]
        assert row["kforge"]["status"] == "correct", row["kforge"]
        assert len(row["kforge"]["seeds"]) == 3 and all(s["kernelbench_allclose"] for s in row["kforge"]["seeds"])
        assert row["eager"]["status"] == "correct" and row["compile"]["status"] == "n/a"
        assert row["tuning"]["trials"] == 2 and row["stage"] == "verified" and row["best_schedule"] != "-"
        assert row["diagnosis"].startswith(("memory-bound", "compute-bound"))
    assert rows["l2_linear_relu"]["flops"] == 2 * 12 * 40 * 24 and rows["l2_linear_relu"]["level"] == 2
    norm = rows["l1_group_norm"]
    assert norm["kforge"]["status"] == "correct" and norm["stage"] == "verified", norm["kforge"]
    assert len(norm["kforge"]["seeds"]) == 3 and re.fullmatch(r"(\d+) kernels \(\1 tuned\)", norm["best_schedule"])
    assert os.path.exists(tmp_path / "payloads" / "l1_group_norm.plan" / "plan.json")
    scan = rows["l1_cumsum"]
    assert scan["stage"] == "import" and scan["kforge"]["status"] == "no kernel"
    assert "tm_tensor.scan" in scan["diagnosis"]
    assert results["summary"]["eager"]["fast_0"] == pytest.approx(3 / 4)
    table = (tmp_path / "report.md").read_text()
    assert "| l1_cumsum | 1 | no kernel |" in table and "fast_1" in table and "| import | import: " in table

    # --no-tune measures the runs already there, the partitioned module's kernels from their runs.
    again = kernelbench_run(os.path.join(MODULES, "l1_relu.py"), os.path.join(MODULES, "l1_group_norm.py"),
                            "--no-tune", "--seeds", 2, "--reps", 2, "--report", tmp_path / "again", out=tmp_path)
    assert again.returncode == 0, again.stderr
    rows = {r["task"]: r for r in json.load(open(tmp_path / "again.json"))["tasks"]}
    assert rows["l1_relu"]["kforge"]["status"] == "correct"
    assert rows["l1_relu"]["tuning"]["budget"][0]["trials_budget"] == 2
    assert rows["l1_group_norm"]["kforge"]["status"] == "correct"
    assert rows["l1_group_norm"]["best_schedule"] == norm["best_schedule"].replace("tuned", "database")


def write(directory, name, text):
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return path


def test_runner_bad_input(tmp_path):
    missing = kernelbench_run(tmp_path / "nonesuch.py", out=tmp_path)
    assert missing.returncode == 2 and "error: no such file or directory: " in missing.stderr
    assert "Traceback" not in missing.stderr
    empty = kernelbench_run(tmp_path, out=tmp_path / "o")
    assert empty.returncode == 2 and "no module files" in empty.stderr

    no_model = write(tmp_path, "no_model.py", "import torch\ndef get_inputs():\n    return [torch.randn(2)]\n")
    no_inputs = write(tmp_path, "no_inputs.py", """
        import torch
        class Model(torch.nn.Module):
            def forward(self, x):
                return x
        SMALL = {}
        """)
    cumsum = write(tmp_path, "cumsum.py", """
        import torch
        N = 64
        SMALL = dict(N=8)
        class Model(torch.nn.Module):
            def forward(self, x):
                return torch.cumsum(x, dim=1)
        def get_inputs():
            return [torch.randn(N, N)]
        def get_init_inputs():
            return []
        """)
    no_small = write(tmp_path, "no_small.py", """
        import torch
        class Model(torch.nn.Module):
            def forward(self, x):
                return x * 2
        def get_inputs():
            return [torch.randn(4, 4)]
        """)
    result = kernelbench_run(no_model, no_inputs, cumsum, no_small, "--trials", 1, out=tmp_path / "out")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    rows = {r["task"]: r for r in json.load(open(tmp_path / "out" / "report.json"))["tasks"]}
    assert rows["no_model"]["stage"] == "load" and "has no class Model" in rows["no_model"]["diagnosis"]
    assert rows["no_inputs"]["stage"] == "load" and "has no get_inputs()" in rows["no_inputs"]["diagnosis"]
    assert rows["no_small"]["stage"] == "load" and "has no SMALL dict" in rows["no_small"]["diagnosis"]
    assert rows["cumsum"]["stage"] == "import"  # torch-mlir's reason
    assert "(tm_tensor.scan), which upstream MLIR cannot parse" in rows["cumsum"]["diagnosis"]
    assert "cumsum: import failed: torch-mlir cannot lower the module to linalg" in result.stderr

    bad = kernelbench_run(cumsum, "--seeds", 0, out=tmp_path)
    assert bad.returncode == 2 and "--seeds" in bad.stderr
    both = kernelbench_run(cumsum, "--no-tune", "--tune-only", out=tmp_path)
    assert both.returncode == 2 and "exclude each other" in both.stderr


def test_import_only_then_measure_without_torch_mlir(tmp_path, monkeypatch):
    """The GPU machine has no torch-mlir: payloads imported here (--import-only) are taken from --payloads there,
    and one imported at the other size is refused. Nor has it kforge-opt: the partition of a module no single
    kernel computes is made here too, and taken there from beside its payload."""
    relu = os.path.join(MODULES, "l1_relu.py")
    imported = kernelbench_run(relu, os.path.join(MODULES, "l1_frobenius_norm.py"), "--import-only", out=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert (tmp_path / "payloads" / "l1_relu.mlir").exists() and (tmp_path / "payloads" / "l1_relu.json").exists()
    assert "l1_frobenius_norm: imported into" in imported.stderr and "(2 kernels when partitioned)" in imported.stderr
    assert not (tmp_path / "payloads" / "l1_relu.plan").exists() or \
        suite.partition_plan(str(tmp_path / "payloads" / "l1_relu.mlir"), os.path.join(BUILD, "bin")) is None
    monkeypatch.delenv("KFORGE_BUILD_DIR", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    no_tools = tmp_path / "no-tools"
    no_tools.mkdir()
    plan = suite.partition_plan(str(tmp_path / "payloads" / "l1_frobenius_norm.mlir"), str(no_tools))
    assert plan is not None and len(plan.dispatches) == 2
    # ... and tuned there, kernel by kernel, from that plan: the tuner's tools without kforge-opt (as
    # scripts/gpu/pack_tuner.sh packs them).
    tuner_tools = tmp_path / "tuner-tools"
    tuner_tools.mkdir()
    for tool in ("kforge-tune", "kforge-compile", "kforge-run"):
        os.symlink(os.path.join(BUILD, "bin", tool), tuner_tools / tool)
    model = suite.tune_partitioned(str(tmp_path / "payloads" / "l1_frobenius_norm.mlir"), str(tmp_path / "kernels"),
                                   str(tuner_tools), trials=2)
    assert model is not None and len(model.kernels) == 2
    runner = _load_runner()
    args = runner.parse(["--small", "--out", str(tmp_path)])
    runner.have_torch_mlir = lambda: False
    module_file = suite.ModuleFile(relu, small=True)
    assert runner.payload_for(module_file, args).sidecar["small"] is True
    with pytest.raises(suite.SuiteError, match="was imported with --small; import it again"):
        runner.payload_for(suite.ModuleFile(relu), runner.parse(["--out", str(tmp_path)]))
    with pytest.raises(suite.SuiteError, match="torch-mlir is not installed here and .* does not exist"):
        runner.payload_for(module_file, runner.parse(["--small", "--out", str(tmp_path / "elsewhere")]))


def _load_runner():
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("kernelbench_run", RUN)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("kernelbench_run", loader))
    loader.exec_module(module)
    return module
