"""The benchmark's outputs from its per-task results: the table (markdown), the numbers (JSON) and a chart
(SVG) of kforge's speed-up over PyTorch eager and torch.compile, with KernelBench's fast_p (the fraction of
tasks where kforge is correct and more than p times faster), geometric means, and each kernel's fraction of
its roofline floor."""

import json
import math

from measure import geomean


def speedups(row, against):
    k, other = row["kforge"], row[against]
    if k["status"] != "correct" or other["status"] != "correct":
        return None
    return other["timing"]["median_ms"] / k["timing"]["median_ms"]


def fast_p(rows, against, p):
    """KernelBench's fast_p: the fraction of all tasks where kforge is correct and faster than ``against``
    by more than p (p = 0: correct; the comparison counts only where ``against`` ran)."""
    if not rows:
        return None
    hits = 0
    for row in rows:
        if row["kforge"]["status"] != "correct":
            continue
        if p == 0:
            hits += 1
            continue
        s = speedups(row, against)
        hits += s is not None and s > p
    return hits / len(rows)


def summary(rows):
    out = {}
    for against in ("eager", "compile"):
        available = [r for r in rows if r[against]["status"] != "n/a"]
        out[against] = {
            "tasks": len(available),
            "fast_0": fast_p(available, against, 0), "fast_1": fast_p(available, against, 1),
            "fast_2": fast_p(available, against, 2),
            "geomean_speedup": geomean([speedups(r, against) for r in available]),
        }
    for level in (1, 2):
        level_rows = [r for r in rows if r["level"] == level]
        out[f"level{level}_geomean_vs_eager"] = geomean([speedups(r, "eager") for r in level_rows])
        out[f"level{level}_geomean_vs_compile"] = geomean([speedups(r, "compile") for r in level_rows])
    return out


def flags(row):
    """Numbers that cannot be right and must be re-measured before anyone trusts them."""
    found = []
    for name in ("kforge", "eager", "compile"):
        t = row[name].get("timing")
        if t and row.get("floor_ms") and t["median_ms"] < 0.95 * row["floor_ms"]:
            found.append(f"{name} faster than the floor: a measurement bug")
    for against in ("eager", "compile"):
        s = speedups(row, against)
        if s and s > 10:
            found.append(f"speed-up above 10x over {against}: check before trusting")
    for name in ("kforge", "eager", "compile"):
        t = row[name].get("timing") or {}
        if t.get("host_bound_reps"):
            found.append(f"{name}: {t['host_bound_reps']} of {t['reps']} repetitions host-bound (a launch took "
                         f"{t['host_launch_max_ms']:.3f} ms, the GPU's lead {t['lead_ms']:.3f} ms): its time "
                         "includes the host's")
    return found


def timing_notes(row):
    """What a reader should know about how a row was timed, without doubting it: an implementation timed with a
    longer lead than the run's, because its launch outlasted that one."""
    found = []
    for name in ("kforge", "eager", "compile"):
        t = row[name].get("timing") or {}
        if t.get("lead_extended") and not t.get("host_bound_reps"):
            found.append(f"{name}: timed with a {t['lead_ms']:.2f} ms lead (its launch takes the host up to "
                         f"{t['host_launch_max_ms']:.2f} ms)")
    return found


# How far apart two medians from one process may be and still count as a tie: a best kernel replayed in another
# process moves by about this much (docs/perf/search-h200.md), and torch.compile's own kernels more.
TIE = 0.02


def ties(row):
    """The comparisons within TIE of 1x: neither side is faster by more than the run-to-run spread."""
    found = []
    for against, name in (("eager", "eager"), ("compile", "torch.compile")):
        s = speedups(row, against)
        if s is not None and abs(s - 1) <= TIE:
            found.append(f"{s:.2f}x {name}: a tie (within {TIE:.0%}, the run-to-run spread)")
    return found


def _ms(result):
    if result["status"] == "n/a":
        return "n/a"
    if result["status"] != "correct":
        return result["status"]
    return f"{result['timing']['median_ms']:.3f}"


def _x(value):
    return "-" if value is None else f"{value:.2f}x"


def _fraction(value):
    return "-" if value is None else f"{100 * value:.0f}%"


