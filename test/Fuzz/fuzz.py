#!/usr/bin/env python3
"""kforge's fuzz suite (issue 36, "Hardening"): many malformed or hostile inputs per class, run through the
tools with deadlines, every run classified. Python 3 standard library only; deterministic for a seed.

usage: fuzz.py --build BUILD_DIR --src SOURCE_DIR --work WORK_DIR [--cases N] [--seed S] [--jobs J]
               [--only CATEGORY[,CATEGORY]] [--summary FILE] [--list]

Categories (docs/reliability.md): payload (mutated payload .mlir files), schedule (random, nested, huge JSON
schedules for --validate/--render/--try), manifest (mutated artifact manifests and libraries for kforge-run),
db (corrupted run directories for --resume/--replay, two resumes at once, a full disk), flags (hostile flag
values for every tool), transform (mutated transform scripts from recipes/ and --render output, and scripts
that read or write files), llm (hostile endpoint replies through a mock on loopback), artifact (forged-verdict
kernels, crashing and misbehaving libraries, planted caches).

Every run is classified:
  crash          killed by a signal, or a crash marker (LLVM ERROR, Stack dump, Assertion, terminate called,
                 Segmentation, ...) on its stderr or in a compiler log it left;
  hang           still running at its deadline (the process group is killed);
  false_verdict  a wrong kernel reported "correct";
  key_leak       the fake API key found in any file under the case's directory, the tools' stdout/stderr, a
                 request body sent to the mock endpoint, or a child's environment;
  violation      the case's own expectation broken: an invalid value accepted (exit 0), a file written outside
                 the output directory, raw HTML/ANSI in a report, an innocent trial harmed, a forged timing
                 reported.
A JSON summary (counts per class and per category, the failing cases with their saved inputs and a command to
reproduce each) goes to --summary (default WORK/summary.json); the exit status is 1 if any count is non-zero.

KFORGE_FUZZ_CASES (or --cases) scales the random cases (default 300; the pinned cases of the issue always run);
KFORGE_FUZZ_SEED (or --seed) the seed; KFORGE_FUZZ_JOBS (or --jobs) the parallel runs (default 2).
"""
import argparse
import array
import concurrent.futures
import glob
import hashlib
import http.server
import json
import os
import random
import re
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time

CLASSES = ["crash", "hang", "false_verdict", "key_leak", "violation"]
CRASH_MARKERS = ["LLVM ERROR", "Stack dump", "Assertion", "terminate called", "Segmentation fault",
                 "PLEASE submit a bug report", "AddressSanitizer", "double free or corruption", "stack smashing",
                 "UNREACHABLE executed", "core dumped"]
# Lines that name a contained crash of a candidate (kforge-run's verdicts, kforge-tune's trial lines).
CONTAINED = re.compile(r"crashed: signal|\"reason\"|\"status\"|trial \d+:|failed: |executor")
SAVE_LIMIT = 1 << 20
MEMORY_LIMIT = 6 << 30  # address space of each run (and its children)
# What the fuzzer itself puts in a case directory.
SCAFFOLD = {"in", "tmp", "stdout", "stderr", "stdin", "requests.jsonl.txt"}


class Config:
    def __init__(self, args):
        self.build = os.path.abspath(args.build)
        self.src = os.path.abspath(args.src)
        self.work = os.path.abspath(args.work)
        self.bin = os.path.join(self.build, "bin")
        self.seed = args.seed
        self.key = "sk-fuzz-" + hashlib.sha256(str(args.seed).encode()).hexdigest()[:32]
        # The tools are copied once, so that a rebuild during the run cannot change them under the cases.
        self.tool = {t: os.path.join(self.work, "bin", t) for t in ("kforge-opt", "kforge-compile", "kforge-run",
                                                                    "kforge-tune")}
        self.home = os.path.join(self.work, "home")
        self.spy_log = os.path.join(self.work, "spybin", "env.jsonl")


# ---------------------------------------------------------------------------------------------------------------
# Cases and their runs
# ---------------------------------------------------------------------------------------------------------------
class Case:
    """One run of one tool: argv (strings; "{dir}" becomes the case directory), files to write under in/, a
    deadline, and the checks beyond crash/hang/key leak (`expect`, called with the Result)."""

    def __init__(self, category, name, argv, files=None, timeout=60, expect=None, setup=None, stdin=None,
                 env=None, fsize=None, watch=True, pinned=False, cwd=None, driver=None, allowed=None):
        self.category, self.name, self.argv = category, name, argv
        self.allowed = set(allowed or ["out", "run"]) | SCAFFOLD
        self.files = files or {}
        self.timeout, self.expect, self.setup, self.stdin, self.env = timeout, expect, setup, stdin, env or {}
        self.fsize, self.watch, self.pinned, self.cwd, self.driver = fsize, watch, pinned, cwd, driver
        self.id = None
        self.dir = None


class Result:
    def __init__(self, case, rc, elapsed, out_path, err_path):
        self.case, self.rc, self.elapsed = case, rc, elapsed
        self.out_path, self.err_path = out_path, err_path
        self.hung = rc == "HANG"
        self.extra = {}  # what a driver case found (e.g. serve replies)

    def text(self, which, limit=4 << 20):
        path = self.out_path if which == "out" else self.err_path
        with open(path, "rb") as f:
            return f.read(limit).decode(errors="replace")

    @property
    def out(self):
        return self.text("out")

    @property
    def err(self):
        return self.text("err")

    def json_report(self):
        """The first JSON object on stdout, or None."""
        text = self.out
        start = text.find("{")
        if start < 0:
            return None
        try:
            return json.JSONDecoder().raw_decode(text, start)[0]
        except ValueError:
            return None


def sub(value, case):
    return value.replace("{dir}", case.dir) if isinstance(value, str) else value


def materialize(case):
    os.makedirs(os.path.join(case.dir, "in"), exist_ok=True)
    os.makedirs(os.path.join(case.dir, "tmp"), exist_ok=True)
    for rel, content in case.files.items():
        path = os.path.join(case.dir, "in", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(content, Special):
            content.make(path)
        else:
            with open(path, "wb") as f:
                f.write(content if isinstance(content, bytes) else content.encode())
    if case.setup:
        case.setup(case)


class Special:
    """A non-regular input: a symlink to a device, a FIFO, a directory."""

    def __init__(self, kind, target=None):
        self.kind, self.target = kind, target

    def make(self, path):
        if self.kind == "symlink":
            os.symlink(self.target, path)
        elif self.kind == "fifo":
            os.mkfifo(path)
        elif self.kind == "dir":
            os.makedirs(path, exist_ok=True)


def snapshot(root, allowed):
    """Files under root outside the allowed paths (relative directories or files)."""
    found = set()
    for base, dirs, files in os.walk(root):
        rel = os.path.relpath(base, root)
        if rel != "." and rel in allowed:
            dirs[:] = []
            continue
        for name in files + [d for d in dirs if os.path.islink(os.path.join(base, d))]:
            path = os.path.normpath(os.path.join(rel, name))
            if path not in allowed:
                found.add(path)
    return found


def run_process(cfg, case):
    argv = [sub(a, case) for a in case.argv]
    env = dict(os.environ)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "KFORGE_LLM_ENDPOINT", "KFORGE_LLM_MODEL", "KFORGE_LLM_API"):
        env.pop(name, None)
    env.update(TMPDIR=os.path.join(case.dir, "tmp"), HOME=cfg.home, XDG_CACHE_HOME=os.path.join(cfg.home, ".cache"))
    env.update({k: sub(v, case) for k, v in case.env.items()})
    out_path, err_path = os.path.join(case.dir, "stdout"), os.path.join(case.dir, "stderr")
    fsize = case.fsize

    def limits():
        # A tool that reads /dev/zero into memory must not take the machine with it.
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
        if fsize:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # stays ignored across exec: writes fail with EFBIG
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    stdin = subprocess.DEVNULL
    if case.stdin is not None:
        stdin_path = os.path.join(case.dir, "stdin")
        with open(stdin_path, "wb") as f:
            f.write(sub(case.stdin, case).encode() if isinstance(case.stdin, str) else case.stdin)
        stdin = open(stdin_path, "rb")
    start = time.time()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(argv, stdin=stdin, stdout=out, stderr=err, env=env, cwd=sub(case.cwd, case) or case.dir,
                                start_new_session=True, preexec_fn=limits)
        try:
            rc = proc.wait(timeout=case.timeout)
        except subprocess.TimeoutExpired:
            rc = "HANG"
        for sig in (signal.SIGCONT, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)  # whatever it started and left behind, in its own session
            except (ProcessLookupError, PermissionError):
                pass
        if rc == "HANG":
            proc.wait()
    if stdin is not subprocess.DEVNULL:
        stdin.close()
    return Result(case, rc, time.time() - start, out_path, err_path)


def crash_lines(text):
    return [line for line in text.splitlines() if any(m in line for m in CRASH_MARKERS) and not CONTAINED.search(line)]


