#!/usr/bin/env python3
"""Tabulates kforge-tune runs of the LLM comparison (docs/perf/llm-cpu.md) from their run directories.

usage: summarize.py RESULTS_DIR            (RESULTS_DIR/runs/<payload>/<policy>/{db.jsonl,llm-transcript.jsonl})

Writes RESULTS_DIR/summary.md (the tables) and RESULTS_DIR/curves-<payload>.svg (best-so-far time against the
trial number, one line per policy), and prints summary.md. Only what the files say: no timing is redone here.
"""
import json
import math
import os
import sys

POLICIES = ["random", "heuristic+evolve", "llm", "llm+evolve"]
COLOURS = {"random": "#888888", "heuristic+evolve": "#1f77b4", "llm": "#d62728", "llm+evolve": "#2ca02c"}


def read_jsonl(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def run_stats(run):
    db = read_jsonl(os.path.join(run, "db.jsonl"))
    baseline = next((r for r in db if r.get("kind") == "baseline"), None)
    trials = sorted((r for r in db if r.get("kind") == "candidate"), key=lambda r: r["id"])
    best, curve = None, []
    for r in trials:
        if r.get("status") == "correct" and r.get("time_ms"):
            best = r["time_ms"] if best is None else min(best, r["time_ms"])
        curve.append(best)
    by_llm = [r for r in trials if str(r.get("policy", "")).startswith("llm")]
    model_trials = [r for r in trials if r.get("policy") == "llm"]
    model_times = [r["time_ms"] for r in model_trials if r.get("status") == "correct" and r.get("time_ms")]
    transcript = read_jsonl(os.path.join(run, "llm-transcript.jsonl"))
    replies = [e for e in transcript if "response" in e]
    usable = [e for e in replies if e.get("outcome", {}).get("accepted", 0) > 0]
    proposed = sum(e.get("outcome", {}).get("proposed", 0) for e in replies)
    accepted = sum(e.get("outcome", {}).get("accepted", 0) for e in replies)
    seconds = [e.get("seconds", 0) for e in transcript]
    prompt_tokens = [e["response"].get("prompt_tokens", 0) for e in replies]
    completion_tokens = [e["response"].get("completion_tokens", 0) for e in replies]
    return {
        "baseline_ms": baseline.get("time_ms") if baseline else None,
        "trials": len(trials),
        "correct": sum(r.get("status") == "correct" for r in trials),
        "best_ms": best,
        "curve": curve,
        "policies": sorted({r.get("policy", "") for r in trials}),
        "model_trials": len(model_trials),
        "model_correct": sum(r.get("status") == "correct" for r in model_trials),
        "model_best_ms": min(model_times) if model_times else None,
        "repaired": sum(e.get("outcome", {}).get("repaired", 0) for e in replies),
        "llm_family_trials": len(by_llm),
        "requests": len(transcript),
        "errors": len(transcript) - len(replies),
        "replies": len(replies),
        "usable": len(usable),
        "proposed": proposed,
        "accepted": accepted,
        "llm_seconds": sum(seconds),
        "max_seconds": max(seconds) if seconds else 0,
        "prompt_tokens_max": max(prompt_tokens) if prompt_tokens else 0,
        "completion_tokens_mean": sum(completion_tokens) / len(completion_tokens) if completion_tokens else 0,
    }


def svg_curves(payload, stats, path):
    width, height, left, bottom, top, right = 560, 300, 60, 40, 20, 140
    series = {p: s["curve"] for p, s in stats.items() if s["curve"]}
    values = [v for c in series.values() for v in c if v]
    if not values:
        return
    n = max(len(c) for c in series.values())
    lo, hi = min(values), max(values)
    hi = hi if hi > lo else lo * 1.01 + 1e-9

    def x(i):
        return left + (width - left - right) * (i / max(1, n - 1))

    def y(v):  # log scale: the times span 1x to 40x
        return top + (height - top - bottom) * (math.log(hi) - math.log(v)) / (math.log(hi) - math.log(lo))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<text x="{left}" y="14">{payload}: best correct time so far (ms, log scale) against trial</text>',
           f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="black"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="black"/>',
           f'<text x="{left - 4}" y="{y(hi) + 4}" text-anchor="end">{hi:.3g}</text>',
           f'<text x="{left - 4}" y="{y(lo) + 4}" text-anchor="end">{lo:.3g}</text>',
           f'<text x="{left}" y="{height - bottom + 14}">1</text>',
           f'<text x="{width - right}" y="{height - bottom + 14}" text-anchor="end">{n}</text>']
    for k, (policy, curve) in enumerate(series.items()):
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(curve) if v)
        colour = COLOURS.get(policy, "black")
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}"/>')
        out.append(f'<text x="{width - right + 8}" y="{top + 14 * (k + 1)}" fill="{colour}">{policy}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    root = sys.argv[1]
    runs = os.path.join(root, "runs")
    lines = ["| payload | policy | trials | correct | best (ms) | x baseline | model's trials (correct) | "
             "best of the model's (ms) | requests | replies usable | schedules valid (kforge-repaired) | LLM time (s) | "
             "max prompt tokens |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    curves = ["", "Best correct time so far (ms) after each trial:", ""]
    for payload in sorted(os.listdir(runs)):
        stats = {}
        for policy in POLICIES:
            run = os.path.join(runs, payload, policy)
            if os.path.isdir(run):
                stats[policy] = run_stats(run)
        for policy, s in stats.items():
            llm = policy.startswith("llm")
            speedup = f"{s['baseline_ms'] / s['best_ms']:.2f}" if s["best_ms"] and s["baseline_ms"] else "-"
            lines.append(
                f"| {payload} | {policy} | {s['trials']} | {s['correct']} | "
                f"{s['best_ms']:.4f} | {speedup} | "
                + (f"{s['model_trials']} ({s['model_correct']}) | "
                   + (f"{s['model_best_ms']:.4f}" if s["model_best_ms"] else "-")
                   + f" | {s['requests']} | {s['usable']}/{s['replies']} | "
                   f"{s['accepted']}/{s['proposed']} ({s['repaired']}) | {s['llm_seconds']:.0f} | {s['prompt_tokens_max']} |"
                   if llm else "- | - | - | - | - | - | - |")
                if s["best_ms"] else f"| {payload} | {policy} | {s['trials']} | {s['correct']} | - | - | | | | | | | |")
            curves.append(f"- {payload}, {policy}: " + ", ".join(f"{v:.3f}" if v else "-" for v in s["curve"]))
        svg_curves(payload, stats, os.path.join(root, f"curves-{payload}.svg"))
    text = "\n".join(lines + curves) + "\n"
    with open(os.path.join(root, "summary.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
