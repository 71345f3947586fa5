"""kforge.distributed on a local Ray cluster of 2 CPUs, CPU target (test/Python/distributed.test): many payloads with
several measurers, a measurer and the database writer killed mid-run, a driver killed and resumed, bad input."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import BUILD, ROOT

ray = pytest.importorskip("ray")
from kforge import distributed  # noqa: E402

TUNE_ARGS = ["--seeds", "1", "--reps", "10", "--timing-budget-ms", "50"]
CLI = os.path.join(ROOT, "scripts", "kforge-tune-many")


def matmul(m, n, k):
    return f"""func.func @mm(%A: tensor<{m}x{k}xf32>, %B: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<{m}x{n}xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %C = linalg.matmul ins(%A, %B : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%init : tensor<{m}x{n}xf32>)
    -> tensor<{m}x{n}xf32>
  return %C : tensor<{m}x{n}xf32>
}}
"""


def row_sum(m, n):
    return f"""#a = affine_map<(i, j) -> (i, j)>
#r = affine_map<(i, j) -> (i)>
func.func @rs(%X: tensor<{m}x{n}xf32>) -> tensor<{m}xf32> {{
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<{m}xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<{m}xf32>) -> tensor<{m}xf32>
  %s = linalg.generic {{indexing_maps = [#a, #r], iterator_types = ["parallel", "reduction"]}}
      ins(%X : tensor<{m}x{n}xf32>) outs(%init : tensor<{m}xf32>) {{
  ^bb0(%x: f32, %acc: f32):
    %t = arith.addf %x, %acc : f32
    linalg.yield %t : f32
  }} -> tensor<{m}xf32>
  return %s : tensor<{m}xf32>
}}
"""


def relu(m, n):
    return f"""#a = affine_map<(i, j) -> (i, j)>
func.func @relu(%X: tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<{m}x{n}xf32>
  %y = linalg.generic {{indexing_maps = [#a, #a], iterator_types = ["parallel", "parallel"]}}
      ins(%X : tensor<{m}x{n}xf32>) outs(%empty : tensor<{m}x{n}xf32>) {{
  ^bb0(%x: f32, %o: f32):
    %t = arith.maximumf %x, %zero : f32
    linalg.yield %t : f32
  }} -> tensor<{m}x{n}xf32>
  return %y : tensor<{m}x{n}xf32>
}}
"""


PAYLOADS = {"mm64": matmul(64, 64, 64), "mm64x128": matmul(64, 128, 32), "mm128x64": matmul(128, 64, 64),
            "mm32x128": matmul(32, 128, 64), "rowsum128": row_sum(128, 256), "rowsum64": row_sum(64, 512),
            "relu128": relu(128, 128), "relu64": relu(64, 256)}


@pytest.fixture(scope="module")
def cluster():
    os.environ["KFORGE_BUILD_DIR"] = BUILD
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.path.join(ROOT, "python")}})
    yield
    ray.shutdown()


@pytest.fixture()
def payloads(tmp_path):
    paths = []
    for name, text in PAYLOADS.items():
        path = tmp_path / "payloads" / f"{name}.mlir"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        paths.append(str(path))
    return paths


def db_lines(run_dir):
    with open(os.path.join(run_dir, "db.jsonl"), "rb") as f:
        data = f.read()
    assert data.endswith(b"\n"), f"{run_dir}: a last line cut short"
    return [json.loads(line) for line in data.splitlines()]


def check_run(run_dir, trials, recorded=()):
    """Whole, unique lines; one baseline and `trials` candidates; every record reported before is there verbatim."""
    records = db_lines(run_dir)
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids)), f"{run_dir}: duplicate ids {ids}"
    hashes = [r["schedule_hash"] for r in records if r["kind"] == "candidate"]
    assert len(hashes) == len(set(hashes)), f"{run_dir}: a schedule measured twice"
    assert [r["kind"] for r in records].count("baseline") == 1
    assert len(hashes) == trials, f"{run_dir}: {len(hashes)} trials, not {trials}"
    by_id = {r["id"]: r for r in records}
    for r in recorded:
        assert by_id.get(r["id"]) == r, f"{run_dir}: record {r['id']} lost or changed"
    return records


def states(summary):
    """Each payload's state and error, one line each, as text: pytest prints a string message whole, but cuts the
    repr of any other object to a few hundred characters (CI once showed only "timing: th...")."""
    return "\n".join(f"{r['name']}: {r['state']}: {r['error']}" for r in summary["payloads"])


def test_many_payloads_and_a_killed_measurer(cluster, payloads, tmp_path):
    """8 payloads, 3 measurers; the measurer that got the 3rd trial is killed (SIGKILL) right after: its trial is
    retried on a measurer Ray restarts, no finished record is lost and every payload gets its trials."""
    events, recorded = [], {}
    pids, killed = [], []

    def on_event(event):
        events.append(event)
        if event["kind"] == "start":
            pids.extend(event["measurer_pids"])
        if event["kind"] == "trial":
            recorded.setdefault(event["payload"], []).append(event["record"])
        if event["kind"] == "dispatch" and not killed and len([e for e in events if e["kind"] == "dispatch"]) == 3:
            killed.append(pids[event["measurer"]])
            os.kill(pids[event["measurer"]], signal.SIGKILL)

    out = tmp_path / "many"
    summary = distributed.tune_many(payloads, str(out), target="cpu", trials=2, measurers=3, batch=2,
                                    extra_args=TUNE_ARGS, on_event=on_event)
    kinds = [e["kind"] for e in events]
    assert killed and "measurer-died" in kinds and "trial-retry" in kinds, kinds
    assert all(r["state"] == "done" for r in summary["payloads"]), states(summary)
    assert summary["trials"] == 2 * len(payloads)
    for name in PAYLOADS:
        check_run(str(out / name), 2, recorded.get(name, []))
    # The result is an ordinary kforge-tune run: summary files, best exported, --replay rebuilds the best.
    assert json.loads((out / "summary.json").read_text())["format"] == "kforge-tune-many/1"
    assert "| [mm64](mm64/report.md) | done | 2 |" in (out / "summary.md").read_text()
    best = [r for r in summary["payloads"] if r["best_id"] is not None][0]
    assert os.path.exists(os.path.join(best["run_dir"], "best.mlir"))
    subprocess.run([os.path.join(BUILD, "bin", "kforge-tune"), "--replay", best["run_dir"], "--build-only",
                    "--quiet"], check=True, timeout=120)


def test_killed_writer_loses_no_record(cluster, payloads, tmp_path):
    """The database writer killed after the first record: Ray restarts it, it takes the run locks again, and the
    appends retried after it died are written once."""
    state = {"killed": False}

    def on_event(event):
        if event["kind"] == "start":
            state["writer"] = event["writer_pid"]
        if event["kind"] == "trial" and not state["killed"]:
            state["killed"] = True
            os.kill(state["writer"], signal.SIGKILL)

    out = tmp_path / "writer"
    summary = distributed.tune_many(payloads[:2], str(out), target="cpu", trials=3, measurers=2,
                                    extra_args=TUNE_ARGS, on_event=on_event)
    assert state["killed"] and all(r["state"] == "done" for r in summary["payloads"]), f"{state}\n{states(summary)}"
    for name in list(PAYLOADS)[:2]:
        check_run(str(out / name), 3)


def test_writer_killed_before_the_set_ups(cluster, payloads, tmp_path):
    """The database writer killed as the run starts, before any payload's set-up opens its database: the opens,
    appends and closes go to the writer Ray restarts (Ray retries a call that a dying actor lost; the driver
    retries one that still fails with the actor's death), and no payload loses its run."""
    state = {"killed": False}

    def on_event(event):
        if event["kind"] == "start" and not state["killed"]:
            state["killed"] = True
            os.kill(event["writer_pid"], signal.SIGKILL)

    out = tmp_path / "early"
    summary = distributed.tune_many(payloads[:2], str(out), target="cpu", trials=2, measurers=1,
                                    extra_args=TUNE_ARGS, on_event=on_event)
    assert state["killed"] and all(r["state"] == "done" for r in summary["payloads"]), f"{state}\n{states(summary)}"
    for name in list(PAYLOADS)[:2]:
        check_run(str(out / name), 2)


def test_unparsable_payload(cluster, payloads, tmp_path, capsys):
    """A payload kforge cannot analyse fails alone, with kforge-tune's reason; the others are tuned; exit 1."""
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f( this is not MLIR\n")
    rc = distributed.main([str(bad), payloads[0], "-o", str(tmp_path / "bad-run"), "--target", "cpu", "--trials",
                           "1", "--measurers", "1", "--", *TUNE_ARGS])
    assert rc == 1
    err = capsys.readouterr().err
    assert "kforge-tune-many: error: bad (" in err and "cannot analyse" in err, err
    summary = json.loads((tmp_path / "bad-run" / "summary.json").read_text())
    assert [r["state"] for r in summary["payloads"]] == ["error", "done"]


def run_cli(*args, **kwargs):
    env = dict(os.environ, KFORGE_BUILD_DIR=BUILD)
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, timeout=120, **kwargs)


def test_resume_after_the_driver_is_killed(payloads, tmp_path):
    """The CLI (its own local Ray) killed after its first record; --resume with a larger budget keeps every record
    and finishes the runs."""
    out = str(tmp_path / "resume")
    env = dict(os.environ, KFORGE_BUILD_DIR=BUILD)
    args = [CLI, payloads[0], payloads[4], "-o", out, "--target", "cpu", "--num-cpus", "2", "--trials", "3",
            "--batch", "1", "--measurers", "1", "--", *TUNE_ARGS]
    driver = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    deadline = time.monotonic() + 120
    for line in driver.stderr:
        if ": trial " in line or time.monotonic() > deadline:
            break
    os.killpg(driver.pid, signal.SIGKILL)
    driver.wait()
    before = {name: db_lines(os.path.join(out, name)) for name in ("mm64", "rowsum128")}
    assert sum(len(r) for r in before.values()) >= 3, before  # two baselines and at least one trial
    refused = run_cli(payloads[0], payloads[4], "-o", out, "--target", "cpu", "--trials", "3")
    assert refused.returncode == 2 and "--resume continues it" in refused.stderr, refused.stderr
    resumed = run_cli(payloads[0], payloads[4], "-o", out, "--target", "cpu", "--num-cpus", "2", "--trials", "4",
                      "--resume", "--", *TUNE_ARGS)
    assert resumed.returncode == 0, resumed.stderr
    for name, records in before.items():
        after = check_run(os.path.join(out, name), 4)
        assert after[:len(records)] == records


def test_bad_input(payloads, tmp_path):
    missing = run_cli(str(tmp_path / "nope.mlir"), "-o", str(tmp_path / "o"))
    assert missing.returncode == 2 and "no such payload:" in missing.stderr, missing.stderr
    start = time.monotonic()
    unreachable = run_cli(payloads[0], "-o", str(tmp_path / "o"), "--ray", "127.0.0.1:1")
    assert unreachable.returncode == 2 and "cannot reach the Ray cluster at 127.0.0.1:1" in unreachable.stderr
    assert time.monotonic() - start < 60
    malformed = run_cli(payloads[0], "-o", str(tmp_path / "o"), "--ray", "nonsense")
    assert malformed.returncode == 2 and "bad --ray address 'nonsense'" in malformed.stderr, malformed.stderr
    usage = run_cli(payloads[0], "-o", str(tmp_path / "o"), "--trials", "0")
    assert usage.returncode == 2 and "must be at least 1" in usage.stderr, usage.stderr


def test_writer_appends_once_and_repairs(tmp_path):
    """The writer (here without Ray): a record appended twice is one line; a line cut short by a crash is dropped
    when it opens the run again; a second writer on a locked run is refused."""
    run = tmp_path / "run"
    run.mkdir()
    baseline = {"format": "kforge-tune-record/1", "id": 0, "kind": "baseline", "status": "correct", "time_ms": 1.0}
    (run / "db.jsonl").write_text(json.dumps(baseline) + "\n" + '{"format": "kforge-tune-rec')
    writer = distributed._DatabaseWriter()
    assert writer.open(str(run)) == 1
    record = dict(baseline, id=1, kind="candidate", schedule_hash="h1")
    assert writer.append(str(run), record) is True
    assert writer.append(str(run), record) is False
    assert [r["id"] for r in db_lines(str(run))] == [0, 1]
    with pytest.raises(distributed.TuneError, match="in use by another kforge-tune"):
        distributed._DatabaseWriter().open(str(run))
    with pytest.raises(distributed.TuneError, match="not a tuning record"):
        writer.append(str(run), {"id": 2})
    writer.close(str(run))
    assert distributed._DatabaseWriter().open(str(run)) == 2