def classify(cfg, result, before):
    case, findings = result.case, []
    if result.hung:
        findings.append(("hang", "no exit within %d s" % case.timeout))
    elif isinstance(result.rc, int) and result.rc < 0:
        findings.append(("crash", "killed by signal %d (%s)" % (-result.rc, signal.Signals(-result.rc).name)))
    # Under a file size limit LLVM's handler prints a stack dump for SIGXFSZ and the write then fails with EFBIG
    # (a real full disk raises no signal): there only a death by signal counts as a crash.
    lines = crash_lines(result.text("err")) if not case.fsize else []
    if lines:
        findings.append(("crash", "stderr: " + lines[0][:200]))
    # Compiler logs a run left (kforge-tune's compile.log of each candidate, kforge-compile's own logs).
    for path in glob.glob(os.path.join(case.dir, "**", "*.log"), recursive=True) + \
            glob.glob(os.path.join(case.dir, "**", "log"), recursive=True):
        if "runner" in os.path.basename(path) or "run.log" == os.path.basename(path):
            continue  # the candidate's own output (a contained crash is its verdict)
        with open(path, "rb") as f:
            lines = crash_lines(f.read(1 << 20).decode(errors="replace"))
        if lines:
            findings.append(("crash", "%s: %s" % (os.path.relpath(path, case.dir), lines[0][:200])))
            break
    # The key: anywhere under the case directory but the inputs, on stdout/stderr, in a child's environment.
    leaks = []
    for base, dirs, files in os.walk(case.dir):
        if os.path.relpath(base, case.dir).split(os.sep)[0] in ("in",):
            dirs[:] = []
            continue
        for name in files:
            path = os.path.join(base, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            try:
                with open(path, "rb") as f:
                    if cfg.key.encode() in f.read(64 << 20):
                        leaks.append(os.path.relpath(path, case.dir))
            except OSError:
                pass
    if leaks:
        findings.append(("key_leak", "key found in " + ", ".join(sorted(leaks)[:6])))
    for entry in result.extra.get("spy", []):
        if entry.get("secret"):
            findings.append(("key_leak", "%s inherited the key in its environment" % entry["tool"]))
            break
    if result.extra.get("key_in_body"):
        findings.append(("key_leak", "the key was sent to the endpoint in a request body"))
    if result.extra.get("key_to_sink"):
        findings.append(("key_leak", "the key was sent to the server a redirect named"))
    if case.watch:
        after = snapshot(case.dir, case.allowed)
        escaped = sorted(after - before)
        if escaped:
            findings.append(("violation", "wrote outside its output directory: " + ", ".join(escaped[:5])))
    if case.expect:
        try:
            for finding in case.expect(result) or []:
                findings.append(finding)
        except Exception as error:  # an expectation that cannot read the result: say so, do not crash the fuzzer
            findings.append(("violation", "unexpected result (%s: %s)" % (type(error).__name__, error)))
    return findings


def spy_entries(cfg, case):
    if not os.path.exists(cfg.spy_log):
        return []
    entries = []
    with open(cfg.spy_log) as f:
        for line in f:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if case.dir in entry.get("argv", "") or case.dir in entry.get("cwd", ""):
                entries.append(entry)
    return entries


def execute(cfg, case):
    materialize(case)
    before = snapshot(case.dir, case.allowed)
    if case.driver:
        result = case.driver(cfg, case)
    else:
        result = run_process(cfg, case)
    result.extra.setdefault("spy", spy_entries(cfg, case))
    findings = classify(cfg, result, before)
    return result, findings


# ---------------------------------------------------------------------------------------------------------------
# Shared fixtures, made once
# ---------------------------------------------------------------------------------------------------------------
class Fixtures:
    def __init__(self, cfg):
        self.cfg = cfg
        self.dir = os.path.join(cfg.work, "fixtures")
        os.makedirs(self.dir, exist_ok=True)
        os.makedirs(cfg.home, exist_ok=True)
        runner_inputs = os.path.join(cfg.src, "test", "Runner", "Inputs")
        sys.path.insert(0, runner_inputs)
        import forge  # noqa: E402 (test/Runner/Inputs/forge.py)
        self.forge = forge
        self.payload = os.path.join(runner_inputs, "reference.mlir")
        env = dict(os.environ, HOME=cfg.home, XDG_CACHE_HOME=os.path.join(cfg.home, ".cache"))
        self.env = env

        def compile_(source, name, *extra):
            out = os.path.join(self.dir, name)
            subprocess.run([cfg.tool["kforge-compile"], source, "--target", "cpu", "-o", out] + list(extra),
                           check=True, env=env, stdout=subprocess.DEVNULL)
            return out

        self.reference = compile_(self.payload, "reference")
        self.correct = compile_(os.path.join(runner_inputs, "correct.mlir"), "correct")
        self.zeros = compile_(os.path.join(runner_inputs, "zeros.mlir"), "zeros")
        self.forged = {a: forge.forge(self.reference, a, os.path.join(self.dir, "forged", a))
                       for a in forge.ATTACKS}
        # A finished run to corrupt (db) and the schedules the heuristic proposes (schedule, llm).
        self.run = os.path.join(self.dir, "run")
        subprocess.run([cfg.tool["kforge-tune"], self.payload, "--target", "cpu", "--trials", "2", "--seeds", "1",
                        "--reps", "10", "--jobs", "2", "--quiet", "-o", self.run], check=True, env=env)
        out = subprocess.run([cfg.tool["kforge-tune"], self.payload, "--target", "cpu", "--dry-run", "40"],
                             check=True, env=env, stdout=subprocess.PIPE, text=True).stdout
        self.schedules = []
        for line in out.splitlines():
            actions = json.loads(line)["actions"]
            if actions not in self.schedules:
                self.schedules.append(actions)
        self.rendered = []
        for i, schedule in enumerate(self.schedules[:6]):
            path = os.path.join(self.dir, "schedule%d.json" % i)
            with open(path, "w") as f:
                json.dump(schedule, f)
            self.rendered.append(subprocess.run([cfg.tool["kforge-tune"], self.payload, "--target", "cpu", "--render",
                                                 path], check=True, env=env, stdout=subprocess.PIPE,
                                                text=True).stdout)
        self.recipes = sorted(glob.glob(os.path.join(cfg.src, "recipes", "*.mlir")))
        self.payloads = sorted(set(glob.glob(os.path.join(cfg.src, "test", "Runner", "Inputs", "*.mlir")) +
                                   glob.glob(os.path.join(cfg.src, "examples", "cpu", "*.mlir")) +
                                   glob.glob(os.path.join(cfg.src, "test", "Artifact", "Inputs", "*.mlir")) +
                                   [os.path.join(cfg.src, "examples", e + ".mlir") for e in
                                    ("softmax", "layernorm", "elementwise_chain", "row_sum")]))
        self.payloads = [p for p in self.payloads if os.path.exists(p) and os.path.getsize(p) < 20000]
        self.spybin = self.make_spybin()

    def make_spybin(self):
        """A copy of kforge-tune beside wrappers of kforge-compile and kforge-run that log whether their
        environment holds the key (attributed to a case by the paths in their arguments), then exec the real
        tool. The log's path is written into the wrappers, so a scrubbed environment cannot hide them."""
        cfg = self.cfg
        spy = os.path.join(cfg.work, "spybin")
        os.makedirs(spy, exist_ok=True)
        shutil.copy(cfg.tool["kforge-tune"], os.path.join(spy, "kforge-tune"))
        for tool in ("kforge-compile", "kforge-run"):
            path = os.path.join(spy, tool)
            with open(path, "w") as f:
                f.write("#!%s\nimport fcntl, json, os, sys\n"
                        "key = %r\n"
                        "entry = {'tool': %r, 'argv': ' '.join(sys.argv[1:])[:4000], 'cwd': os.getcwd(),\n"
                        "         'secret': any(key in v for v in os.environ.values())}\n"
                        "with open(%r, 'a') as log:\n"
                        "    fcntl.flock(log, fcntl.LOCK_EX)\n"
                        "    log.write(json.dumps(entry) + '\\n')\n"
                        "os.execv(%r, [%r] + sys.argv[1:])\n"
                        % (sys.executable, cfg.key, tool, cfg.spy_log, cfg.tool[tool], cfg.tool[tool]))
            os.chmod(path, 0o755)
        return spy


# ---------------------------------------------------------------------------------------------------------------
# Expectations
# ---------------------------------------------------------------------------------------------------------------
def refused(what):
    """The input is invalid: the tool must say so and exit non-zero."""
    def check(result):
        if result.rc == 0:
            yield ("violation", "accepted %s (exit 0)" % what)
    return check


def bad_usage(what):
    """kforge-run: an invalid option is bad usage (docs/runner.md: exit status 2)."""
    def check(result):
        if isinstance(result.rc, int) and result.rc >= 0 and result.rc != 2:
            yield ("violation", "accepted %s (exit %s, not 2 for bad usage)" % (what, result.rc))
    return check


def no_injected_asm(result):
    """llvm.module_asm (in a payload or a schedule) is refused, or at least never reaches the artifact."""
    if result.rc != 0:
        return
    for so in glob.glob(os.path.join(result.case.dir, "out", "**", "*.so"), recursive=True):
        with open(so, "rb") as f:
            if b"kforge_injected_asm" in f.read():
                yield ("violation", "the module_asm reached the artifact (%s)" % os.path.relpath(so, result.case.dir))
                return


def all_of(*checks):
    def check(result):
        for c in checks:
            if c:
                yield from c(result) or []
    return check


def one_report(result):
    """kforge-run: exactly one JSON report on stdout, exit 0 only when it says correct."""
    report = result.json_report()
    if result.hung or (isinstance(result.rc, int) and result.rc < 0):
        return
    if report is None:
        if result.rc not in (1, 2):
            yield ("violation", "no JSON report and exit %s" % result.rc)
        return
    if (report.get("status") == "correct") != (result.rc == 0):
        yield ("violation", "exit %s with status %s" % (result.rc, report.get("status")))


def never_correct(what):
    def check(result):
        report = result.json_report()
        if report and report.get("status") == "correct":
            yield ("false_verdict", "%s reported correct" % what)
    return check


def report_clean(run_rel):
    """report.md / report.svg hold no raw control characters, HTML or script from a record."""
    def check(result):
        for name in ("report.md", "report.svg"):
            path = os.path.join(result.case.dir, run_rel, name)
            if not os.path.exists(path):
                continue
            with open(path, "rb") as f:
                text = f.read(8 << 20).decode(errors="replace")
            if re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", text):
                yield ("violation", "%s holds raw control characters (ANSI escapes) from a record" % name)
            tags = r"script|img|iframe|object|embed|foreignObject|image|a" + ("" if name.endswith(".svg") else "|svg")
            if re.search(r"<\s*(%s)\b|(?<!\\)\]\(\s*javascript:|\son\w+\s*=\s*[\"']" % tags, text, re.I):
                yield ("violation", "%s holds raw HTML/script from a record" % name)
    return check


def db_intact(run_rel):
    """After exit 0 a database is whole: every line parses."""
    def check(result):
        path = os.path.join(result.case.dir, run_rel, "db.jsonl")
        if result.rc != 0 or not os.path.exists(path):
            return
        with open(path, "rb") as f:
            for n, line in enumerate(f.read().splitlines()):
                try:
                    json.loads(line)
                except ValueError:
                    yield ("violation", "exit 0 but db.jsonl line %d does not parse" % (n + 1))
                    return
    return check


# ---------------------------------------------------------------------------------------------------------------
# Mutators
# ---------------------------------------------------------------------------------------------------------------
HOSTILE_NUMBERS = ["0", "-1", "1", "3", "-2147483648", "2147483647", "4294967296", "1099511627776",
                   "9223372036854775807", "-9223372036854775808", "18446744073709551616", "?"]
HOSTILE_TYPES = ["f16", "bf16", "f64", "i1", "i8", "i64", "index", "complex<f32>", "f8E4M3FN", "vector<4xf32>",
                 "tensor<4xf32>", "none", "!llvm.ptr", "memref<4xf32>", "tf32"]
DEEP = 60000


def mutate_text(rng, text, n=None):
    """A few line and token mutations of an MLIR file."""
    lines = text.splitlines()
    for _ in range(n or rng.randint(1, 4)):
        if not lines:
            break
        op = rng.randrange(11)
        i = rng.randrange(len(lines))
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif op == 2:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 3:
            numbers = list(re.finditer(r"(?<![%#\w])\d+", lines[i]))
            if numbers:
                m = rng.choice(numbers)
                lines[i] = lines[i][:m.start()] + rng.choice(HOSTILE_NUMBERS) + lines[i][m.end():]
        elif op == 4:
            lines[i] = re.sub(r"\bf32\b", rng.choice(HOSTILE_TYPES), lines[i], count=1)
        elif op == 5:
            cut = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:cut]
        elif op == 6:
            handles = re.findall(r"%[\w]+", text)
            if len(handles) >= 2:
                a, b = rng.sample(handles, 2)
                lines[i] = lines[i].replace(a, b)
        elif op == 7:
            lines[i] = lines[i] + rng.choice(["}", "{", ")", "(", "]", "[", ">", "<", ",", ":", "\"", "^bb9:",
                                              "\x00", "\xff\xfe", "// \x1b[2J"])
        elif op == 8:
            ops = re.findall(r"\b(?:linalg|arith|tensor|transform(?:\.\w+)?)\.\w+", text)
            if ops:
                lines[i] = re.sub(r"\b(?:linalg|arith|tensor|transform(?:\.\w+)?)\.\w+", rng.choice(ops), lines[i],
                                  count=1)
        elif op == 9:
            lines = lines[:i]
        else:
            lines[i] = lines[i].replace("tensor<", "tensor<" + rng.choice(["0x", "1x", "?x", "-1x"]), 1)
    return "\n".join(lines) + "\n"


def deep_json(depth, leaf="1", kind="["):
    close = "]" if kind == "[" else "}"
    if kind == "[":
        return "[" * depth + leaf + "]" * depth
    return '{"a":' * depth + leaf + close * depth


def random_json(rng, depth=0):
    kind = rng.randrange(9 if depth < 4 else 5)
    if kind == 0:
        return rng.choice([0, -1, 1, 2 ** 31, 2 ** 63 - 1, -2 ** 63, 2 ** 64, 1e308, -1e308, 0.5, 1e-320])
    if kind == 1:
        return rng.choice(["", "tile", "block", "\x1b[31mred\x1b[0m", "<script>alert(1)</script>", "x" * 5000,
                           "\u0000", "\ud7ff\ue000", "../../etc/passwd", "%s%n", "${HOME}", "| a | b |"])
    if kind == 2:
        return rng.choice([True, False, None])
    if kind == 3:
        return []
    if kind == 4:
        return {}
    if kind in (5, 6):
        return [random_json(rng, depth + 1) for _ in range(rng.randint(1, 4))]
    return {rng.choice(["kind", "params", "level", "sizes", "into", "factor", "x", ""]): random_json(rng, depth + 1)
            for _ in range(rng.randint(1, 4))}


