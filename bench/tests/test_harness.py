"""The benchmark harness (bench/run, bench/harness): its correctness checks catch wrong, unwritten and failing
implementations; its summary numbers (fast_p, geometric means, floors, flags) are computed as documented; and
bench/run works end to end on the CPU backend (tuning with kforge-tune --target cpu, measuring kforge's kernel
against the NumPy definition), with clear errors for bad input."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "bench", "tasks"), os.path.join(ROOT, "bench", "harness")]
BUILD = os.environ.get("KFORGE_BUILD_DIR", os.path.join(ROOT, "build"))

import measure  # noqa: E402
import report  # noqa: E402
import tasks  # noqa: E402


def test_compare_verdicts():
    ref = np.linspace(-1, 1, 100)
    assert measure.compare(ref.astype(np.float32), ref)["status"] == "correct"
    unwritten = ref.copy()
    unwritten[7] = np.nan
    verdict = measure.compare(unwritten, ref)
    assert verdict["status"] == "incorrect" and "non-finite" in verdict["why"]
    assert measure.compare(ref * 1.001, ref)["status"] == "incorrect"
    assert measure.compare(np.zeros(100), np.zeros(100))["status"] == "inconclusive"
    assert measure.compare(ref[:50], ref)["status"] == "incorrect"


def test_compare_is_scale_invariant():
    """Tiny and huge honest outputs are judged like any other; zeros against a tiny output are wrong."""
    ref = np.linspace(-1, 1, 1000)
    noisy = ref * (1 + 1e-6 * np.cos(np.arange(1000)))
    for scale in (1e-30, 1e-6, 1.0, 1e6, 1e30):
        assert measure.compare(noisy * scale, ref * scale)["status"] == "correct", scale
        assert measure.compare(ref * scale * 1.001, ref * scale)["status"] == "incorrect", scale
    assert measure.compare(np.zeros(1000), ref * 1e-9)["status"] == "incorrect"
    assert measure.compare(np.full(100, 1e-7), np.full(100, 1e-7))["status"] == "inconclusive"


def test_compare_catches_one_large_outlier_with_the_max_abs_rule():
    ref = np.sin(np.arange(10000, dtype=np.float64))
    out = ref.copy()
    out[42] += 0.05  # small in L2 over 10000 elements, large for one element
    verdict = measure.compare(out, ref, tolerance=1e-3)
    assert verdict["rel_l2_error"] < 1e-3
    assert verdict["status"] == "incorrect" and "max abs error" in verdict["why"]


def test_kforge_outputs_are_poisoned_before_every_verified_call():
    """An artifact that leaves its output unwritten fails: every verified call gets a fresh NaN-filled output
    (a stale correct result from an earlier call cannot pass), and the check counts the NaN."""
    class LazyArtifact:
        outputs = [{"shape": [4, 8], "dtype": "f32"}]
        calls = []

        def __call__(self, *buffers):
            self.calls.append(buffers[-1])
            if len(self.calls) == 1:
                buffers[-1][...] = 1.0  # the first call writes, later ones do not

    artifact = LazyArtifact()
    kernel = measure.CpuBackend().kforge(artifact)
    first = kernel(np.zeros((4, 8)))
    assert measure.compare(first, np.ones((4, 8)) + np.arange(32).reshape(4, 8))["status"] == "incorrect"
    second = kernel(np.zeros((4, 8)))
    assert artifact.calls[0] is not artifact.calls[1]
    verdict = measure.compare(second, np.arange(32.0).reshape(4, 8))
    assert verdict["status"] == "incorrect" and verdict["non_finite"] == 32


def test_measure_task_catches_wrong_and_failing_implementations():
    task = tasks.by_name("relu")
    backend = measure.CpuBackend()

    def raises(x):
        raise RuntimeError("boom")

    implementations = {"right": lambda x: np.maximum(x, 0), "zeros": lambda x: np.zeros_like(x),
                       "nan": lambda x: np.full_like(x, np.nan), "raises": raises, "absent": None}
    measured = measure.measure_task(backend, task, (8, 16), implementations, seeds=3, warmup=1, reps=3)
    results = measured["implementations"]
    assert results["right"]["status"] == "correct" and len(results["right"]["seeds"]) == 3
    assert results["right"]["timing"]["reps"] == 3
    assert results["zeros"]["status"] == "incorrect" and "timing" not in results["zeros"]
    assert results["nan"]["status"] == "incorrect"
    assert results["raises"]["status"] == "failed" and "boom" in results["raises"]["why"]
    assert results["absent"]["status"] == "n/a"
    assert measured["bytes"] == 4 * (8 * 16 * 2)


def test_softmax_checks_catch_overflow_and_rows_not_summing_to_one():
    task = tasks.by_name("softmax")
    backend = measure.CpuBackend()

    def naive(x):  # no row max subtracted: exp overflows on the large inputs
        with np.errstate(over="ignore", invalid="ignore"):
            e = np.exp(x.astype(np.float32))
            return e / e.sum(axis=1, keepdims=True)

    implementations = {"right": tasks._np_softmax, "naive": naive}
    results = measure.measure_task(backend, task, (8, 64), implementations, seeds=2, warmup=1, reps=3)["implementations"]
    assert results["right"]["status"] == "correct"
    assert results["right"]["checks"]["rows_sum_max_error"] < 1e-6
    assert results["right"]["checks"]["large_inputs"]["status"] == "correct"
    # The naive one passes on standard-normal inputs and fails only on the large ones.
    assert [s["status"] for s in results["naive"]["seeds"]] == ["correct", "correct"]
    assert results["naive"]["status"] == "incorrect" and "inputs x 1000" in results["naive"]["why"]
    assert "timing" not in results["naive"]
    # Tasks that are not a row softmax get no such checks.
    relu = measure.measure_task(backend, tasks.by_name("relu"), (8, 16), {"right": lambda x: np.maximum(x, 0)},
                                seeds=1, warmup=1, reps=3)["implementations"]["right"]
    assert "checks" not in relu


def _row(task, level, kforge_ms, eager_ms, compile_ms=None, floor=0.001, kforge_status="correct"):
    def result(ms, status="correct"):
        if ms is None:
            return {"status": "n/a"}
        return {"status": status, "timing": {"median_ms": ms}} if status == "correct" else {"status": status}
    return {"task": task, "level": level, "shape": [1], "floor_ms": floor, "bytes": 4,
            "kforge": result(kforge_ms, kforge_status), "eager": result(eager_ms), "compile": result(compile_ms)}


def test_fast_p_geomean_and_flags():
    rows = [_row("a", 1, 1.0, 2.0, 1.0), _row("b", 2, 1.0, 3.0, 0.5), _row("c", 2, 1.0, 0.5, 0.5),
            _row("d", 1, 1.0, 1.0, 1.0, kforge_status="incorrect")]
    s = report.summary(rows)
    assert s["eager"]["fast_0"] == 0.75  # three of four correct
    assert s["eager"]["fast_1"] == 0.5   # a (2x) and b (3x)
    assert s["eager"]["fast_2"] == 0.25  # b
    assert s["eager"]["geomean_speedup"] == pytest.approx((2 * 3 * 0.5) ** (1 / 3))
    assert s["compile"]["fast_1"] == 0.0
    assert s["level2_geomean_vs_eager"] == pytest.approx((3 * 0.5) ** 0.5)
    too_fast = _row("e", 1, 0.5, 1.0, floor=1.0)
    assert any("faster than the floor" in f for f in report.flags(too_fast))
    assert any("above 10x" in f for f in report.flags(_row("f", 1, 1.0, 20.0)))
    # Within 2% either way is a tie, said in the row's notes; 3% is not.
    assert report.ties(_row("g", 2, 2.76, 2.794, 2.774)) == [
        "1.01x eager: a tie (within 2%, the run-to-run spread)",
        "1.01x torch.compile: a tie (within 2%, the run-to-run spread)"]
    assert report.ties(_row("h", 1, 1.0, 0.985, 1.03)) == ["0.98x eager: a tie (within 2%, the run-to-run spread)"]
    assert "a tie" in report.markdown({"tasks": [_row("g", 2, 2.76, 2.794, 2.774)], "backend": "cpu", "seeds": 1,
                                       "reps": 1, "warmup": 1,
                                       "ceilings": {"copy_gbps": 1, "fp32_tflops": 1, "how": "test"}})
    assert measure.floor_ms(4e9, 0, {"copy_gbps": 4000, "fp32_tflops": 50}) == pytest.approx(1.0)
    assert measure.floor_ms(4, 1e12, {"copy_gbps": 4000, "fp32_tflops": 50}) == pytest.approx(20.0)


def test_each_task_is_floored_by_the_bandwidth_its_traffic_implies():
    """Issue 28: a task that only reads (a row sum) is bounded by read-only bandwidth, one that only writes by
    write-only bandwidth, the rest by copy's; a rate above its ceiling is flagged, never reported as a share."""
    ceilings = {"copy_gbps": 3000, "read_gbps": 3300, "write_gbps": 2800, "fp32_tflops": 50}
    # A row sum of 8192 x 4095 f32: all reads but 32 KB.
    reads, writes = 8192 * 4095 * 4, 8192 * 4
    assert measure.bandwidth_ceiling(reads, writes, ceilings) == (3300, "read")
    assert measure.floor_ms(reads + writes, 0, ceilings, read_bytes=reads) == pytest.approx(
        (reads + writes) / 3300e6)
    # An elementwise op reads and writes alike: copy bandwidth.
    assert measure.bandwidth_ceiling(4e8, 4e8, ceilings) == (3000, "copy")
    # A fill-like task (writes only).
    assert measure.bandwidth_ceiling(0, 4e8, ceilings) == (2800, "write")
    # Unknown split, or a report without one-way ceilings: copy, as before.
    assert measure.bandwidth_ceiling(None, None, ceilings) == (3000, "copy")
    assert measure.bandwidth_ceiling(reads, writes, {"copy_gbps": 3000}) == (3000, "copy")
    assert measure.floor_ms(4e9, 0, {"copy_gbps": 4000, "fp32_tflops": 50}, read_bytes=4e9) == pytest.approx(1.0)
    # 80% of copy, but 73% of the read-only ceiling that bounds it.
    ms = (reads + writes) / (0.8 * 3000e6)
    share, name, text = measure.bandwidth_share(reads + writes, reads, ms, ceilings)
    assert name == "read" and share == pytest.approx(0.8 * 3000 / 3300) and "ABOVE" not in text
    # A kernel "faster" than its ceiling: flagged.
    share, name, text = measure.bandwidth_share(8e8, 4e8, 8e8 / (1.2 * 3000e6), ceilings)
    assert name == "copy" and share == pytest.approx(1.2) and "ABOVE its copy ceiling" in text
    # measure_task reports the inputs' share of the bytes.
    measured = measure.measure_task(measure.CpuBackend(), tasks.by_name("relu"), (8, 16),
                                    {"right": lambda x: np.maximum(x, 0)}, seeds=1, warmup=0, reps=1)
    assert measured["bytes"] == 2 * 8 * 16 * 4 and measured["read_bytes"] == 8 * 16 * 4


