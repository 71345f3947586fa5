#!/usr/bin/env python3
"""Runs the forged-verdict kernels (forged.c, built by forge.py) through kforge-run alone, kforge-run --serve and
kforge-tune, and prints one line of facts per case for FileCheck (test/Runner/forged-verdict-cpu.test; on the
GPU machine scripts/gpu/forged_verdicts.sh). Every run has a deadline: a case that outlives it is printed as
HANG (a stopped or killed judge must not stall its caller).

usage:
  forged_session.py build REFERENCE_DIR OUT [--gpu]
      one artifact per attack under OUT/<ATTACK> (manifest copied from REFERENCE_DIR)
  forged_session.py single KFORGE_RUN REFERENCE_DIR ARTIFACTS WORK [kforge-run args...]
  forged_session.py serve KFORGE_RUN REFERENCE_DIR ARTIFACTS WORK [kforge-run args...]
  forged_session.py tune BIN_DIR PAYLOAD ARTIFACTS WORK [kforge-tune args...]
      BIN_DIR holds kforge-tune, kforge-compile and kforge-run; the trials' libraries are swapped for forged
      ones (swap_compile.py stands in for kforge-compile next to a copy of kforge-tune); the LLM policy talks
      to a mock endpoint on loopback with a fake API key, which must not leak.
  forged_session.py check TEST_FILE PREFIXES OUTPUT
      checks OUTPUT against the CHECK lines of TEST_FILE (forged-verdict-cpu.test) for the comma-separated
      PREFIXES, the way FileCheck does for these lines (PREFIX: and PREFIX-NEXT:, {{regex}} parts), for machines
      without FileCheck (scripts/gpu/forged_verdicts.sh); prints each expectation with OK or UNEXPECTED.
"""
import glob
import http.server
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import forge  # noqa: E402

SECRET = "sk-forged-verdict-secret-4242424242"
DEADLINE_S = 60


def summary(report):
    """status | reason | timing (honest, forged or none)."""
    timing = report.get("timing")
    clock = "none" if not isinstance(timing, dict) else ("forged" if timing.get("clock") == "forged" else "honest")
    return "%s | %s | timing=%s" % (report.get("status"), str(report.get("reason", ""))[:140], clock)