def mutate_json(rng, value):
    """A copy of a JSON value with one part replaced by something hostile."""
    value = json.loads(json.dumps(value))
    paths = []

    def walk(v, path):
        paths.append(path)
        if isinstance(v, dict):
            for k in v:
                walk(v[k], path + [k])
        elif isinstance(v, list):
            for i, item in enumerate(v):
                walk(item, path + [i])
    walk(value, [])
    path = rng.choice(paths)
    if not path:
        return random_json(rng)
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    choice = rng.randrange(5)
    if choice == 0 and isinstance(parent, dict):
        del parent[path[-1]]
    elif choice == 1 and isinstance(parent, list):
        parent.extend([parent[path[-1]]] * rng.choice([1, 5, 300]))
    else:
        parent[path[-1]] = random_json(rng)
    return value


# ---------------------------------------------------------------------------------------------------------------
# Category: payload
# ---------------------------------------------------------------------------------------------------------------
MODULE_ASM = 'module attributes {llvm.module_asm = [".globl kforge_injected_asm", "kforge_injected_asm:"]} {\n%s}\n'
COMPLEX_PAYLOAD = """func.func @kernel(%x: tensor<8x8xcomplex<f32>>, %w: tensor<8x8xcomplex<f32>>) -> tensor<8x8xcomplex<f32>> {
  %e = tensor.empty() : tensor<8x8xcomplex<f32>>
  %y = linalg.matmul ins(%x, %w : tensor<8x8xcomplex<f32>>, tensor<8x8xcomplex<f32>>) outs(%e : tensor<8x8xcomplex<f32>>) -> tensor<8x8xcomplex<f32>>
  return %y : tensor<8x8xcomplex<f32>>
}
"""
ZERO_ROW_PAYLOAD = """func.func @kernel(%x: tensor<0x64xf32>, %w: tensor<64x64xf32>) -> tensor<0x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<0x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<0x64xf32>) -> tensor<0x64xf32>
  %y = linalg.matmul ins(%x, %w : tensor<0x64xf32>, tensor<64x64xf32>) outs(%init : tensor<0x64xf32>) -> tensor<0x64xf32>
  return %y : tensor<0x64xf32>
}
"""


def payload_cases(cfg, fx, rng, count):
    compile_, tune = cfg.tool["kforge-compile"], cfg.tool["kforge-tune"]
    cases = []

    def facts(name, files, pinned=False, expect=None):
        cases.append(Case("payload", name + " (facts)", [compile_, "{dir}/in/p.mlir", "--facts-json", "{dir}/out/f.json"],
                          files, timeout=20, pinned=pinned, expect=expect, setup=mkout))

    def full(name, files, pinned=False, expect=None):
        cases.append(Case("payload", name + " (compile)", [compile_, "{dir}/in/p.mlir", "--target", "cpu", "--timeout",
                                                          "60", "-o", "{dir}/out/a"], files, timeout=90,
                          pinned=pinned, expect=expect, setup=mkout))

    base = open(fx.payload).read()
    # The cases.
    asm = MODULE_ASM % base
    full("llvm.module_asm in the payload", {"p.mlir": asm}, True, no_injected_asm)
    facts("llvm.module_asm in the payload", {"p.mlir": asm}, True)
    facts("complex<f32> payload", {"p.mlir": COMPLEX_PAYLOAD}, True)
    cases.append(Case("payload", "complex<f32> payload (kforge-tune)", [tune, "{dir}/in/p.mlir", "--target", "cpu",
                                                                         "--trials", "1", "-o", "{dir}/run"],
                      {"p.mlir": COMPLEX_PAYLOAD}, timeout=60, pinned=True, expect=refused("a complex<f32> payload")))
    full("complex<f32> payload", {"p.mlir": COMPLEX_PAYLOAD}, True, refused("a complex<f32> payload"))
    full("0-row payload", {"p.mlir": ZERO_ROW_PAYLOAD}, True, zero_row_expect(cfg, fx))
    for special in ("/dev/zero", "/dev/urandom"):
        spec = {"p.mlir": Special("symlink", special)}
        facts(special + " as the payload", spec, True, refused(special + " as a payload"))
        full(special + " as the payload", spec, True, refused(special + " as a payload"))
        cases.append(Case("payload", special + " as the payload (kforge-tune)",
                          [tune, "{dir}/in/p.mlir", "--target", "cpu", "--trials", "1", "-o", "{dir}/run"], spec,
                          timeout=60, pinned=True, expect=refused(special + " as a payload")))
    facts("a FIFO as the payload", {"p.mlir": Special("fifo")}, True, refused("a FIFO as a payload"))
    facts("a directory as the payload", {"p.mlir": Special("dir")}, True, refused("a directory as a payload"))
    facts("an empty payload", {"p.mlir": ""}, True, refused("an empty payload"))
    facts("60000-deep nesting", {"p.mlir": "func.func @f() -> " + "tensor<" * DEEP + "f32" + ">" * DEEP + "\n"}, True,
          refused("a 60000-deep type"))
    facts("60000-deep regions", {"p.mlir": "module {" * DEEP + "}" * DEEP}, True)
    # Random mutations: most only analysed (fast), every fourth compiled in full.
    for i in range(count):
        source = rng.choice(fx.payloads)
        text = mutate_text(rng, open(source).read())
        if rng.random() < 0.15:
            text = text.encode()[: rng.randrange(len(text) + 1)].decode(errors="ignore")
        name = "mutated %s #%d" % (os.path.basename(source), i)
        (full if i % 4 == 0 else facts)(name, {"p.mlir": text})
    return cases


def mkout(case):
    os.makedirs(os.path.join(case.dir, "out"), exist_ok=True)


def mkout_escape(case):
    """An output directory, and an empty escape/ that a script's file writes would land in."""
    mkout(case)
    os.makedirs(os.path.join(case.dir, "escape"), exist_ok=True)