class _Timeline:
    """A host and a GPU in simulated milliseconds, for the CUDA backend's clock: every host call costs
    ``call_ms``; GPU work queued at host time t starts when both t has come and the GPU is free; an event's
    time is when the GPU reaches it; synchronize waits for the GPU."""

    def __init__(self, call_ms=0.002, spin_ms_per_cycle=1e-6):
        self.host, self.gpu, self.call_ms, self.per_cycle = 0.0, 0.0, call_ms, spin_ms_per_cycle
        self.flushes = []  # each flush of the CUDA backend's buffer: "write" (zero_) or "read" (sum)

    def queue(self, duration_ms):
        self.host += self.call_ms
        self.gpu = max(self.gpu, self.host) + duration_ms

    def torch(self, with_sleep=True):
        from types import SimpleNamespace
        timeline = self

        class Event:
            def __init__(self, enable_timing=False):
                self.at = None

            def record(self):
                timeline.queue(0.0)
                self.at = timeline.gpu

            def elapsed_time(self, end):
                return end.at - self.at

        class Flush:
            def zero_(self):
                timeline.flushes.append("write")
                timeline.queue(0.08)  # a 256 MiB write

            def sum(self):
                timeline.flushes.append("read")
                timeline.queue(0.07)  # a 256 MiB read

        class NoGrad:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        def synchronize():
            timeline.host = max(timeline.host, timeline.gpu)

        cuda = SimpleNamespace(Event=Event, synchronize=synchronize,
                               get_device_properties=lambda device: SimpleNamespace(L2_cache_size=60 << 20))
        if with_sleep:
            cuda._sleep = lambda cycles: timeline.queue(cycles * timeline.per_cycle)
        matmul = SimpleNamespace(allow_tf32=True)
        return SimpleNamespace(cuda=cuda, backends=SimpleNamespace(cuda=SimpleNamespace(matmul=matmul),
                                                                   cudnn=SimpleNamespace(allow_tf32=True)),
                               set_float32_matmul_precision=lambda p: None, device=lambda *a: a,
                               empty=lambda *a, **k: Flush(), float32="float32", no_grad=NoGrad)

    def implementation(self, host_ms, kernel_ms):
        """A call that spends ``host_ms`` on the host (Python, guards) before queueing ``kernel_ms`` of work."""
        def call():
            self.host += host_ms
            self.queue(kernel_ms)
        return call