def run_bounded(argv, deadline=DEADLINE_S, **kw):
    """(returncode or 'HANG', stdout, stderr); a hung process group is continued and killed."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, **kw)
    try:
        out, err = proc.communicate(timeout=deadline)
        return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")
    except subprocess.TimeoutExpired:
        for sig in (signal.SIGCONT, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass
        out, err = proc.communicate()
        return "HANG", out.decode(errors="replace"), err.decode(errors="replace")


def reports_in(text):
    """The JSON objects printed on stdout (kforge-run alone prints exactly one)."""
    found, decoder, at = [], json.JSONDecoder(), 0
    while True:
        at = text.find("{", at)
        if at < 0:
            return found
        try:
            value, end = decoder.raw_decode(text, at)
            found.append(value)
            at = end
        except ValueError:
            at += 1


# ---------------------------------------------------------------------------------------------------------------
def build(reference, out, gpu):
    for attack in forge.ATTACKS:
        forge.forge(reference, attack, os.path.join(out, attack), gpu=gpu)


# ---------------------------------------------------------------------------------------------------------------
SINGLE = ["CORRECT", "ZEROS", "REPLAY", "FD_EXIT", "FD_RETURN", "FD_CTOR", "FD_CORRECT", "KILL_PARENT", "STOP_PARENT",
          "KILL_ALL", "FORGE_REPORT", "WRITE_OUTSIDE", "PROC_READER", "SLOW_FORGED_TIMING"]


def single(run, reference, arts, work, extra):
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, TMPDIR=work)
    for attack in SINGLE:
        candidate = os.path.join(work, "single", attack)
        shutil.rmtree(candidate, ignore_errors=True)
        shutil.copytree(os.path.join(arts, attack), candidate)
        output = os.path.join(work, "single-%s.json" % attack)
        if os.path.exists(output):
            os.remove(output)
        rc, out, _ = run_bounded([run, "--candidate", candidate, "--reference", reference, "--seeds", "2",
                                  "--reps", "10", "--timeout", "20", "--output", output] + extra, env=env)
        reports = reports_in(out)
        if rc == "HANG":
            print("single %s: HANG (no verdict within %d s)" % (attack, DEADLINE_S))
            continue
        shown = summary(reports[0]) if reports else "no report"
        print("single %s: %s | reports=%d exit=%s" % (attack, shown, len(reports), rc))
        if attack == "FORGE_REPORT":
            try:
                print("single FORGE_REPORT: output file: %s" % json.load(open(output)).get("status"))
            except (OSError, ValueError):
                print("single FORGE_REPORT: output file: unreadable")
        if attack == "WRITE_OUTSIDE":
            escaped = sorted(os.path.relpath(p, work) for p in glob.glob(work + "/**/escaped-by-candidate*",
                                                                          recursive=True))
            print("single WRITE_OUTSIDE: escaped files: %s" % (", ".join(escaped) or "none"))
        if attack == "SLOW_FORGED_TIMING" and reports:
            t = reports[0].get("timing") or {}
            honest = reports[0].get("status") != "correct" or t.get("median_ms", 0) >= 15
            print("single SLOW_FORGED_TIMING: timing honest (failed, or a median of at least 15 ms): %s" % honest)
    # A kernel that writes the reference outputs it would need into the seed cache: the second run must not
    # read them back.
    cache = os.path.join(work, "seed-cache")
    shutil.rmtree(cache, ignore_errors=True)
    for attempt in ("first", "second"):
        rc, out, _ = run_bounded([run, "--candidate", os.path.join(arts, "PLANT_SEED"), "--reference", reference,
                                  "--seeds", "2", "--reps", "0", "--timeout", "20", "--cache-dir", cache] + extra,
                                 env=env)
        reports = reports_in(out)
        print("single PLANT_SEED %s run: %s" % (attempt, summary(reports[0]) if reports else "no report, exit %s" % rc))


# ---------------------------------------------------------------------------------------------------------------
class Server:
    """A kforge-run --serve session: requests with nonce and id, replies read with a deadline."""

    def __init__(self, argv, env):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, start_new_session=True, env=env)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.count = 0

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.decode(errors="replace"))
        self.lines.put(None)

    def ask(self, candidate, seeds=2, reps=10):
        self.count += 1
        nonce = "nonce-%d-%d" % (os.getpid(), self.count)
        request = {"candidate": candidate, "seeds": seeds, "reps": reps, "timeout_s": 20, "nonce": nonce,
                   "id": self.count}
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            return None, "server gone"
        try:
            line = self.lines.get(timeout=DEADLINE_S)
        except queue.Empty:
            return None, "HANG"
        if line is None:
            return None, "server gone (exit %s)" % self.proc.poll()
        try:
            reply = json.loads(line)
        except ValueError:
            return None, "unreadable reply %r" % line[:80]
        if reply.get("nonce") != nonce or reply.get("id") != self.count:
            return reply, "reply not for this request"
        return reply, ""

    def close(self):
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGCONT)
            os.killpg(self.proc.pid, signal.SIGKILL)
            return "HANG"


# Each forged candidate runs in a session of its own, followed by innocent ones: an honest kernel must still
# pass and an honest wrong one still fail, from the same server.
SERVE = ["FD_RETURN", "FD_EXIT", "FD_CTOR", "FD_CORRECT", "KILL_PARENT", "STOP_PARENT", "KILL_ALL", "MITM",
         "SLOW_FORGED_TIMING"]


def serve(run, reference, arts, work, extra):
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, TMPDIR=work)
    for attack in SERVE:
        cache = os.path.join(work, "serve-cache-" + attack)
        shutil.rmtree(cache, ignore_errors=True)
        argv = [run, "--serve", "--reference", reference, "--cache-dir", cache] + extra
        server = Server(argv, env)
        pids = set()
        for step, name in enumerate([attack, "ZEROS", "CORRECT"]):
            reply, problem = server.ask(os.path.join(arts, name))
            label = "serve %s" % attack if step == 0 else "serve %s, then %s" % (attack, name)
            if reply is None:
                print("%s: %s" % (label, problem))
                server.close()
                server = Server(argv, env)
                continue
            pids.add(reply.get("server", {}).get("pid"))
            print("%s: %s%s" % (label, summary(reply), (" | " + problem) if problem else ""))
        print("serve %s: one server: %s, exit %s" % (attack, pids == {server.proc.pid}, server.close()))


# ---------------------------------------------------------------------------------------------------------------
class Endpoint(http.server.BaseHTTPRequestHandler):
    """An OpenAI-style endpoint that answers each request with the next of `schedules`, and logs requests."""
    schedules, log, served = [], [], [0]

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode(errors="replace")
        Endpoint.log.append({"headers": dict(self.headers), "body": body})
        batch = Endpoint.schedules[Endpoint.served[0] % len(Endpoint.schedules)]
        Endpoint.served[0] += 1
        text = json.dumps({"schedules": [{"why": "trial", "actions": batch}]})
        payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}],
                              "usage": {"prompt_tokens": 10, "completion_tokens": 10}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


# Ordered so that what one attack leaves behind in a long-lived runner shows on the trials after it.
TUNE = ["PROC_READER", "CORRECT", "FD_EXIT", "CORRECT", "KILL_PARENT", "CORRECT", "FORGE_REPORT", "CORRECT",
        "WRITE_OUTSIDE", "CORRECT", "MITM", "ZEROS", "CORRECT", "FD_CTOR", "CORRECT", "FD_RETURN", "CORRECT", "ZEROS"]
TUNE_PROCESS = ["FORGE_REPORT", "CORRECT", "KILL_PARENT", "CORRECT", "FD_EXIT", "CORRECT", "ZEROS"]


def tune(bin_dir, payload, arts, work, extra):
    shutil.rmtree(work, ignore_errors=True)
    tools = os.path.join(work, "bin")
    os.makedirs(tools)
    shutil.copy(os.path.join(bin_dir, "kforge-tune"), tools)
    shutil.copy(os.path.join(HERE, "swap_compile.py"), os.path.join(tools, "kforge-compile"))
    shutil.copy(os.path.join(HERE, "swap_compile.py"), os.path.join(tools, "kforge-run"))
    for tool in ("kforge-compile", "kforge-run"):
        os.chmod(os.path.join(tools, tool), 0o755)
    plan = TUNE_PROCESS if "process" in extra else TUNE
    # The schedules the heuristic would try first: distinct ones, as many as there are trials.
    rc, out, err = run_bounded([os.path.join(bin_dir, "kforge-tune"), payload, "--target", "cpu", "--dry-run",
                                str(len(plan) * 3)])
    schedules = []
    for line in out.splitlines():
        actions = json.loads(line)["actions"]
        if actions not in schedules:
            schedules.append(actions)
    Endpoint.schedules = schedules
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    run_dir = os.path.join(work, "run")
    env_log = os.path.join(work, "compile-env.jsonl")
    env = dict(os.environ, TMPDIR=work, KFORGE_FORGED_KEY=SECRET, FORGED_REAL_COMPILE=os.path.join(
        bin_dir, "kforge-compile"), FORGED_REAL_RUN=os.path.abspath(os.path.join(bin_dir, "kforge-run")), FORGED_PLAN=",".join(os.path.join(arts, a) for a in plan),
        FORGED_STATE=os.path.join(work, "plan-state"), FORGED_ENV_LOG=env_log, FORGED_SECRET=SECRET)
    rc, out, err = run_bounded([os.path.join(tools, "kforge-tune"), payload, "--target", "cpu", "--policy", "llm",
                                "--llm-model", "mock", "--llm-endpoint", "http://127.0.0.1:%d/v1" % httpd.server_port,
                                "--llm-key-env", "KFORGE_FORGED_KEY", "--llm-retries", "0", "--trials",
                                str(len(plan)), "--jobs", "1", "--seeds", "2", "--reps", "10", "--run-timeout", "30",
                                "-o", run_dir] + extra, deadline=600, env=env)
    httpd.shutdown()
    print("tune: exit %s" % rc)
    records = []
    if os.path.exists(os.path.join(run_dir, "db.jsonl")):
        records = [json.loads(line) for line in open(os.path.join(run_dir, "db.jsonl")) if line.strip()]
    candidates = [r for r in records if r.get("kind") == "candidate"]
    for r in candidates:
        attack = plan[r["id"] - 1] if 0 < r["id"] <= len(plan) else "?"
        timing = r.get("timing") or {}
        clock = "forged" if isinstance(timing, dict) and timing.get("clock") == "forged" else "honest"
        print("tune trial %d %s: %s | %s | timing=%s" % (r["id"], attack, r.get("status"),
                                                         str(r.get("reason", ""))[:120], clock if timing else "none"))
    print("tune: trials recorded %d of %d" % (len(candidates), len(plan)))
    leaks = []
    for path in glob.glob(work + "/**", recursive=True):
        if os.path.isfile(path) and not os.path.islink(path) and SECRET.encode() in open(path, "rb").read():
            leaks.append(os.path.relpath(path, work))
    if SECRET in out or SECRET in err:
        leaks.append("kforge-tune's stdout/stderr")
    print("tune: key found in: %s" % (", ".join(sorted(leaks)) or "nothing"))
    bodies = [e for e in Endpoint.log if SECRET in e["body"]]
    print("tune: key sent to the endpoint in a request body: %s" % bool(bodies))
    inherited = sorted({json.loads(line)["tool"] for line in open(env_log) if json.loads(line)["secret"]}) \
        if os.path.exists(env_log) else []
    print("tune: children holding the key in their environment: %s" % (", ".join(inherited) or "none"))
    escaped = glob.glob(work + "/**/escaped-by-candidate*", recursive=True)
    print("tune: escaped files: %s" % (", ".join(os.path.relpath(p, work) for p in escaped) or "none"))


# ---------------------------------------------------------------------------------------------------------------
def pattern_of(check):
    """A FileCheck pattern (literal text with {{regex}} parts) as a Python regex."""
    out, at = "", 0
    while True:
        start = check.find("{{", at)
        if start < 0:
            return out + re.escape(check[at:])
        end = check.find("}}", start + 2)
        while end >= 0 and check[end + 2:end + 3] == "}":
            end += 1  # "}}}" ends a regex that itself ends in "}"
        out += re.escape(check[at:start]) + "(?:" + check[start + 2:end] + ")"
        at = end + 2


def check(test_file, prefixes, output):
    prefixes = prefixes.split(",")
    directives = []
    for line in open(test_file):
        m = re.match(r"^([A-Z][A-Z0-9-]*?)(-NEXT)?:\s?(.*)$", line.rstrip("\n"))
        if m and m.group(1) in prefixes:
            directives.append((bool(m.group(2)), m.group(3).strip(), re.compile(pattern_of(m.group(3).strip()))))
    lines = open(output).read().splitlines()
    at, failures = 0, 0
    for nxt, text, regex in directives:
        found = None
        for i in range(at, len(lines) if not nxt else min(at + 1, len(lines))):
            if regex.search(lines[i]):
                found = i
                break
        if found is None:
            failures += 1
            # The line meant: the next one for a -NEXT, else the next that starts like the expectation. Going on
            # after it lists every failure (FileCheck stops at the first).
            head = re.split(r"\{\{| \| ", text)[0]
            meant = at if nxt else next((i for i in range(at, len(lines)) if lines[i].startswith(head)), None)
            print("UNEXPECTED: %s\n    expected: %s" % (lines[meant] if meant is not None and meant < len(lines)
                                                       else "(no such line)", text))
            if meant is not None:
                at = meant + 1
            continue
        print("OK: %s" % lines[found])
        at = found + 1
    print("%d of %d expectations met" % (len(directives) - failures, len(directives)))
    return 1 if failures else 0


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "build":
        build(args[0], args[1], "--gpu" in args[2:])
    elif mode == "single":
        single(args[0], os.path.abspath(args[1]), os.path.abspath(args[2]), os.path.abspath(args[3]), args[4:])
    elif mode == "serve":
        serve(args[0], os.path.abspath(args[1]), os.path.abspath(args[2]), os.path.abspath(args[3]), args[4:])
    elif mode == "check":
        sys.exit(check(args[0], args[1], args[2]))
    elif mode == "tune":
        tune(args[0], os.path.abspath(args[1]), os.path.abspath(args[2]), os.path.abspath(args[3]), args[4:])
    else:
        raise SystemExit(__doc__)
