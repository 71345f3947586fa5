"""kforge-tune-many's summary.md: one row per payload (kforge.distributed writes it beside summary.json)."""


def summary_markdown(summary):
    """The run's summary (kforge.distributed.tune_many's return value) as a Markdown table."""
    lines = [f"# kforge-tune-many: {len(summary['payloads'])} payloads on the {summary['target'].upper()}", "",
             f"{summary['trials']} trials in {summary['wall_s']:.1f} s ({summary['trials_per_minute']:.1f} per "
             f"minute), {summary['measurers']} measurers, {summary['cpus']} CPUs in the cluster; budget "
             f"{summary['trials_per_payload']} trials" + (f", {summary['time_budget_s']} s" if summary["time_budget_s"]
                                                          else "") + " per payload.", "",
             "| payload | state | trials | failed | baseline ms | best ms | speed-up | best schedule |",
             "|---|---|---|---|---|---|---|---|"]
    for r in summary["payloads"]:
        def number(value, form):
            return form.format(value) if value is not None else "-"
        state = r["state"] if not r["error"] else f"{r['state']}: {r['error']}"
        lines.append(f"| [{r['name']}]({r['name']}/report.md) | {state.replace('|', '/')} | {r['trials']} | "
                     f"{r['failures']} | {number(r['baseline_ms'], '{:.3f}')} | {number(r['best_ms'], '{:.3f}')} | "
                     f"{number(r['speedup_vs_baseline'], '{:.2f}x')} | {r['best_schedule'] or '-'} |")
    return "\n".join(lines) + "\n"