@pytest.mark.parametrize("with_sleep", [True, False, "broken"])
def test_cuda_clock_times_the_gpu_not_the_hosts_launch(monkeypatch, with_sleep):
    timeline = _Timeline()
    fake = timeline.torch(bool(with_sleep))
    if with_sleep == "broken":  # torch.cuda._sleep is private: if it fails, the flush alone leads
        def fails(cycles):
            raise RuntimeError("no sleep here")
        fake.cuda._sleep = fails
        with_sleep = False
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setattr(measure.time, "perf_counter", lambda: timeline.host / 1e3)
    backend = measure.CudaBackend()
    # A kernel of 0.06 ms behind 0.15 ms of host work per call (slower than the flush alone, 0.08 ms).
    slow_launch = timeline.implementation(0.15, 0.06)
    timing = backend.time(lambda: slow_launch(), [], warmup=2, reps=5)
    if with_sleep:
        assert backend.lead_ms == pytest.approx(0.08 + backend.SPIN_MS, rel=0.05)
        assert timing["median_ms"] == pytest.approx(0.06) and timing["host_bound_reps"] == 0
    else:  # no spin to hide it: the host's lag is timed, and said
        assert backend.spin_cycles == 0 and backend.lead_ms == pytest.approx(0.08, rel=0.05)
        assert timing["median_ms"] > 0.1 and timing["host_bound_reps"] == 5
    assert timing["host_launch_max_ms"] >= 0.15
    row = {"task": "t", "level": 1, "floor_ms": 0.01, "kforge": {"status": "correct", "timing": timing},
           "eager": {"status": "n/a"}, "compile": {"status": "n/a"}}
    assert any("host-bound" in f for f in report.flags(row)) == (not with_sleep)


