#!/usr/bin/env python3
"""Per-payload tables of a directory of kforge-tune runs (OUT/runs/<name>/db.jsonl, OUT/exits.txt): a summary
row per run (exit, trials, correct, incorrect or failed, best ms, naive baseline ms, the best schedule) and then
every trial (schedule, status, ms, why). Markdown on stdout.

    python3 scripts/gpu/summarize_trials.py OUT
"""
import json
import os
import sys


def records(run):
    with open(os.path.join(run, "db.jsonl")) as f:
        return [json.loads(line) for line in f if line.endswith("\n") and line.strip()]


def main(out):
    runs = os.path.join(out, "runs")
    exits = {}
    if os.path.exists(os.path.join(out, "exits.txt")):
        exits = dict(line.split(": ", 1) for line in open(os.path.join(out, "exits.txt")).read().splitlines())
    print("| payload | exit | trials | correct | not correct | best ms | naive baseline ms | best schedule |")
    print("|---|---|---|---|---|---|---|---|")
    details = []
    for name in sorted(os.listdir(runs)):
        run = os.path.join(runs, name)
        if not os.path.isdir(run):
            continue
        if not os.path.exists(os.path.join(run, "db.jsonl")):
            print(f"| {name} | {exits.get(name, '?')} | no db.jsonl ||||||")
            continue
        rows = records(run)
        base = next((r for r in rows if r.get("kind") == "baseline"), {})
        trials = [r for r in rows if r.get("kind") == "candidate"]
        correct = [r for r in trials if r.get("status") == "correct"]
        best = min(correct, key=lambda r: r["time_ms"]) if correct else None
        print(f"| {name} | {exits.get(name, '?')} | {len(trials)} | {len(correct)} | {len(trials) - len(correct)} | "
              f"{best['time_ms'] if best else 'none'} | {base.get('time_ms')} | "
              f"{best['description'] if best else ''} |")
        details.append((name, trials))
    for name, trials in details:
        print(f"\n### {name}\n\n| # | schedule | status | ms | why |\n|---|---|---|---|---|")
        for r in trials:
            why = str(r.get("error") or r.get("message") or r.get("reason") or "").replace("|", "/").replace("\n", " ")
            print(f"| {r.get('id')} | {r.get('description', '')} | {r.get('status')} | {r.get('time_ms', '')} | "
                  f"{why[:160]} |")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