def markdown(results):
    rows, c = results["tasks"], results["ceilings"]
    bf16 = f", bf16 matmul {c['bf16_tflops']:.0f} TFLOP/s" if c.get("bf16_tflops") else ""
    if c.get("f16_tflops"):
        bf16 += f", f16 matmul {c['f16_tflops']:.0f} TFLOP/s"
    partial = [] if results.get("complete", True) else [
        "**Incomplete: the run stopped after the tasks below; this is what it measured.**", ""]
    one_way = (f" (read-only {c['read_gbps']:.0f}, write-only {c['write_gbps']:.0f}: the floor of a task that only "
               f"reads or only writes)" if c.get("read_gbps") and c.get("write_gbps") else "")
    lines = partial + [f"Backend: {results['backend']}. Ceilings measured in this run: copy {c['copy_gbps']:.0f} GB/s{one_way}, "
             f"fp32 matmul {c['fp32_tflops']:.1f} TFLOP/s{bf16} ({c['how']}). Correctness: {results['seeds']} seeds, "
             f"relative L2 error against a float64 reference at most 1e-4 (fp32 tasks), 2^-8 (bf16) or 2^-11 (f16) and max abs error at most 10 x that x max|ref|, no NaN/Inf. "
             f"Timing: median of {results['reps']} repetitions after {results['warmup']} warm-up calls{_lead(results)}.",
             "",
             "| task | level | shape | kforge ms | eager ms | compile ms | vs eager | vs compile | floor ms | "
             "kforge / floor | tuning | instructions | notes |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|"]
    for r in rows:
        k = r["kforge"]
        fraction = r["floor_ms"] / k["timing"]["median_ms"] if k["status"] == "correct" and r["floor_ms"] else None
        tuning = r.get("tuning", {})
        checks = k.get("checks")
        softmax = ([f"rows sum to 1 within {checks['rows_sum_max_error']:.1e}, inputs x {checks['large_inputs']['scale']:g} "
                    f"{checks['large_inputs']['status']}"] if checks and checks.get("rows_sum_max_error") is not None else [])
        notes = "; ".join(flags(r) + timing_notes(r) + ties(r) + ([k["why"]] if k.get("why") else []) + softmax +
                          ([r["diagnosis"]] if r.get("diagnosis") else []))
        lines.append(f"| {r['task']} | {r['level']} | {'x'.join(map(str, r['shape']))} | {_ms(k)} | "
                     f"{_ms(r['eager'])} | {_ms(r['compile'])} | {_x(speedups(r, 'eager'))} | "
                     f"{_x(speedups(r, 'compile'))} | {r['floor_ms']:.3f} | {_fraction(fraction)} | "
                     f"{tuning.get('trials', '-')} trials, {tuning.get('seconds', 0):.0f} s | "
                     f"{r.get('instructions', 'not inspected')} | {notes} |")
    return "\n".join(lines + [""] + summary_lines(rows)) + "\n"


def summary_lines(rows):
    """The fast_p table against eager and torch.compile, and the geometric means overall and per level."""
    s = summary(rows)
    lines = ["| against | tasks | fast_0 | fast_1 | fast_2 | geometric mean speed-up |", "|---|---:|---:|---:|---:|---:|"]
    for against in ("eager", "compile"):
        a = s[against]
        lines.append(f"| {against} | {a['tasks']} | {_fraction(a['fast_0'])} | {_fraction(a['fast_1'])} | "
                     f"{_fraction(a['fast_2'])} | {_x(a['geomean_speedup'])} |")
    lines += ["", f"Level 1 geometric mean: {_x(s['level1_geomean_vs_eager'])} over eager, "
              f"{_x(s['level1_geomean_vs_compile'])} over torch.compile. Level 2: "
              f"{_x(s['level2_geomean_vs_eager'])} over eager, {_x(s['level2_geomean_vs_compile'])} over torch.compile."]
    return lines


def _lead(results):
    """The GPU's lead over the host at each start event, from any timing that recorded it."""
    for row in results["tasks"]:
        for name in ("kforge", "eager", "compile"):
            timing = row[name].get("timing") or {}
            lead = timing.get("lead_ms")
            if lead and not timing.get("lead_extended"):
                flushed = results.get("l2_flush", "flushed")
                return (f"; before each, L2 {flushed} and the GPU kept busy (a spin kernel) for {lead:.3f} ms in all, "
                        "so the host's launch is queued before the clock starts (device time, not Python's; "
                        "longer for an implementation whose launch outlasts that, said in its row)")
    return ""


def svg(results):
    """Bars of log2 speed-up over eager and over torch.compile per task (right of the axis: kforge faster)."""
    rows = results["tasks"]
    height, bar, left, width = 40 + 26 * len(rows), 10, 230, 640
    scale = (width - left - 20) / 2 / 4  # +-4 = 16x either way
    centre = left + (width - left - 20) / 2
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             f'font-size="11">',
             f'<text x="{left}" y="14">kforge speed-up (log scale): blue over eager, orange over torch.compile</text>',
             f'<line x1="{centre}" y1="20" x2="{centre}" y2="{height - 10}" stroke="black"/>']
    for i, r in enumerate(rows):
        y = 30 + 26 * i
        parts.append(f'<text x="{left - 6}" y="{y + 10}" text-anchor="end">{r["task"]}</text>')
        for j, (against, colour) in enumerate((("eager", "#1f77b4"), ("compile", "#ff7f0e"))):
            s = speedups(r, against)
            if s is None:
                continue
            length = max(-4, min(4, math.log2(s))) * scale
            x = centre if length >= 0 else centre + length
            parts.append(f'<rect x="{x:.1f}" y="{y + j * bar}" width="{abs(length):.1f}" height="{bar - 1}" '
                         f'fill="{colour}"><title>{r["task"]}: {s:.2f}x over {against}</title></rect>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def write(results, prefix):
    with open(prefix + ".json", "w") as f:
        json.dump(dict(results, summary=summary(results["tasks"])), f, indent=2)
    with open(prefix + ".md", "w") as f:
        f.write(markdown(results))
    with open(prefix + ".svg", "w") as f:
        f.write(svg(results))