def test_cuda_clock_lengthens_the_lead_for_a_launch_that_outlasts_it(monkeypatch):
    # A kernel of 1 ms behind 0.5 ms of host work per call (torch.compile's gemms on the H200: 0.4-0.65 ms),
    # longer than the run's lead (0.08 ms flush + 0.2 ms spin): timed again with a spin of twice the slowest
    # launch, the GPU's time alone, no repetition host-bound, and the row says how it was timed.
    timeline = _Timeline()
    monkeypatch.setitem(sys.modules, "torch", timeline.torch())
    monkeypatch.setattr(measure.time, "perf_counter", lambda: timeline.host / 1e3)
    backend = measure.CudaBackend()
    slow_host = timeline.implementation(0.5, 1.0)
    timing = backend.time(lambda: slow_host(), [], warmup=2, reps=5)
    assert timing["lead_extended"] and timing["host_bound_reps"] == 0
    assert timing["median_ms"] == pytest.approx(1.0)
    assert timing["lead_ms"] == pytest.approx(0.08 + 2 * timing["host_launch_max_ms"], rel=0.05)
    row = {"task": "t", "level": 1, "floor_ms": 0.01, "kforge": {"status": "n/a"}, "eager": {"status": "n/a"},
           "compile": {"status": "correct", "timing": timing}}
    assert not report.flags(row)
    assert report.timing_notes(row) == [f"compile: timed with a {timing['lead_ms']:.2f} ms lead (its launch takes the "
                                        f"host up to {timing['host_launch_max_ms']:.2f} ms)"]
    # A launch within the run's lead is timed once, as before.
    fast_host = timeline.implementation(0.05, 1.0)
    assert not backend.time(lambda: fast_host(), [], warmup=2, reps=5)["lead_extended"]


