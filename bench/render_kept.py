#!/usr/bin/env python3
"""Turns the `kept` scenario of `bench/load.sh` into its section of RESULTS.md: the
rate at which turns are answered at full speed beside the rate at which every one of
them is kept (rows counted after the LogActor's queue drained), the memory the queue
takes at its bound, and what a crash right after a burst loses.

    render_kept.py --write OUT_DIR RESULTS_MD
"""

import sys

from render_load import load, replace_section

BEGIN = "<!-- kept-bench:start -->"
END = "<!-- kept-bench:end -->"


def rate(count, seconds):
    return "–" if not seconds else f"{count / seconds:,.0f}"


def render(out):
    machine = load(out, "machine") or {}
    lines = [
        "## Turns kept under load (`make bench-load`, scenario `kept`)",
        "",
        f"Release build on {machine.get('nproc', '?')} cores ({machine.get('cpu', '?')}), "
        f"commit {machine.get('commit', '?')}{' (dirty)' if machine.get('dirty') else ''}, "
        f"{machine.get('date', '?')}, load average {' '.join(machine.get('load_before', []))} before and "
        f"{' '.join(machine.get('load_after', []))} after (the run's own load: bor, PostgreSQL, the mock LLM and the load generator share them). "
        "100 clients ask at full speed through `POST /api/chat` (`BOR_AUTH=off`) in front of "
        "the mock LLM, which answers at once; PostgreSQL on the same machine. A turn is "
        "*answered* when its client read `done`; it is *kept* when its `query_log` row is "
        "in the table, counted once the LogActor's queue has drained after the run. "
        "*Refused* turns got 503 `busy` before they started (the queue at its mark, "
        "`BOR_LOG_QUEUE_ROWS`, or every turn slot taken).",
        "",
        "| run | seconds | answered | answered/s | kept | kept/s (run + drain) | refused (queue / slots) | dropped | drain after the run |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    labels = {
        "kept-new": "a new conversation per turn",
        "kept-one": "every turn in one conversation",
        "kept-own": "each client continuing a conversation of its own",
        "kept-bound": "`query_log` locked (a paused database)",
    }
    for name, label in labels.items():
        run = load(out, name)
        if run is None:
            continue
        kept = run["kept"]
        answered = run["complete"]
        refused = kept.get("refused", {})
        seconds = run["wall_s"]
        lines.append(
            f"| {label} | {seconds:.0f} | {answered:,} | {rate(answered, seconds)} | "
            f"{kept['rows']:,} | {rate(kept['rows'], seconds + kept['drain_s'])} | "
            f"{refused.get('log_backlog', 0):,} / {refused.get('slots', 0):,} | "
            f"{kept['log']['dropped']:,} | {kept['drain_s']:.1f} s |"
        )
    bound = load(out, "kept-bound")
    if bound is not None and bound.get("server"):
        server = bound["server"]
        grown = (server["rss_peak_kib"] - server["rss_before_kib"]) / 1024
        high_water = bound["kept"]["log"].get("high_water", 0)
        lines += [
            "",
            f"**The queue at its bound**: with `query_log` locked, the queue stopped at its "
            f"mark of {high_water:,} rows and turns past it were refused; the server's "
            f"resident memory grew by {grown:.1f} MiB over the run "
            f"({server['rss_before_kib'] / 1024:.1f} → {server['rss_peak_kib'] / 1024:.1f} MiB), "
            f"which bounds what the waiting rows take"
            + (f" (about {grown * 1024 / high_water:.1f} KiB a row of this size)." if high_water else "."),
        ]
    crash = load(out, "kept-crash")
    if crash is not None:
        answered = crash["complete"]
        lost = answered - crash["kept"]["rows"]
        per_s = answered / crash["wall_s"] if crash["wall_s"] else 0
        lines += [
            "",
            f"**A crash right after a burst**: {answered:,} turns answered in "
            f"{crash['wall_s']:.1f} s ({per_s:,.0f}/s), then SIGKILL at once: "
            f"{crash['kept']['rows']:,} rows kept, {lost:,} lost"
            + (f", about {lost / per_s * 1000:.0f} ms of turns." if per_s else "."),
        ]
    return "\n".join(lines)


def main():
    if len(sys.argv) != 4 or sys.argv[1] != "--write":
        sys.exit(__doc__)
    replace_section(sys.argv[3], BEGIN, END, render(sys.argv[2]))


if __name__ == "__main__":
    main()
