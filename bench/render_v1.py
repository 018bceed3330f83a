#!/usr/bin/env python3
"""Turns the `v1` scenario of `bench/load.sh` into its section of RESULTS.md: the time
to first token of the same turn asked through `POST /api/chat` and through
`POST /v1/chat/completions`, run after run, and what /v1 adds.

    render_v1.py --write OUT_DIR RESULTS_MD
"""

import glob
import json
import os
import re
import statistics
import sys

from render_load import load, ms, replace_section

BEGIN = "<!-- bench-v1:begin -->"
END = "<!-- bench-v1:end -->"


def runs(out, clients):
    """(repeat, load average, /api/chat summary, /v1 summary) of each repeat."""
    found = []
    for path in glob.glob(os.path.join(out, f"v1-chat-c{clients}-*.json")):
        repeat = int(re.search(r"-(\d+)\.json$", path).group(1))
        with open(os.path.join(out, f"v1-load-c{clients}-{repeat}.txt")) as f:
            load_average = f.read().split()[:3]
        found.append((
            repeat,
            load_average,
            load(out, f"v1-chat-c{clients}-{repeat}"),
            load(out, f"v1-openai-c{clients}-{repeat}"),
        ))
    return sorted(found)


def ttft(run, key):
    return run["ttft_ms"][key] if run and run.get("ttft_ms") else None


def render(out):
    with open(os.path.join(out, "machine.json")) as f:
        facts = json.load(f)
    lines = []
    add = lines.append
    add("## OpenAI-compatible API: what `/v1` adds to the time to first token (`make bench-load`, scenario `v1`)")
    add("")
    add(
        f"Measured {facts['date']} on commit `{facts['commit']}`"
        + (" (with uncommitted changes)" if facts["dirty"] else "")
        + f": {facts['nproc']} cores ({facts['cpu']}), {facts['memory_gib']} GiB. "
        "The machine was shared with other builds and tests; the load average (1, 5, 15 min) "
        "before each repeat is in the tables."
    )
    add("")
    add(
        "The same question goes to bor through `POST /api/chat` (its own SSE frames) and "
        "through `POST /v1/chat/completions` with `stream: true` (OpenAI chunks): the same "
        "deflected turn (embedding, retrieval, one streamed chat request to the mock LLM, "
        "the `query_log` row). Time to first token is measured by `bor-loadgen` from the "
        "request's start to the first `delta` frame, or to the first chunk with non-empty "
        "`delta.content` (the role chunk before it does not count). The two endpoints "
        "alternate, which goes first changing from repeat to repeat, so that a change in "
        "the machine's load falls on both alike."
    )
    add("")
    for clients in (1, 100):
        found = runs(out, clients)
        if not found:
            continue
        add(f"### {clients} concurrent client{'s' if clients > 1 else ''}")
        add("")
        add("| repeat | load average | requests each | `/api/chat` p50 / p99 ms | `/v1` p50 / p99 ms | `/v1` − `/api/chat` p50 / p99 ms | errors |")
        add("|---:|---|---:|---:|---:|---:|---|")
        deltas50, deltas99, chat50 = [], [], []
        for repeat, load_average, chat, v1 in found:
            d50 = None if ttft(v1, "p50") is None or ttft(chat, "p50") is None else ttft(v1, "p50") - ttft(chat, "p50")
            d99 = None if ttft(v1, "p99") is None or ttft(chat, "p99") is None else ttft(v1, "p99") - ttft(chat, "p99")
            if d50 is not None:
                deltas50.append(d50)
                deltas99.append(d99)
                chat50.append(ttft(chat, "p50"))
            errors = (chat["errors"] if chat else 0) + (v1["errors"] if v1 else 0)
            add(
                f"| {repeat} | {' '.join(load_average)} | {chat['requests'] if chat else '–'} "
                f"| {ms(ttft(chat, 'p50'))} / {ms(ttft(chat, 'p99'))} "
                f"| {ms(ttft(v1, 'p50'))} / {ms(ttft(v1, 'p99'))} "
                f"| {ms(d50)} / {ms(d99)} | {errors} |"
            )
        add("")
        if deltas50:
            spread = max(chat50) - min(chat50)
            median50 = statistics.median(deltas50)
            verdict = "within" if abs(median50) <= spread else "outside"
            add(
                f"Median over {len(deltas50)} repeats of what `/v1` adds: **{median50:+.2f} ms at p50**, "
                f"{statistics.median(deltas99):+.2f} ms at p99. The `/api/chat` p50 itself moved by "
                f"{spread:.2f} ms between repeats (the noise of this machine at the time), so the "
                f"difference is {verdict} the noise."
            )
            add("")
    return "\n".join(lines).rstrip()


def main(args):
    if len(args) == 3 and args[0] == "--write":
        replace_section(args[2], BEGIN, END, render(args[1]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