@pytest.mark.parametrize("l2", ["dirty", "clean"])
def test_cuda_flush_leaves_l2_dirty_or_clean(monkeypatch, l2):
    # dirty (the default, shared/MEASURE.md): each repetition's flush writes the buffer; clean: it reads it (the
    # buffer written once, at start), so L2 holds no dirty lines when the clock starts. Either way one flush per
    # repetition, in the GPU's lead, and the kernel's time alone is measured.
    timeline = _Timeline()
    monkeypatch.setitem(sys.modules, "torch", timeline.torch())
    monkeypatch.setattr(measure.time, "perf_counter", lambda: timeline.host / 1e3)
    backend = measure.CudaBackend(l2=l2)
    assert timeline.flushes[0] == "write"  # the buffer's values defined before anything reads it
    before = len(timeline.flushes)
    kernel = timeline.implementation(0.01, 0.06)
    timing = backend.time(lambda: kernel(), [], warmup=2, reps=5)
    assert timeline.flushes[before:] == ["write" if l2 == "dirty" else "read"] * 5
    assert timing["median_ms"] == pytest.approx(0.06) and timing["host_bound_reps"] == 0
    assert backend.lead_ms == pytest.approx((0.08 if l2 == "dirty" else 0.07) + backend.SPIN_MS, rel=0.05)
    row = {"task": "t", "level": 1, "shape": [4], "floor_ms": 0.01, "kforge": {"status": "correct", "timing": timing},
           "eager": {"status": "n/a"}, "compile": {"status": "n/a"}}
    results = {"tasks": [row], "l2_flush": measure.CudaBackend.L2_STATES[l2]}
    assert f"L2 {measure.CudaBackend.L2_STATES[l2]} and the GPU kept busy" in report._lead(results)