def zero_row_expect(cfg, fx):
    """A 0-row payload is refused, or compiles to an artifact kforge-run refuses (no output to verify)."""
    def check(result):
        art = os.path.join(result.case.dir, "out", "a")
        if result.rc != 0 or not os.path.exists(os.path.join(art, "kernel.json")):
            return
        run = subprocess.run([cfg.tool["kforge-run"], "--candidate", art, "--reference", art, "--seeds", "1",
                              "--reps", "0", "--timeout", "20"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             timeout=60, env=fx.env)
        if run.returncode < 0:
            yield ("crash", "kforge-run on the 0-row artifact: signal %d" % -run.returncode)
        elif run.returncode == 0:
            yield ("false_verdict", "kforge-run reported a 0-row artifact correct (nothing was compared)")
    return check


# ---------------------------------------------------------------------------------------------------------------
# Category: schedule
# ---------------------------------------------------------------------------------------------------------------
def schedule_cases(cfg, fx, rng, count):
    tune = cfg.tool["kforge-tune"]
    cases = []

    def add(mode, name, text, pinned=False, expect=None, timeout=30):
        files = {"s.json": text} if not isinstance(text, Special) else {"s.json": text}
        argv = [tune, fx.payload, "--target", "cpu", "--" + mode, "{dir}/in/s.json"]
        if mode == "try":
            argv += ["--seeds", "1", "--reps", "10", "-o", "{dir}/run"]
            timeout = 90
        cases.append(Case("schedule", "%s: %s" % (mode, name), argv, files, timeout=timeout, pinned=pinned,
                          expect=expect))

    deep = deep_json(DEEP)
    deep_in_params = json.dumps([{"kind": "tile", "params": {"level": "block", "sizes": "@@"}}]).replace(
        '"@@"', deep_json(DEEP))
    big = json.dumps([{"kind": "tile", "params": {"level": "block", "sizes": [32, 32]}},
                      {"kind": "fuse", "params": {"into": "block"}}] * 60000 +
                     [{"kind": "unroll", "params": {"factor": 2}}] * 20000)
    for mode in ("validate", "render", "try"):
        add(mode, "60000-deep JSON", deep, True, refused("a 60000-deep schedule"))
        add(mode, "60000-deep JSON inside params", deep_in_params, True, refused("a 60000-deep schedule"))
        add(mode, "/dev/zero", Special("symlink", "/dev/zero"), True, refused("/dev/zero as a schedule"))
    add("validate", "a 10 MB schedule (quadratic validation)", big, True, refused("a schedule of 140000 actions"))
    add("render", "a 10 MB schedule", big, True)
    under = json.dumps([{"kind": "tile", "params": {"level": "block", "sizes": [32, 32]}},
                        {"kind": "fuse", "params": {"into": "block"}}] * 8000)
    add("validate", "a schedule just under 1 MB (16000 actions)", under, True, refused("16000 actions"))
    add("render", "a schedule just under 1 MB (16000 actions)", under, True)
    add("validate", "a FIFO", Special("fifo"), True, refused("a FIFO as a schedule"))
    add("validate", "zero tile sizes", json.dumps([{"kind": "tile", "params": {"level": "block", "sizes": [0, 0]}}]),
        True, refused("all-zero tile sizes"))
    add("try", "zero tile sizes", json.dumps([{"kind": "tile", "params": {"level": "block", "sizes": [0, 0]}}]),
        True, refused("all-zero tile sizes"))
    add("validate", "2^63 tile sizes", json.dumps([{"kind": "tile", "params": {"level": "block",
                                                                             "sizes": [2 ** 63 - 1, 2 ** 64]}}]),
        True, refused("2^63 tile sizes"))
    add("validate", "NaN literal", '[{"kind": "unroll", "params": {"factor": NaN}}]', True, refused("NaN"))
    for i in range(count):
        mode = "try" if i % 10 == 9 else rng.choice(["validate", "validate", "render"])
        schedule = rng.choice(fx.schedules)
        r = rng.random()
        if r < 0.6:
            text = json.dumps(mutate_json(rng, schedule))
        elif r < 0.8:
            text = json.dumps(random_json(rng))
        else:
            text = json.dumps(schedule)
            cut = rng.randrange(len(text))
            text = text[:cut] + rng.choice(["", "\x00", "\xff", "}}}", ",", "/*", "\ufeff", '"\\u12'])
        add(mode, "random #%d" % i, text)
    return cases


# ---------------------------------------------------------------------------------------------------------------
# Category: manifest
# ---------------------------------------------------------------------------------------------------------------
def manifest_cases(cfg, fx, rng, count):
    run = cfg.tool["kforge-run"]
    base = json.load(open(os.path.join(fx.reference, "kernel.json")))
    cases = []

    def add(name, manifest_text, library_dir, extra_files=None, pinned=False, wrong=True, special=None):
        def setup(case, manifest_text=manifest_text, library_dir=library_dir, special=special):
            cand = os.path.join(case.dir, "in", "cand")
            os.makedirs(cand, exist_ok=True)
            shutil.copy(os.path.join(library_dir, "kernel.so"), os.path.join(cand, "kernel.so"))
            if special:
                special.make(os.path.join(cand, "kernel.json"))
            else:
                with open(os.path.join(cand, "kernel.json"), "wb") as f:
                    f.write(manifest_text.encode() if isinstance(manifest_text, str) else manifest_text)
            for rel, content in (extra_files or {}).items():
                path = os.path.join(cand, rel)
                if isinstance(content, Special):
                    content.make(path)
                else:
                    with open(path, "w") as f:
                        f.write(content)
        checks = [one_report]
        if wrong:
            checks.append(never_correct("a wrong kernel with a mutated manifest"))
        cases.append(Case("manifest", name, [run, "--candidate", "{dir}/in/cand", "--reference", fx.reference,
                                              "--seeds", "2", "--reps", "0", "--timeout", "20"],
                          timeout=60, setup=setup, pinned=pinned, expect=all_of(*checks)))

    def variant(**changes):
        m = json.loads(json.dumps(base))
        for key, value in changes.items():
            m[key] = value
        return json.dumps(m)

    def shaped(shapes):
        m = json.loads(json.dumps(base))
        for arg, shape in zip(m["arguments"], shapes):
            arg["shape"] = shape
        return json.dumps(m)

    add("shape [1, 2^40]", shaped([[1, 2 ** 40], [2 ** 40, 1], [1, 1]]), fx.zeros, pinned=True)
    add("shape [2^40] outputs", shaped([[64, 64], [64, 64], [1, 2 ** 40]]), fx.zeros, pinned=True)
    add("shape 2^63", shaped([[2 ** 63 - 1, 2], [64, 64], [64, 64]]), fx.zeros, pinned=True)
    add("library ../x.so", variant(library="../x.so"), fx.zeros, pinned=True)
    add("library /etc/passwd", variant(library="/etc/passwd"), fx.zeros, pinned=True)
    add("library is a symlink to /dev/zero", variant(library="z.so"), fx.zeros,
        {"z.so": Special("symlink", "/dev/zero")}, pinned=True)
    add("library is a FIFO", variant(library="f.so"), fx.zeros, {"f.so": Special("fifo")}, pinned=True)
    add("manifest is /dev/zero", None, fx.zeros, special=Special("symlink", "/dev/zero"), pinned=True)
    add("manifest is a FIFO", None, fx.zeros, special=Special("fifo"), pinned=True)
    add("manifest 60000 deep", deep_json(DEEP, kind="{"), fx.zeros, pinned=True)
    add("entry exit (a libc function)", variant(entry="exit"), fx.zeros, pinned=True)
    add("entry abort", variant(entry="abort"), fx.zeros, pinned=True)
    add("roles all outputs", json.dumps(dict(base, arguments=[dict(a, role="output") for a in base["arguments"]])),
        fx.zeros, pinned=True)
    add("roles all inputs", json.dumps(dict(base, arguments=[dict(a, role="input") for a in base["arguments"]])),
        fx.zeros, pinned=True)
    add("a correct kernel, output relabelled input", json.dumps(dict(base, arguments=[
        dict(a, role="input") if a["role"] == "output" else a for a in base["arguments"]])), fx.correct,
        pinned=True, wrong=True)
    for i in range(count):
        r = rng.random()
        if r < 0.75:
            text = json.dumps(mutate_json(rng, base))
        elif r < 0.9:
            text = json.dumps(random_json(rng))
        else:
            text = json.dumps(base)
            text = text[:rng.randrange(len(text))]
        add("random #%d" % i, text, rng.choice([fx.zeros, fx.forged["ZEROS"], fx.forged["FD_RETURN"]]))
    # A served session of mutated manifests, then an honest wrong and an honest correct kernel.
    mutated = [json.dumps(mutate_json(rng, base)) for _ in range(12)]
    cases.append(Case("manifest", "serve: 12 mutated manifests, then honest kernels", [], pinned=True, timeout=180,
                      driver=serve_driver(cfg, fx, [("m%d" % i, fx.zeros, t) for i, t in enumerate(mutated)])))
    return cases


# ---------------------------------------------------------------------------------------------------------------
# Served sessions (manifest, artifact)
# ---------------------------------------------------------------------------------------------------------------
def serve_driver(cfg, fx, steps, extra=(), env=None, wrong=lambda name: True, timeout_s=20):
    """A kforge-run --serve session: each step (name, library dir, manifest text or None) as a request, then an
    honest wrong kernel (zeros) and an honest correct one, which must get their own verdicts and honest timings.
    Findings are attached to the result (`serve_findings`)."""
    def drive(cfg_, case):
        steps_dir = os.path.join(case.dir, "in")
        requests, names = [], []
        for name, library_dir, manifest in steps:
            dest = os.path.join(steps_dir, name)
            shutil.copytree(library_dir, dest, dirs_exist_ok=True)
            if manifest is not None:
                with open(os.path.join(dest, "kernel.json"), "w") as f:
                    f.write(manifest)
            names.append(name)
        for name, d in (("honest-zeros", fx.zeros), ("honest-correct", fx.correct)):
            shutil.copytree(d, os.path.join(steps_dir, name), dirs_exist_ok=True)
            names.append(name)
        for i, name in enumerate(names):
            requests.append(json.dumps({"candidate": os.path.join(steps_dir, name), "seeds": 2, "reps": 10,
                                        "timeout_s": timeout_s, "nonce": "n%d" % i, "id": i}))
        case.stdin = "\n".join(requests) + "\n"
        case.argv = [cfg.tool["kforge-run"], "--serve", "--reference", fx.reference, "--cache-dir",
                     "{dir}/out/seed-cache"] + list(extra)
        case.env = env or {}
        result = run_process(cfg, case)
        replies = {}
        for line in result.out.splitlines():
            try:
                reply = json.loads(line)
                replies[reply.get("id")] = reply
            except ValueError:
                pass
        findings = []
        for i, name in enumerate(names):
            reply = replies.get(i)
            if reply is None:
                if not result.hung:
                    findings.append(("violation", "no reply to request %d (%s)" % (i, name)))
                continue
            timing = reply.get("timing") or {}
            if isinstance(timing, dict) and timing.get("clock") == "forged":
                findings.append(("violation", "%s: a forged timing reported" % name))
            if name == "honest-correct" and reply.get("status") != "correct":
                findings.append(("violation", "an innocent correct kernel after the others was judged %s: %s" % (
                    reply.get("status"), str(reply.get("reason"))[:120])))
            elif name == "honest-zeros" and reply.get("status") == "correct":
                findings.append(("false_verdict", "an honest wrong kernel after the others was judged correct"))
            elif name not in ("honest-zeros", "honest-correct") and wrong(name) and reply.get("status") == "correct":
                findings.append(("false_verdict", "%s judged correct" % name))
        result.extra["serve_findings"] = findings
        case.expect = lambda r: r.extra["serve_findings"]
        return result
    return drive


# ---------------------------------------------------------------------------------------------------------------
# Category: artifact
# ---------------------------------------------------------------------------------------------------------------
# Computes y = x @ w + 1: these may be judged correct; every other forged kernel is wrong.
HONEST_FORGERIES = {"CORRECT", "FD_CORRECT", "PROC_READER", "MITM", "SLOW_FORGED_TIMING"}

MISBEHAVING = {
    "ctor-segfault": "__attribute__((constructor)) static void c(void) { *(volatile int *)8 = 1; }",
    "ctor-exit": "#include <stdlib.h>\n__attribute__((constructor)) static void c(void) { exit(0); }",
    "ctor-loop": "__attribute__((constructor)) static void c(void) { for (;;) {} }",
    "entry-sleeps": "#include <unistd.h>\nENTRY_SIG { for (;;) sleep(1); }",
    "entry-stops-itself": "#include <signal.h>\nENTRY_SIG { raise(SIGSTOP); }",
    "entry-ignores-signals": "#include <signal.h>\nENTRY_SIG { for (int s = 1; s < 32; ++s) signal(s, SIG_IGN); for (;;) {} }",
    "entry-closes-channel": "#include <unistd.h>\nENTRY_SIG { for (int fd = 3; fd < 64; ++fd) close(fd); }",
    "entry-nulls-channel": "#include <fcntl.h>\n#include <unistd.h>\nENTRY_SIG { int n = open(\"/dev/null\", O_RDWR); for (int fd = 3; fd < 32; ++fd) dup2(n, fd); }",
    "entry-forks": "#include <unistd.h>\n#include <stdlib.h>\nENTRY_SIG { if (fork() == 0) { sleep(100); _exit(0); } }",
    "entry-execs": "#include <unistd.h>\nENTRY_SIG { char *a[] = {\"/bin/sh\", \"-c\", \"touch escaped-by-exec\", 0}; execv(a[0], a); }",
    "entry-floods-stdout": "#include <unistd.h>\n#include <string.h>\nENTRY_SIG { static char b[1 << 16]; memset(b, '{', sizeof b); for (int i = 0; i < 400; ++i) { write(1, b, sizeof b); write(2, b, sizeof b); } }",
    "entry-allocates-64GB": "#include <stdlib.h>\n#include <string.h>\nENTRY_SIG { for (int i = 0; i < 64; ++i) { char *p = malloc(1ul << 30); if (p) memset(p, 1, 1ul << 30); } }",
    "entry-connects": "#include <sys/socket.h>\n#include <netinet/in.h>\n#include <unistd.h>\nENTRY_SIG { int s = socket(AF_INET, SOCK_STREAM, 0); struct sockaddr_in a = {AF_INET, htons(9), {htonl(0x7f000001)}}; connect(s, (struct sockaddr *)&a, sizeof a); }",
    "entry-ptrace-parent": "#include <sys/ptrace.h>\n#include <unistd.h>\nENTRY_SIG { ptrace(PTRACE_ATTACH, getppid(), 0, 0); }",
    "entry-writes-devshm": "#include <stdio.h>\nENTRY_SIG { FILE *f = fopen(\"/dev/shm/kforge-fuzz-planted\", \"w\"); if (f) { fputs(\"x\", f); fclose(f); } }",
    "entry-is-data": "int _mlir_ciface_kernel = 42;",
    "no-entry": "int unrelated(void) { return 1; }",
}


def misbehaving_library(cfg, fx, name, body):
    out = os.path.join(fx.dir, "misbehaving", name)
    if not os.path.exists(os.path.join(out, "kernel.so")):
        os.makedirs(out, exist_ok=True)
        src = os.path.join(out, "k.c")
        sig = "void _mlir_ciface_kernel(void *x, void *w, void *y)"
        with open(src, "w") as f:
            f.write(body.replace("ENTRY_SIG", sig) + "\n")
        subprocess.run(["cc", "-shared", "-fPIC", "-w", "-o", os.path.join(out, "kernel.so"), src], check=True)
        shutil.copy(os.path.join(fx.reference, "kernel.json"), os.path.join(out, "kernel.json"))
    return out


def artifact_cases(cfg, fx, rng, count):
    run = cfg.tool["kforge-run"]
    cases = []
    for attack in fx.forge.ATTACKS:
        wrong = attack not in HONEST_FORGERIES

        def check(result, attack=attack, wrong=wrong):
            report = result.json_report()
            if report is None:
                return
            if wrong and report.get("status") == "correct":
                yield ("false_verdict", "forged kernel %s judged correct" % attack)
            timing = report.get("timing") or {}
            if isinstance(timing, dict) and timing.get("clock") == "forged":
                yield ("violation", "%s: the forged timing was reported" % attack)
            if attack == "SLOW_FORGED_TIMING" and report.get("status") == "correct" and \
                    timing.get("median_ms", 0) < 15:
                yield ("violation", "SLOW_FORGED_TIMING: a 20 ms kernel reported at %s ms" % timing.get("median_ms"))
            if attack == "FORGE_REPORT":
                try:
                    written = json.load(open(os.path.join(result.case.dir, "out", "report.json")))
                    if written.get("status") == "correct":
                        yield ("false_verdict", "the --output file holds the forged correct report")
                except (OSError, ValueError):
                    pass
            if result.rc == "HANG":
                return
        cases.append(Case("artifact", "single " + attack,
                          [run, "--candidate", fx.forged[attack], "--reference", fx.reference, "--seeds", "2",
                           "--reps", "10", "--timeout", "20", "--output", "{dir}/out/report.json"],
                          timeout=90, pinned=True, setup=mkout, expect=all_of(one_report, check)))
    for attack in fx.forge.ATTACKS:
        if attack in ("CORRECT", "ZEROS", "PLANTED", "PLANT_SEED"):
            continue
        cases.append(Case("artifact", "serve " + attack, [], pinned=True, timeout=180, setup=mkout,
                          driver=serve_driver(cfg, fx, [(attack, fx.forged[attack], None)],
                                              wrong=lambda name: name not in HONEST_FORGERIES)))
    # Through kforge-tune (serve and process runners): its trials' libraries swapped for forged ones, checked
    # against the expectations of test/Runner/forged-verdict-cpu.test.
    for runner, prefix in (("serve", "TUNE"), ("process", "PROCESS")):
        cases.append(Case("artifact", "kforge-tune with forged candidates (--runner %s)" % runner, [], pinned=True,
                          timeout=600, driver=forged_tune_driver(cfg, fx, runner, prefix)))
    # The seed cache planted from inside (PLANT_SEED), then by hand.
    cases.append(Case("artifact", "PLANT_SEED twice on one seed cache", [], pinned=True, timeout=120,
                      driver=twice_driver(cfg, fx)))
    cases.append(Case("artifact", "a hand-planted seed cache", [], pinned=True, timeout=120,
                      driver=planted_seeds_driver(cfg, fx)))
    cases.append(Case("artifact", "a planted compile cache", [], pinned=True, timeout=120,
                      driver=planted_compile_cache_driver(cfg, fx)))
    for name, body in sorted(MISBEHAVING.items()):
        lib = misbehaving_library(cfg, fx, name, body)

        def check(result, name=name):
            if os.path.exists("/dev/shm/kforge-fuzz-planted"):
                os.remove("/dev/shm/kforge-fuzz-planted")  # /dev is writable by design (Containment.cpp)
            if glob.glob(os.path.join(result.case.dir, "**", "escaped-by-exec"), recursive=True):
                yield ("violation", "%s: the candidate ran a program" % name)
        cases.append(Case("artifact", "misbehaving " + name,
                          [run, "--candidate", lib, "--reference", fx.reference, "--seeds", "1", "--reps", "0",
                           "--timeout", "5", "--memory-limit-mb", "2048"], timeout=60, pinned=True,
                          expect=all_of(one_report, never_correct("misbehaving library " + name), check)))
        cases.append(Case("artifact", "serve misbehaving " + name, [], pinned=True, timeout=180, setup=mkout,
                          driver=serve_driver(cfg, fx, [(name, lib, None)], timeout_s=5,
                                              extra=["--memory-limit-mb", "2048"])))
    # Random libraries: random bytes, a truncated library, another program's code.
    for i in range(count):
        kind = rng.randrange(3)
        blob_dir = os.path.join(fx.dir, "blobs", str(i))
        os.makedirs(blob_dir, exist_ok=True)
        good = open(os.path.join(fx.forged["ZEROS"], "kernel.so"), "rb").read()
        if kind == 0:
            blob = bytes(rng.randrange(256) for _ in range(rng.choice([0, 16, 4096])))
        elif kind == 1:
            blob = good[:rng.randrange(len(good))]
        else:
            blob = bytearray(good)
            for _ in range(rng.randint(1, 64)):
                blob[rng.randrange(len(blob))] = rng.randrange(256)
            blob = bytes(blob)
        with open(os.path.join(blob_dir, "kernel.so"), "wb") as f:
            f.write(blob)
        shutil.copy(os.path.join(fx.reference, "kernel.json"), os.path.join(blob_dir, "kernel.json"))
        cases.append(Case("artifact", "random library #%d" % i,
                          [run, "--candidate", blob_dir, "--reference", fx.reference, "--seeds", "1", "--reps", "0",
                           "--timeout", "10"], timeout=60,
                          expect=all_of(one_report, never_correct("a corrupted library"))))
    return cases


def forged_tune_driver(cfg, fx, runner, prefix):
    """forged_session.py tune, then its check against forged-verdict-cpu.test's CHECK lines for `prefix`."""
    def drive(cfg_, case):
        session = os.path.join(cfg.src, "test", "Runner", "Inputs", "forged_session.py")
        forged = os.path.dirname(fx.forged["CORRECT"])
        case.argv = [sys.executable, session, "tune", os.path.join(cfg.work, "bin"), fx.payload, forged,
                     "{dir}/run"] + (["--runner", "process"] if runner == "process" else [])
        result = run_process(cfg, case)
        check = subprocess.run([sys.executable, session, "check",
                                os.path.join(cfg.src, "test", "Runner", "forged-verdict-cpu.test"), prefix,
                                result.out_path], stdout=subprocess.PIPE, text=True)
        findings = []
        for line in check.stdout.splitlines():
            if not line.startswith("UNEXPECTED"):
                continue
            if "key" in line or "children holding" in line:
                findings.append(("key_leak", line[12:200]))
            elif re.search(r"(ZEROS|FD_\w+|KILL_\w+|FORGE_REPORT|WRITE_OUTSIDE|STOP_PARENT): correct", line):
                findings.append(("false_verdict", line[12:200]))
            else:
                findings.append(("violation", line[12:200]))
        case.expect = lambda r: findings
        return result
    return drive


def twice_driver(cfg, fx):
    def drive(cfg_, case):
        mkout(case)
        argv = [cfg.tool["kforge-run"], "--candidate", fx.forged["PLANT_SEED"], "--reference", fx.reference,
                "--seeds", "2", "--reps", "0", "--timeout", "20", "--cache-dir", "{dir}/out/seed-cache"]
        case.argv = argv
        run_process(cfg, case)
        result = run_process(cfg, case)
        case.expect = never_correct("PLANT_SEED on its second run")
        return result
    return drive


def planted_seeds_driver(cfg, fx):
    """The reference's outputs in the seed cache rewritten as x @ w + 2: the PLANTED kernel must still fail."""
    def drive(cfg_, case):
        mkout(case)
        cache = os.path.join(case.dir, "out", "seed-cache")
        case.argv = [cfg.tool["kforge-run"], "--candidate", fx.correct, "--reference", fx.reference, "--seeds", "1",
                     "--reps", "0", "--timeout", "20", "--cache-dir", cache]
        run_process(cfg, case)
        for outputs in glob.glob(os.path.join(cache, "*", "seed*.outputs.2.f32")):
            stem = outputs[: -len("outputs.2.f32")]
            x, w = array.array("f"), array.array("f")
            x.frombytes(open(stem + "inputs.0.f32", "rb").read())
            w.frombytes(open(stem + "inputs.1.f32", "rb").read())
            y = array.array("f", [sum(x[i * 64 + k] * w[k * 64 + j] for k in range(64)) + 2.0
                                  for i in range(64) for j in range(64)])
            open(outputs, "wb").write(y.tobytes())
        case.argv = [cfg.tool["kforge-run"], "--candidate", fx.forged["PLANTED"], "--reference", fx.reference,
                     "--seeds", "1", "--reps", "0", "--timeout", "20", "--cache-dir", cache]
        case.expect = never_correct("a wrong kernel against planted reference outputs")
        return run_process(cfg, case)
    return drive


def planted_compile_cache_driver(cfg, fx):
    def drive(cfg_, case):
        mkout(case)
        cache = os.path.join(case.dir, "out", "cache")
        case.argv = [cfg.tool["kforge-compile"], fx.payload, "--target", "cpu", "--cache-dir", cache, "-o",
                     os.path.join(case.dir, "out", "first")]
        run_process(cfg, case)
        planted = os.path.join(fx.forged["PLANTED"], "kernel.so")
        for so in glob.glob(os.path.join(cache, "*", "*.so")):
            shutil.copyfile(planted, so)
        case.argv[-1] = os.path.join(case.dir, "out", "second")
        result = run_process(cfg, case)

        def check(result):
            so = os.path.join(case.dir, "out", "second", "kernel.so")
            if os.path.exists(so) and open(so, "rb").read() == open(planted, "rb").read():
                yield ("false_verdict", "kforge-compile handed back the planted library from its cache")
        case.expect = check
        return result
    return drive


# ---------------------------------------------------------------------------------------------------------------
# Category: transform
# ---------------------------------------------------------------------------------------------------------------
def insert_before_yield(script, snippet, handle=None):
    """Puts `snippet` (with {h}: a handle of the main sequence's argument) before the last transform.yield of
    @__transform_main, or of the file's last named sequence."""
    m = None
    for m in re.finditer(r"transform\.named_sequence @(\w+)\((%\w+)", script):
        if m.group(1) == "__transform_main":
            break
    if not m:
        return script + "\n// " + snippet
    h = handle or m.group(2)
    at = script.find("transform.yield", m.end())
    if at < 0:
        return script + "\n// " + snippet
    line_start = script.rfind("\n", 0, at) + 1
    return script[:line_start] + "    " + snippet.replace("{h}", h) + "\n" + script[line_start:]


DANGEROUS = {
    "snapshot-op-locations writes a file":
        'transform.apply_registered_pass "snapshot-op-locations" with options = { "filename" = "{dir}/escape/snapshot.mlir" } to {h} : (!transform.any_op) -> !transform.any_op',
    "kforge-dump-gpu-binaries writes a directory":
        'transform.apply_registered_pass "kforge-dump-gpu-binaries" with options = { "dump-dir" = "{dir}/escape/dump" } to {h} : (!transform.any_op) -> !transform.any_op',
    "transform-preload-library reads a file":
        'transform.apply_registered_pass "transform-preload-library" with options = { "transform-library-paths" = "{dir}/in/secret.mlir" } to {h} : (!transform.any_op) -> !transform.any_op',
    "a graph-printing pass":
        'transform.apply_registered_pass "view-op-graph" to {h} : (!transform.any_op) -> !transform.any_op',
    "structured.replace with arbitrary IR":
        '%r = transform.structured.match ops{["linalg.matmul"]} in {h} : (!transform.any_op) -> !transform.any_op\n    %n = transform.structured.replace %r { %c = arith.constant 1.0 : f32 } : (!transform.any_op) -> !transform.any_op',
    "annotate llvm.module_asm":
        '%p = transform.param.constant ["nop"] -> !transform.any_param\n    transform.annotate {h} "llvm.module_asm" = %p : !transform.any_op, !transform.any_param',
    "tile_using_forall with all-zero tile sizes":
        '%m = transform.structured.match ops{["linalg.matmul"]} in {h} : (!transform.any_op) -> !transform.any_op\n    %t:2 = transform.structured.tile_using_forall %m tile_sizes [0, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)',
    "tile_using_forall with negative num_threads":
        '%m = transform.structured.match ops{["linalg.matmul"]} in {h} : (!transform.any_op) -> !transform.any_op\n    %t:2 = transform.structured.tile_using_forall %m num_threads [-1, 4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)',
    "tile_using_for with negative sizes":
        '%m = transform.structured.match ops{["linalg.matmul"]} in {h} : (!transform.any_op) -> !transform.any_op\n    %t:3 = transform.structured.tile_using_for %m tile_sizes [-4, 0, 2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)',
}


def transform_cases(cfg, fx, rng, count):
    compile_, opt = cfg.tool["kforge-compile"], cfg.tool["kforge-opt"]
    cases = []

    def add(name, script, pinned=False, expect=None, full=False, secret=False):
        files = {"s.mlir": script}
        if secret:
            files["secret.mlir"] = "// %s\n%s = garbage\n" % (cfg.key, cfg.key)
        argv = [compile_, fx.payload, "--recipe", "{dir}/in/s.mlir", "--target", "cpu", "--timeout", "60", "-o",
                "{dir}/out/a"] + ([] if full else ["--schedule-only"])

        def check(result):
            if glob.glob(os.path.join(result.case.dir, "escape", "**"), recursive=True)[1:]:
                yield ("violation", "the schedule wrote files: " + ", ".join(
                    os.path.relpath(p, result.case.dir) for p in glob.glob(os.path.join(result.case.dir, "escape",
                                                                                         "**"), recursive=True)[1:3]))
            if secret and cfg.key in result.out + result.err:
                yield ("key_leak", "the schedule read a file and its content reached the diagnostics")
        cases.append(Case("transform", name, argv, files, timeout=120, pinned=pinned, setup=mkout_escape,
                          expect=all_of(check, expect)))

    base = fx.rendered[min(2, len(fx.rendered) - 1)]
    for name, snippet in DANGEROUS.items():
        script = insert_before_yield(base, snippet)
        add(name, script, True, refused(name), secret="reads a file" in name)
        if "module_asm" in name or "replace" in name:
            add(name + " (compiled)", script, True, refused(name), full=True)
    add("llvm.module_asm on the script module", base.replace(
        "module attributes {transform.with_named_sequence}",
        'module attributes {transform.with_named_sequence, llvm.module_asm = [".globl kforge_injected_asm", '
        '"kforge_injected_asm:"]}', 1), True, no_injected_asm, full=True)
    add("a payload carried inside the script", base.replace("module attributes {transform.with_named_sequence} {",
        "module attributes {transform.with_named_sequence} {\n  func.func private @hidden() attributes {llvm.emit_c_interface}", 1), True)
    add("60000-deep script", "module {" * DEEP + "}" * DEEP, True, refused("a 60000-deep script"))
    add("/dev/zero as the script", "", True)
    cases[-1].files = {"s.mlir": Special("symlink", "/dev/zero")}
    cases[-1].expect = refused("/dev/zero as a script")
    sources = [open(r).read() for r in fx.recipes] + fx.rendered
    for i in range(count):
        script = rng.choice(sources)
        r = rng.random()
        if r < 0.2:
            script = insert_before_yield(script, rng.choice(list(DANGEROUS.values())))
        script = mutate_text(rng, script)
        if i % 5 == 4:
            # kforge-opt, the developer's tool, on the same script: may refuse, must not crash.
            cases.append(Case("transform", "kforge-opt random #%d" % i,
                              [opt, fx.payload, "-transform-preload-library=transform-library-paths={dir}/in/s.mlir",
                               "-transform-interpreter", "-o", "{dir}/out/o.mlir"], {"s.mlir": script}, timeout=120,
                              setup=mkout, watch=False))
        else:
            add("random #%d" % i, script, full=(i % 7 == 6))
    return cases


# ---------------------------------------------------------------------------------------------------------------
# Category: flags
# ---------------------------------------------------------------------------------------------------------------
TUNE_NUMERIC = {  # flag: (values that must be refused, values a fuzzer may also try)
    "--trials": (["-1", "-2147483648"], ["0", "2147483648", "1e9", "abc", ""]),
    "--time-budget": (["-1", "nan", "-inf"], ["0", "inf", "1e308", "1e-300"]),
    "--early-stop": (["-1"], ["0", "2147483647"]),
    "--seed": ([], ["-1", "18446744073709551615", "18446744073709551616", "abc"]),
    "--jobs": (["-1"], ["0", "100000", "2147483647"]),
    "--seeds": (["-1", "0"], ["1000000", "2147483647"]),
    "--reps": (["-1"], ["0", "5", "2147483647"]),
    "--compile-timeout": (["-1"], ["0", "2147483647"]),
    "--run-timeout": (["-1"], ["0", "2147483647"]),
    "--cutoff": (["nan", "-1"], ["0", "inf", "1e-300"]),
    "--cutoff-best": (["nan", "-1"], ["0", "inf"]),
    "--timing-budget-ms": (["nan", "-1"], ["0", "inf", "1e308"]),
    "--memory-limit-mb": (["-1"], ["0", "1", "2147483647"]),
    "--score-compiles": (["nan", "inf", "-inf"], ["-1", "1e308"]),
    "--score-correct": (["nan", "inf", "-inf"], ["-1", "1e308"]),
    "--score-speedup": (["nan", "inf", "-inf"], ["-1", "0", "1e308"]),
    "--llm-temperature": (["nan", "-1"], ["inf", "100"]),
    "--llm-max-tokens": (["-1"], ["0", "2147483647"]),
    "--llm-timeout": (["-1"], ["0", "2147483647"]),
    "--llm-retries": (["-1"], ["1000000"]),
    "--llm-backoff-ms": (["-1"], ["2147483647"]),
    "--llm-max-requests": (["-1"], ["0"]),
    "--llm-max-total-tokens": (["-1"], ["0", "9223372036854775807"]),
    "--llm-max-response-kb": ([], ["0", "4294967295"]),
    "--llm-repair-rounds": (["-1"], ["1000000"]),
    "--llm-prompt-price": (["nan", "-1"], ["inf"]),
    "--llm-completion-price": (["nan", "-1"], ["inf"]),
}
TUNE_STRINGS = {
    "--target": ["tpu", "", "cpu\x00gpu", "GPU"],
    "--policy": ["", "llm", "nonsense", "heuristic+"],
    "--l2-flush": ["", "warm", "dirty;rm"],
    "--runner": ["", "thread", "serve "],
    "--entry": ["missing", "../kernel", "", "kernel\x01"],
    "--chip": ["sm_0", "", "../../x", "sm_90a" * 100],
    "--ceilings": ["/dev/zero", "/dev/null", "/nonexistent", "/proc/self/environ"],
    "--llm-replay": ["/dev/zero", "/dev/null", "/nonexistent"],
    "--runtime": ["/dev/zero", "/nonexistent.so", "/etc/passwd"],
}
RUN_FLAGS = {
    "--seeds": (["-1", "0"], ["1000000"]),
    "--reps": (["-1"], ["0", "5", "2147483647"]),
    "--warmup": (["-1"], ["1000000"]),
    "--tolerance": (["nan", "-1", "inf"], ["0", "1e-300", "1e308"]),
    "--timeout": (["-1"], ["0", "2147483647", "1e9"]),
    "--memory-limit-mb": (["-1"], ["0", "1", "1048576"]),
    "--device": (["-1"], ["99"]),
    "--ceiling-gbps": (["nan", "-1"], ["0", "inf"]),
    "--ceiling-tflops": (["nan", "-1"], ["0", "inf"]),
    "--cutoff-ms": (["nan", "-1"], ["0", "1e-300"]),
    "--time-reference": (["2", "-1"], ["1"]),
}
COMPILE_FLAGS = {
    "--name": (["../../x", "/abs/x", "", ".", "..", "a/b", "x" * 5000], ["k", "kernel-2"]),
    "--target": (["tpu", ""], []),
    "--entry": (["missing", "../x"], []),
    "--opt-level": ([], ["-1", "99", "0"]),
    "--timeout": ([], ["0", "1"]),
    "--memory-limit-mb": ([], ["1", "0"]),
    "--chip": ([], ["sm_0", "../../x"]),
    "--features": ([], ["+nonsense", ""]),
}


def flag_cases(cfg, fx, rng, count):
    tune, run, compile_ = cfg.tool["kforge-tune"], cfg.tool["kforge-run"], cfg.tool["kforge-compile"]
    cases = []
    tune_base = [tune, fx.payload, "--target", "cpu", "--trials", "1", "--seeds", "1", "--reps", "10", "--jobs", "1",
                 "--quiet", "-o", "{dir}/run"]

    def tune_case(flag, value, must_refuse, pinned=False):
        argv = [a for a in tune_base]
        if flag in argv:
            i = argv.index(flag)
            argv[i + 1] = value
        else:
            argv += [flag, value]
        if flag.startswith("--llm"):
            argv += ["--policy", "llm", "--llm-model", "m", "--llm-endpoint", "http://127.0.0.1:9/v1",
                     "--llm-retries", "0"] if flag != "--llm-retries" else ["--policy", "llm", "--llm-model", "m",
                                                                          "--llm-endpoint", "http://127.0.0.1:9/v1"]
        cases.append(Case("flags", "kforge-tune %s %r" % (flag, value[:40]), argv, timeout=120, pinned=pinned,
                          expect=all_of(refused("%s %s" % (flag, value[:40])) if must_refuse else None,
                                        db_intact("run"))))

    def run_case(flag, value, must_refuse, pinned=False):
        argv = [run, "--candidate", fx.zeros, "--reference", fx.reference, "--seeds", "1", "--reps", "0", "--timeout",
                "10"]
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
        checks = [one_report, never_correct("zeros with %s %s" % (flag, value))]
        if must_refuse:
            checks.append(bad_usage("%s %s" % (flag, value)))
        cases.append(Case("flags", "kforge-run %s %r" % (flag, value), argv, timeout=90, pinned=pinned,
                          expect=all_of(*checks)))

    def compile_case(flag, value, must_refuse, pinned=False):
        argv = [compile_, fx.payload, "--target", "cpu", "-o", "{dir}/out/a/b/c"]
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
        cases.append(Case("flags", "kforge-compile %s %r" % (flag, value[:40]), argv, timeout=120, pinned=pinned,
                          setup=mkout, allowed=["out/a/b/c"],
                          expect=refused("%s %s" % (flag, value[:40])) if must_refuse else None))

    # The cases, and every value that must be refused.
    for flag, (bad, other) in TUNE_NUMERIC.items():
        for value in bad:
            tune_case(flag, value, True, pinned=True)
    for flag, (bad, other) in RUN_FLAGS.items():
        for value in bad:
            run_case(flag, value, True, pinned=True)
    for flag, (bad, other) in COMPILE_FLAGS.items():
        for value in bad:
            compile_case(flag, value, True, pinned=True)
    # Relative output paths (run from the case directory).
    cases.append(Case("flags", "kforge-tune relative -o", tune_base[:-1] + ["rel/run"], timeout=120, pinned=True,
                      expect=expect_file("rel/run/db.jsonl"), watch=False))
    cases.append(Case("flags", "kforge-compile relative -o", [compile_, fx.payload, "--target", "cpu", "-o", "rel/a"],
                      timeout=120, pinned=True, expect=expect_file("rel/a/kernel.so"), watch=False))
    cases.append(Case("flags", "kforge-run relative --output",
                      [run, "--candidate", fx.correct, "--reference", fx.reference, "--seeds", "1", "--reps", "0",
                       "--output", "rel.json"], timeout=60, pinned=True, expect=expect_file("rel.json"), watch=False))
    cases.append(Case("flags", "kforge-compile relative --cache-dir",
                      [compile_, fx.payload, "--target", "cpu", "-o", "out/a", "--cache-dir", "relcache"],
                      timeout=120, pinned=True, setup=mkout, expect=expect_file("out/a/kernel.so"), watch=False))
    # A full disk: every file a run writes is limited (EFBIG past the limit, as ENOSPC would be). Never a
    # device path: as root, a tool that writes a temporary file and renames it over its output would replace
    # the device node itself.
    for name, argv, limit in (("kforge-run --output on a full disk",
                               [run, "--candidate", fx.correct, "--reference", fx.reference, "--seeds", "1", "--reps",
                                "0", "--output", "{dir}/out/report.json"], 512),
                              ("kforge-compile --facts-json on a full disk",
                               [compile_, fx.payload, "--facts-json", "{dir}/out/facts.json"], 256),
                              ("kforge-compile on a full disk",
                               [compile_, fx.payload, "--target", "cpu", "-o", "{dir}/out/a", "--diagnostics-json",
                                "{dir}/out/d.json"], 4096)):
        cases.append(Case("flags", name, argv, timeout=60, pinned=True, setup=mkout, fsize=limit,
                          expect=refused("a write that failed (disk full)")))
    # --output naming something that is not a regular file: a FIFO here stands for a device (as root, renaming a
    # report over /dev/full replaces the device node for every process on the machine).
    def fifo_output(case):
        mkout(case)
        os.mkfifo(os.path.join(case.dir, "out", "report.json"))

    def fifo_kept(result):
        path = os.path.join(result.case.dir, "out", "report.json")
        if os.path.exists(path) and not stat.S_ISFIFO(os.lstat(path).st_mode):
            yield ("violation", "--output replaced a FIFO with a regular file (as root, /dev/full would be replaced)")
    cases.append(Case("flags", "kforge-run --output names a FIFO",
                      [run, "--candidate", fx.correct, "--reference", fx.reference, "--seeds", "1", "--reps", "0",
                       "--output", "{dir}/out/report.json"], timeout=60, pinned=True, setup=fifo_output,
                      expect=fifo_kept))
    # Random values for every flag.
    pool = ([("tune", f, v) for f, (b, o) in TUNE_NUMERIC.items() for v in o] +
            [("tune", f, v) for f, vs in TUNE_STRINGS.items() for v in vs] +
            [("run", f, v) for f, (b, o) in RUN_FLAGS.items() for v in o] +
            [("compile", f, v) for f, (b, o) in COMPILE_FLAGS.items() for v in o])
    rng.shuffle(pool)
    for tool, flag, value in pool[:count]:
        {"tune": tune_case, "run": run_case, "compile": compile_case}[tool](flag, value, False)
    return cases


def expect_file(rel):
    def check(result):
        if result.rc != 0:
            yield ("violation", "failed (exit %s) with a relative path: %s" % (result.rc, result.err.strip()[-200:]))
        elif not os.path.exists(os.path.join(result.case.dir, rel)):
            yield ("violation", "exit 0 but %s is missing (relative to where it was run)" % rel)
    return check


# ---------------------------------------------------------------------------------------------------------------
# Category: db (run directories)
# ---------------------------------------------------------------------------------------------------------------
HOSTILE_TEXT = ["<script>alert(1)</script>", "\x1b[2J\x1b[31mRED\x1b[0m", "| forged | row |\n| 1 | 2 |",
                "```\nfenced\n```", "<img src=x onerror=alert(1)>", "\x00\x07\x08", "[link](javascript:alert(1))",
                "x" * 100000]


def db_cases(cfg, fx, rng, count):
    tune = cfg.tool["kforge-tune"]
    cases = []
    lines = open(os.path.join(fx.run, "db.jsonl")).read().splitlines()
    records = [json.loads(line) for line in lines]
    existing = len([r for r in records if r["kind"] == "candidate"])

    def add(name, mutate, pinned=False, resume=True, expect=None, fsize=None, extra=()):
        def setup(case, mutate=mutate):
            run = os.path.join(case.dir, "run")
            shutil.copytree(fx.run, run, symlinks=True)
            mutate(run)
        argv = ([tune, fx.payload, "--target", "cpu", "--resume", "--trials", str(existing + 1), "--seeds", "1",
                 "--reps", "10", "--jobs", "1", "--quiet", "-o", "{dir}/run"] if resume else
                [tune, "--replay", "{dir}/run", "--build-only"]) + list(extra)
        cases.append(Case("db", name, argv, timeout=120, setup=setup, pinned=pinned, fsize=fsize,
                          expect=all_of(db_intact("run"), report_clean("run"), expect)))

    def write_db(run, new_lines):
        with open(os.path.join(run, "db.jsonl"), "wb") as f:
            f.write(b"".join((l if isinstance(l, bytes) else l.encode()) + b"\n" for l in new_lines))

    def with_record(i, **changes):
        def mutate(run):
            rs = [json.loads(line) for line in lines]
            rs[i].update(changes)
            write_db(run, [json.dumps(r) for r in rs])
        return mutate

    add("db.jsonl is /dev/zero", lambda run: (os.remove(os.path.join(run, "db.jsonl")),
                                              os.symlink("/dev/zero", os.path.join(run, "db.jsonl"))), True,
        expect=refused("/dev/zero as db.jsonl"))
    add("db.jsonl is a FIFO", lambda run: (os.remove(os.path.join(run, "db.jsonl")),
                                           os.mkfifo(os.path.join(run, "db.jsonl"))), True,
        expect=refused("a FIFO as db.jsonl"))
    add("a 60000-deep record", lambda run: write_db(run, lines + [deep_json(DEEP)]), True)
    add("a 60000-deep schedule in a record", with_record(1, schedule=json.loads("[" * 500 + "]" * 500)), True)
    add("a 10 MB line", lambda run: write_db(run, lines + [json.dumps(dict(records[1], description="d" * 10_000_000))]),
        True)
    add("last line cut short", lambda run: write_db(run, lines[:-1] + [lines[-1][:len(lines[-1]) // 2]]), True)
    add("a cut line in the middle", lambda run: write_db(run, [lines[0], lines[1][:40]] + lines[2:]), True)
    add("duplicate ids", lambda run: write_db(run, lines + lines[1:]), True)
    add("run.json for another payload", lambda run: json.dump(dict(json.load(open(os.path.join(fx.run, "run.json"))),
                                                                   payload_hash="0" * 64),
                                                              open(os.path.join(run, "run.json"), "w")), True,
        expect=refused("a run directory made for another payload"))
    add("run.json is /dev/zero", lambda run: (os.remove(os.path.join(run, "run.json")),
                                              os.symlink("/dev/zero", os.path.join(run, "run.json"))), True,
        expect=refused("/dev/zero as run.json"))
    add("hostile text in records (report)", with_record(len(records) - 1, description=HOSTILE_TEXT[0] + HOSTILE_TEXT[1],
                                                        step=HOSTILE_TEXT[2] + HOSTILE_TEXT[4],
                                                        reason=HOSTILE_TEXT[1] + HOSTILE_TEXT[6]), True)
    add("time_ms NaN and negative", lambda run: write_db(run, lines[:1] + [
        lines[1].replace('"time_ms":', '"time_ms":NaN,"x":'), json.dumps(dict(records[-1], time_ms=-1))]), True)
    add("replay: a 60000-deep best.json", lambda run: open(os.path.join(run, "best.json"), "w").write(deep_json(DEEP)),
        True, resume=False)
    add("replay: db.jsonl is /dev/zero", lambda run: (os.remove(os.path.join(run, "db.jsonl")),
                                                      os.symlink("/dev/zero", os.path.join(run, "db.jsonl"))), True,
        resume=False, expect=refused("/dev/zero as db.jsonl"))
    add("replay: payload.mlir replaced", lambda run: open(os.path.join(run, "payload.mlir"), "w").write(
        MODULE_ASM % open(fx.payload).read()), True, resume=False, expect=refused("a payload with llvm.module_asm"))
    # A full disk: every file the run writes is limited to 64 kB (EFBIG past it).
    cases.append(Case("db", "a full disk (files limited to 64 kB)",
                      [tune, fx.payload, "--target", "cpu", "--trials", "3", "--seeds", "1", "--reps", "10", "--jobs",
                       "1", "--quiet", "-o", "{dir}/run"], timeout=120, pinned=True, fsize=64 << 10,
                      expect=all_of(db_intact("run"), full_disk_expect)))
    cases.append(Case("db", "a full disk during --resume", [tune, fx.payload, "--target", "cpu", "--resume", "--trials",
                                                            str(existing + 2), "--seeds", "1", "--reps", "10", "--jobs",
                                                            "1", "--quiet", "-o", "{dir}/run"],
                      timeout=120, pinned=True, fsize=4 << 10,
                      setup=lambda case: shutil.copytree(fx.run, os.path.join(case.dir, "run")),
                      expect=all_of(db_intact("run"), full_disk_expect)))
    cases.append(Case("db", "two --resume on one directory", [], timeout=240, pinned=True,
                      driver=two_resumes_driver(cfg, fx, existing)))
    for i in range(count):
        def mutate(run, i=i):
            r = random.Random("%s-db-%d" % (cfg.seed, i))
            choice = r.randrange(4)
            if choice == 0:
                rs = [json.loads(line) for line in lines]
                k = r.randrange(len(rs))
                rs[k] = mutate_json(r, rs[k])
                write_db(run, [json.dumps(x) for x in rs])
            elif choice == 1:
                new = list(lines)
                new.insert(r.randrange(len(new) + 1), json.dumps(random_json(r)))
                write_db(run, new)
            elif choice == 2:
                data = bytearray(open(os.path.join(fx.run, "db.jsonl"), "rb").read())
                for _ in range(r.randint(1, 20)):
                    data[r.randrange(len(data))] = r.randrange(256)
                open(os.path.join(run, "db.jsonl"), "wb").write(bytes(data))
            else:
                rj = json.load(open(os.path.join(fx.run, "run.json")))
                json.dump(mutate_json(r, rj), open(os.path.join(run, "run.json"), "w"))
        add("random #%d" % i, mutate, resume=(i % 3 != 2))
    return cases


def full_disk_expect(result):
    """With writes failing, either an error (exit non-zero) or a complete run."""
    run = os.path.join(result.case.dir, "run")
    if result.rc == 0:
        for name in ("best.json", "run.json"):
            path = os.path.join(run, name)
            if os.path.exists(path):
                try:
                    json.load(open(path))
                except ValueError:
                    yield ("violation", "exit 0 with a truncated %s (writes failed silently)" % name)


def two_resumes_driver(cfg, fx, existing):
    def drive(cfg_, case):
        run = os.path.join(case.dir, "run")
        shutil.copytree(fx.run, run)
        argv = [cfg.tool["kforge-tune"], fx.payload, "--target", "cpu", "--resume", "--trials", str(existing + 4),
                "--seeds", "1", "--reps", "10", "--jobs", "1", "--quiet", "-o", run]
        env = dict(os.environ, TMPDIR=os.path.join(case.dir, "tmp"), HOME=cfg.home)
        start = time.time()
        with open(os.path.join(case.dir, "stdout"), "wb") as out, open(os.path.join(case.dir, "stderr"), "wb") as err:
            procs = [subprocess.Popen(argv, stdout=out, stderr=err, env=env, start_new_session=True) for _ in range(2)]
            codes = []
            for p in procs:
                try:
                    codes.append(p.wait(timeout=max(1, case.timeout - (time.time() - start))))
                except subprocess.TimeoutExpired:
                    codes.append("HANG")
                for sig in (signal.SIGCONT, signal.SIGKILL):
                    try:
                        os.killpg(p.pid, sig)
                    except ProcessLookupError:
                        pass
                p.wait()
        result = Result(case, "HANG" if "HANG" in codes else max(codes, key=lambda c: abs(c)), time.time() - start,
                        os.path.join(case.dir, "stdout"), os.path.join(case.dir, "stderr"))

        def check(result):
            ids = []
            for line in open(os.path.join(run, "db.jsonl"), "rb").read().splitlines():
                try:
                    ids.append(json.loads(line)["id"])
                except (ValueError, KeyError, TypeError):
                    yield ("violation", "two resumes left a line that does not parse")
                    return
            if len(ids) != len(set(ids)):
                yield ("violation", "two resumes recorded the same trial id twice (both ran: exits %s)" % codes)
            if codes == [0, 0] and len(ids) != len(set(ids)):
                yield ("violation", "both resumes succeeded on one directory")
        case.expect = check
        return result
    return drive


# ---------------------------------------------------------------------------------------------------------------
# Category: llm (a hostile endpoint on loopback)
# ---------------------------------------------------------------------------------------------------------------
class Hostile(http.server.BaseHTTPRequestHandler):
    """Serves self.server.script in order (the last repeats). A reply: {"status", "text", "body" (raw bytes or
    text), "usage", "echo_headers", "drip" (seconds per byte), "hang" (never answer), "headers", "length_lie"}."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        try:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0)).decode(errors="replace")
        except (ValueError, OSError):
            body = ""
        server = self.server
        with server.lock:
            index = min(server.served, len(server.script) - 1)
            server.served += 1
            server.requests.append({"headers": dict(self.headers), "body": body})
        reply = server.script[index]
        if reply.get("hang"):
            server.stop.wait(reply["hang"])
            return
        if reply.get("echo_headers"):
            payload = json.dumps({"error": {"message": "invalid key"}, "headers": dict(self.headers)}).encode()
        elif "body" in reply:
            payload = reply["body"] if isinstance(reply["body"], bytes) else reply["body"].encode()
        else:
            payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": reply.get("text", "")}}],
                                  "usage": reply.get("usage", {"prompt_tokens": 10, "completion_tokens": 10})}).encode()
        try:
            self.send_response(reply.get("status", 200))
            for k, v in reply.get("headers", {}).items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload) + reply.get("length_lie", 0)))
            self.end_headers()
            if reply.get("drip"):
                for i in range(len(payload)):
                    if server.stop.wait(reply["drip"]):
                        return
                    self.wfile.write(payload[i:i + 1])
                    self.wfile.flush()
            else:
                self.wfile.write(payload)
            if reply.get("length_lie"):
                server.stop.wait(30)
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            pass


def serve_http(script):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    httpd.daemon_threads = True
    httpd.script, httpd.served, httpd.requests = script, 0, []
    httpd.lock, httpd.stop = threading.Lock(), threading.Event()
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def close_http(httpd):
    httpd.stop.set()
    httpd.shutdown()
    httpd.server_close()


def llm_driver(cfg, fx, script, trials=2, extra=()):
    """kforge-tune --policy llm (through the spy wrappers) against `script` on a hostile endpoint; a second
    server (the sink, "@SINK@" in a reply) records whatever a redirect sends it."""
    def drive(cfg_, case):
        sink = serve_http([{"status": 404, "body": "{}"}])
        sink_url = "http://127.0.0.1:%d" % sink.server_port

        def fill(value):
            if isinstance(value, str):
                return value.replace("{dir}", case.dir).replace("@SINK@", sink_url)
            if isinstance(value, dict):
                return {k: fill(v) for k, v in value.items()}
            return value
        httpd = serve_http([fill(r) for r in script])
        os.makedirs(os.path.join(case.dir, "escape"), exist_ok=True)
        case.argv = [os.path.join(fx.spybin, "kforge-tune"), fx.payload, "--target", "cpu", "--policy", "llm",
                     "--llm-model", "mock", "--llm-endpoint", "http://127.0.0.1:%d/v1" % httpd.server_port,
                     "--llm-key-env", "KFORGE_FUZZ_KEY", "--llm-timeout", "2", "--llm-retries", "1",
                     "--llm-backoff-ms", "10", "--trials", str(trials), "--jobs", "1", "--seeds", "1", "--reps", "10",
                     "--quiet", "-o", "{dir}/run"] + list(extra)
        case.env = dict(case.env, KFORGE_FUZZ_KEY=cfg.key)
        try:
            result = run_process(cfg, case)
        finally:
            close_http(httpd)
            close_http(sink)
        with open(os.path.join(case.dir, "requests.jsonl.txt"), "w") as f:
            for r in httpd.requests:  # kept for the record, without the key
                f.write(json.dumps({"body": r["body"][:20000].replace(cfg.key, "<KEY>")}) + "\n")
        result.extra["key_in_body"] = any(cfg.key in r["body"] for r in httpd.requests)
        result.extra["requests"] = len(httpd.requests)
        if any(cfg.key in json.dumps(r["headers"]) + r["body"] for r in sink.requests):
            result.extra["key_to_sink"] = True
        return result
    return drive


def script_reply(fx, snippet):
    script = insert_before_yield(fx.rendered[min(2, len(fx.rendered) - 1)], snippet)
    return {"text": "Here is a script:\n```mlir\n%s\n```\n" % script}


def llm_cases(cfg, fx, rng, count):
    cases = []
    good = json.dumps({"schedules": [{"why": "tile", "actions": fx.schedules[0]}]})

    def add(name, script, pinned=False, expect=None, trials=2, timeout=120, extra=(), files=None):
        cases.append(Case("llm", name, [], files=files, timeout=timeout, pinned=pinned,
                          driver=llm_driver(cfg, fx, script, trials, extra),
                          expect=all_of(db_intact("run"), report_clean("run"), expect)))

    why = "".join(HOSTILE_TEXT[:7])
    add("60000-deep JSON in the reply", [{"text": deep_json(DEEP)}], True)
    add("60000-deep JSON body", [{"body": '{"choices": ' + deep_json(DEEP) + "}"}], True)
    add("60000-deep schedules value", [{"text": '{"schedules": ' + deep_json(DEEP) + "}"}], True)
    add("401 echoing the key", [{"status": 401, "echo_headers": True}], True)
    add("500 echoing the key, then good", [{"status": 500, "echo_headers": True}, {"text": good}], True)
    add("token usage 2^63", [{"text": good, "usage": {"prompt_tokens": 2 ** 63 - 1, "completion_tokens": 2 ** 63 - 1}}],
        True)
    add("token usage 2^64 and negative", [{"text": good, "usage": {"prompt_tokens": 2 ** 64, "completion_tokens": -5}}],
        True)
    add("token usage strings", [{"text": good, "usage": {"prompt_tokens": "many", "completion_tokens": None}}], True)
    add("markdown, HTML and ANSI in why", [{"text": json.dumps({"schedules": [{"why": why, "actions": s}
                                                                              for s in fx.schedules[:2]]})}], True)
    add("slow drip", [{"text": good, "drip": 0.5}], True, timeout=120)
    add("a black hole (never answers)", [{"hang": 60}], True, timeout=120)
    add("Content-Length larger than the body", [{"text": good, "length_lie": 1000}], True, timeout=120)
    add("a body of invalid UTF-8 and NULs", [{"body": b"\xff\xfe\x00{\"choices\": [\x00]}"}], True)
    add("choices of the wrong types", [{"body": json.dumps({"choices": [{"message": {"content": 5}}]})},
                                       {"body": json.dumps({"choices": "x"})}, {"body": "[]"}, {"body": "null"}], True)
    add("10^5 schedules", [{"text": json.dumps({"schedules": [{"why": "w", "actions": fx.schedules[0]}] * 100000})}],
        True, timeout=180)
    add("a redirect to another server", [{"status": 307, "headers": {"Location": "@SINK@/v1/chat/completions"},
                                          "body": ""}], True)
    for name, snippet in DANGEROUS.items():
        add("script: " + name, [script_reply(fx, snippet), {"text": good}], True,
            files={"secret.mlir": "// %s\n%s = garbage\n" % (cfg.key, cfg.key)}, expect=escape_check)
    for i in range(count):
        r = rng.random()
        if r < 0.4:
            text = json.dumps(mutate_json(rng, {"schedules": [{"why": "w", "actions": rng.choice(fx.schedules)}]}))
        elif r < 0.6:
            text = json.dumps(random_json(rng))
        elif r < 0.8:
            text = "```mlir\n%s\n```" % mutate_text(rng, rng.choice(fx.rendered))
        else:
            text = rng.choice(HOSTILE_TEXT) + "```json\n" + good[:rng.randrange(len(good))] + "\n```"
        add("random reply #%d" % i, [{"text": text}, {"text": good}])
    return cases


def escape_check(result):
    escaped = glob.glob(os.path.join(result.case.dir, "escape", "**"), recursive=True)[1:]
    if escaped:
        yield ("violation", "an LLM's script wrote files: " + ", ".join(os.path.relpath(p, result.case.dir)
                                                                        for p in escaped[:3]))


# ---------------------------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------------------------
CATEGORIES = {"payload": (payload_cases, 0.16), "schedule": (schedule_cases, 0.18), "manifest": (manifest_cases, 0.13),
              "flags": (flag_cases, 0.13), "transform": (transform_cases, 0.16), "db": (db_cases, 0.06),
              "llm": (llm_cases, 0.06), "artifact": (artifact_cases, 0.12)}


def save_failure(cfg, case, result, findings):
    dest = os.path.join(cfg.work, "failures", "%04d-%s" % (case.id, case.category))
    os.makedirs(dest, exist_ok=True)
    for base, dirs, files in os.walk(os.path.join(case.dir, "in")):
        for name in files:
            src = os.path.join(base, name)
            rel = os.path.relpath(src, os.path.join(case.dir, "in"))
            out = os.path.join(dest, "in", rel)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            if os.path.islink(src):
                with open(out + ".symlink", "w") as f:
                    f.write(os.readlink(src))
            elif stat.S_ISREG(os.lstat(src).st_mode):
                with open(src, "rb") as f, open(out, "wb") as g:
                    g.write(f.read(SAVE_LIMIT))
    for name in ("stdout", "stderr", "stdin"):
        src = os.path.join(case.dir, name)
        if os.path.exists(src):
            with open(src, "rb") as f, open(os.path.join(dest, name), "wb") as g:
                g.write(f.read(SAVE_LIMIT))
    argv = [sub(a, case) for a in case.argv]
    info = {"id": case.id, "category": case.category, "name": case.name, "findings": findings,
            "exit": result.rc, "seconds": round(result.elapsed, 2), "argv": argv, "case_dir": case.dir,
            "reproduce": "python3 %s --build %s --src %s --work /tmp/kforge-fuzz-repro --seed %s --only %s --case %d"
                         % (os.path.abspath(__file__), cfg.build, cfg.src, cfg.seed, case.category, case.id)}
    with open(os.path.join(dest, "case.json"), "w") as f:
        json.dump(info, f, indent=2)
    return info


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", required=True)
    parser.add_argument("--src", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--cases", type=int, default=int(os.environ.get("KFORGE_FUZZ_CASES", "300")))
    parser.add_argument("--seed", default=os.environ.get("KFORGE_FUZZ_SEED", "36"))
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("KFORGE_FUZZ_JOBS", "2")))
    parser.add_argument("--only", default="")
    parser.add_argument("--case", type=int, default=None, help="run only this case id (from a summary)")
    parser.add_argument("--summary", default="")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--keep", action="store_true", help="keep the directories of passing cases too")
    args = parser.parse_args()
    cfg = Config(args)
    shutil.rmtree(cfg.work, ignore_errors=True)
    os.makedirs(cfg.work)
    started = time.time()
    os.makedirs(os.path.join(cfg.work, "bin"))
    for tool, path in cfg.tool.items():
        shutil.copy2(os.path.join(cfg.bin, tool), path)
    fx = Fixtures(cfg)
    only = set(filter(None, args.only.split(",")))
    cases = []
    for category, (make, weight) in CATEGORIES.items():
        rng = random.Random("%s-%s" % (cfg.seed, category))
        made = make(cfg, fx, rng, max(1, round(args.cases * weight)))
        cases.extend(made)
    for i, case in enumerate(cases):
        case.id = i
        case.dir = os.path.join(cfg.work, "cases", "%04d" % i)
    cases = [c for c in cases if (not only or c.category in only) and (args.case is None or c.id == args.case)]
    for case in cases:
        # Scripts that name a path inside their own case directory.
        for rel, content in list(case.files.items()):
            if isinstance(content, str) and "{dir}" in content:
                case.files[rel] = content.replace("{dir}", case.dir)
    if args.list:
        for case in cases:
            print("%4d %-9s %s%s" % (case.id, case.category, case.name, " (pinned)" if case.pinned else ""))
        return 0
    print("fuzz: %d cases (%d pinned), seed %s, %d jobs" % (len(cases), sum(c.pinned for c in cases), cfg.seed,
                                                              args.jobs), flush=True)
    counts = {c: 0 for c in CLASSES}
    per_category = {}
    failures = []

    def one(case):
        result, findings = execute(cfg, case)
        return case, result, findings

    timings = []

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for case, result, findings in pool.map(one, cases):
            cat = per_category.setdefault(case.category, dict({c: 0 for c in CLASSES}, cases=0, seconds=0.0))
            cat["cases"] += 1
            timings.append((round(result.elapsed, 1), case.id, case.category, case.name))
            cat["seconds"] = round(cat["seconds"] + result.elapsed, 1)
            classes = sorted({cls for cls, _ in findings})
            for cls in classes:
                counts[cls] += 1
                cat[cls] += 1
            if findings:
                failures.append(save_failure(cfg, case, result, findings))
                print("FAIL %4d %-9s %s: %s" % (case.id, case.category, case.name,
                                                "; ".join("%s: %s" % f for f in findings)[:400]), flush=True)
            elif not args.keep:
                shutil.rmtree(case.dir, ignore_errors=True)
    summary = {"seed": cfg.seed, "cases": len(cases), "pinned": sum(c.pinned for c in cases),
               "seconds": round(time.time() - started, 1), "counts": counts, "categories": per_category,
               "slowest": sorted(timings, reverse=True)[:15],
               "failures": failures}
    path = args.summary or os.path.join(cfg.work, "summary.json")
    with open(path, "w") as f:
        json.dump(summary, f, indent=2)
    print("fuzz: %d cases in %.0f s" % (len(cases), time.time() - started))
    print("%-10s %6s %6s %5s %14s %9s %10s" % ("category", "cases", "crash", "hang", "false_verdict", "key_leak",
                                              "violation"))
    for category, cat in per_category.items():
        print("%-10s %6d %6d %5d %14d %9d %10d" % (category, cat["cases"], cat["crash"], cat["hang"],
                                                   cat["false_verdict"], cat["key_leak"], cat["violation"]))
    print("fuzz: %d crashes, %d hangs, %d false verdicts, %d key leaks, %d violations (summary: %s)" % (
        counts["crash"], counts["hang"], counts["false_verdict"], counts["key_leak"], counts["violation"], path))
    return 1 if any(counts.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