def test_cuda_flush_refuses_an_unknown_l2_state(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", _Timeline().torch())
    with pytest.raises(ValueError, match="l2 must be one of dirty, clean, not 'warm'"):
        measure.CudaBackend(l2="warm")


def test_host_bound_counts_the_repetitions_the_gpu_waited_for():
    assert measure.host_bound([0.1, 0.5, 0.2, 0.31], 0.3) == {"host_launch_max_ms": 0.5, "lead_ms": 0.3,
                                                             "host_bound_reps": 2}


def _bench(*args, out):
    return subprocess.run([sys.executable, os.path.join(ROOT, "bench", "run"), "--backend", "cpu", "--small",
                           "--tools", os.path.join(BUILD, "bin"), "--out", str(out), *args],
                          capture_output=True, text=True)


def test_bench_run_end_to_end_on_the_cpu(tmp_path):
    result = _bench("--tasks", "relu,softmax,gemm_bias_relu", "--trials", "3", "--time-budget", "60",
                    "--seeds", "3", "--reps", "5", out=tmp_path)
    assert result.returncode == 0, result.stderr
    results = json.load(open(tmp_path / "report.json"))
    assert [r["task"] for r in results["tasks"]] == ["relu", "softmax", "gemm_bias_relu"]
    for row in results["tasks"]:
        # kforge's best kernel (even when slower than the untransformed payload) is loaded and verified.
        assert row["kforge"]["status"] == "correct", row["kforge"]
        assert row["eager"]["status"] == "correct" and row["compile"]["status"] == "n/a"
        assert row["tuning"]["trials"] == 3 and row["floor_ms"] > 0
        assert row["diagnosis"].startswith(("memory-bound", "compute-bound"))
    assert results["summary"]["eager"]["fast_0"] == 1.0 and results["complete"] is True
    table = (tmp_path / "report.md").read_text()
    assert "| gemm_bias_relu | 2 | 64x64x64 |" in table and "fast_1" in table
    assert (tmp_path / "report.svg").read_text().startswith("<svg")

    # --no-tune measures the runs already there; the tuning budget recorded is the search's.
    again = _bench("--tasks", "relu", "--no-tune", "--seeds", "2", "--reps", "3", "--report",
                   str(tmp_path / "again"), out=tmp_path)
    assert again.returncode == 0, again.stderr
    row = json.load(open(tmp_path / "again.json"))["tasks"][0]
    assert row["kforge"]["status"] == "correct"
    [session] = row["tuning"]["budget"]
    assert session["trials_budget"] == 3 and session["time_budget_s"] == 60 and session["trials_after"] == 3


def test_bench_run_bad_input(tmp_path):
    unknown = _bench("--tasks", "relu,nonesuch", out=tmp_path)
    assert unknown.returncode != 0 and "unknown task(s) nonesuch" in unknown.stderr
    missing = _bench("--tasks", "relu", "--no-tune", "--seeds", "1", "--reps", "1", out=tmp_path)
    assert missing.returncode == 0, missing.stderr
    row = json.load(open(tmp_path / "report.json"))["tasks"][0]
    assert row["kforge"]["status"] == "no kernel" and "holds no tuning run" in row["kforge"]["why"]
    bad = _bench("--tasks", "relu", "--seeds", "0", out=tmp_path)
    assert bad.returncode != 0 and "--seeds" in bad.stderr
    cpu_l2 = _bench("--tasks", "relu", "--l2", "clean", out=tmp_path)
    assert cpu_l2.returncode != 0 and "--l2 is the cuda backend's L2 flush" in cpu_l2.stderr
    l2_typo = _bench("--tasks", "relu", "--l2", "warm", out=tmp_path)
    assert l2_typo.returncode != 0 and "invalid choice: 'warm'" in l2_typo.stderr


def test_tune_only_then_measure(tmp_path):
    tuned = _bench("--tasks", "relu", "--tune-only", "--trials", "2", out=tmp_path)
    assert tuned.returncode == 0, tuned.stderr
    assert "relu: 2 trials" in tuned.stderr and not (tmp_path / "report.json").exists()
    measured = _bench("--tasks", "relu", "--no-tune", "--seeds", "2", "--reps", "3", out=tmp_path)
    assert measured.returncode == 0, measured.stderr
    assert json.load(open(tmp_path / "report.json"))["tasks"][0]["kforge"]["status"] == "correct"
    both = _bench("--tasks", "relu", "--no-tune", "--tune-only", out=tmp_path)
    assert both.returncode != 0 and "exclude each other" in both.stderr


def _load_bench_run():
    """bench/run (a script without .py) as a module, for its functions."""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("bench_run", os.path.join(ROOT, "bench", "run"))
    spec = importlib.util.spec_from_loader("bench_run", loader)
    bench_run = importlib.util.module_from_spec(spec)
    loader.exec_module(bench_run)
    return bench_run


def test_embedded_fatbin_is_found(tmp_path):
    """The instruction mix needs the GPU binary MLIR embeds in a kernel library; find it by its header."""
    bench_run = _load_bench_run()
    import struct
    payload = b"\x01" * 40
    blob = struct.pack("<IHHQ", bench_run.FATBIN_MAGIC, 1, 16, len(payload)) + payload
    library = tmp_path / "kernel.so"
    library.write_bytes(b"\x7fELF" + b"\x00" * 100 + blob + b"\xff" * 64)
    assert bench_run.embedded_fatbin(str(library)) == blob
    (tmp_path / "plain.so").write_bytes(b"\x7fELF" + b"\x00" * 100)
    assert bench_run.embedded_fatbin(str(tmp_path / "plain.so")) is None
    # A schedule with a kernel split (transpose_b's copy, then the matmul) embeds one fatbin per kernel module:
    # the instruction mix counts them all (it had counted the copy's alone).
    second = struct.pack("<IHHQ", bench_run.FATBIN_MAGIC, 1, 16, 24) + b"\x02" * 24
    (tmp_path / "two.so").write_bytes(b"\x7fELF" + b"\x00" * 100 + blob + b"\x00" * 8 + second + b"\xff" * 8)
    assert bench_run.embedded_fatbins(str(tmp_path / "two.so")) == [blob, second]


def test_bf16_tasks_are_skipped_on_the_cpu_backend_and_floored_at_the_bf16_rate(tmp_path):
    result = _bench("--tasks", "relu,matmul_square_bf16", "--trials", "2", "--seeds", "1", "--reps", "3",
                    out=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "not measured on the cpu backend: matmul_square_bf16" in result.stderr
    results = json.load(open(tmp_path / "report.json"))
    assert [r["task"] for r in results["tasks"]] == ["relu"] and results["not_measured"] == ["matmul_square_bf16"]
    ceilings = {"copy_gbps": 4000, "fp32_tflops": 50, "bf16_tflops": 700}
    assert measure.floor_ms(4, 7e11, ceilings, "bf16") == pytest.approx(1.0)
    assert measure.floor_ms(4, 5e10, ceilings, "f32") == pytest.approx(1.0)
    assert tasks.by_name("matmul_square_bf16").tolerance == 2.0 ** -8


@pytest.mark.parametrize("backend,l2,expected", [("cuda", "clean", ["--l2-flush", "clean"]),
                                                 ("cuda", "dirty", ["--l2-flush", "dirty"]), ("cpu", "dirty", [])])
def test_bench_run_tunes_with_the_flush_it_measures_with(tmp_path, monkeypatch, backend, l2, expected):
    """bench/run --l2 reaches kforge-tune (--l2-flush), so the search times its trials as the benchmark does."""
    from types import SimpleNamespace
    bench_run = _load_bench_run()
    calls = []

    def fake_tune(payload, run_dir, **kwargs):
        calls.append(kwargs)
        os.makedirs(run_dir, exist_ok=True)  # kforge-tune makes its run directory
        return SimpleNamespace(records=[], best=None)
    monkeypatch.setattr(bench_run.kforge, "tune", fake_tune)
    task = SimpleNamespace(name="relu", mlir=lambda shape: "// payload\n")
    args = SimpleNamespace(no_tune=False, backend=backend, l2=l2, trials=2, time_budget=5, tune_seeds=1,
                           tools=str(tmp_path))
    bench_run.tune(task, [4], args, str(tmp_path))
    assert calls[0]["extra_args"] == ["--quiet"] + expected


def test_tf32_tasks_allow_tf32_to_kforge_and_are_floored_at_the_tf32_rate(tmp_path, monkeypatch):
    """A task that allows TF32 (issue 34) tunes with kforge-tune --allow-tf32, is judged at TF32's tolerance
    (2^-9), floored at the measured TF32 rate, and is not measured on the CPU (no TF32 there)."""
    from types import SimpleNamespace
    task = tasks.by_name("linear_square_tf32")
    assert task.precision == "tf32" and task.dtype == "f32" and task.tolerance == 2.0 ** -9
    assert tasks.by_name("linear_square").precision == "ieee" and tasks.by_name("linear_square").tolerance == 1e-4
    assert not measure.CpuBackend().supports(task) and measure.CpuBackend().supports(tasks.by_name("linear_square"))
    ceilings = {"copy_gbps": 4000, "fp32_tflops": 50, "tf32_tflops": 400}
    assert measure.floor_ms(4, 4e11, ceilings, "tf32") == pytest.approx(1.0)
    bench_run = _load_bench_run()
    calls = []

    def fake_tune(payload, run_dir, **kwargs):
        calls.append(kwargs)
        os.makedirs(run_dir, exist_ok=True)
        return SimpleNamespace(records=[], best=None)
    monkeypatch.setattr(bench_run.kforge, "tune", fake_tune)
    args = SimpleNamespace(no_tune=False, backend="cuda", l2="dirty", trials=2, time_budget=5, tune_seeds=1,
                           tools=str(tmp_path))
    bench_run.tune(task, task.small, args, str(tmp_path))
    bench_run.tune(tasks.by_name("linear_square"), task.small, args, str(tmp_path / "ieee"))
    assert calls[0]["extra_args"] == ["--quiet", "--l2-flush", "dirty", "--allow-tf32"]
    assert calls[1]["extra_args"] == ["--quiet", "--l2-flush", "dirty"]
