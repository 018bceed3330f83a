#!/usr/bin/env python3
"""Turns a paired scenario of `bench/load.sh` into its section of RESULTS.md: the time
to first token of the same turn asked two ways, run after run, and what the second way
adds. `v1`: through `POST /api/chat` and through `POST /v1/chat/completions`. `limits`: with limits that apply and with none. `auth`:
through `POST /api/chat` of bor with `BOR_AUTH=off` and of bor with accounts and an API
key.

    render_pair.py --write OUT_DIR RESULTS_MD v1|auth|limits
"""

import glob
import json
import os
import re
import statistics
import sys

from render_load import load, ms, replace_section

# Each scenario: its summaries' names (`{scenario}-{base|other}-c{clients}-{repeat}`),
# the two ways as the tables name them, the section's title and what was measured.
SCENARIOS = {
    "v1": {
        "base": "chat",
        "other": "openai",
        "base_label": "`/api/chat`",
        "other_label": "`/v1`",
        "title": "## OpenAI-compatible API: what `/v1` adds to the time to first token (`make bench-load`, scenario `v1`)",
        "what": (
            "The same question goes to bor through `POST /api/chat` (its own SSE frames) and "
            "through `POST /v1/chat/completions` with `stream: true` (OpenAI chunks): the same "
            "deflected turn (embedding, retrieval, one streamed chat request to the mock LLM, "
            "the `query_log` row). Time to first token is measured by `bor-loadgen` from the "
            "request's start to the first `delta` frame, or to the first chunk with non-empty "
            "`delta.content` (the role chunk before it does not count). The two endpoints "
            "alternate, which goes first changing from repeat to repeat, so that a change in "
            "the machine's load falls on both alike."
        ),
    },
    "auth": {
        "base": "off",
        "other": "key",
        "base_label": "`BOR_AUTH=off`",
        "other_label": "accounts, API key",
        "title": "## Accounts: what authenticating adds to the time to first token (`make bench-load`, scenario `auth`)",
        "what": (
            "Two bor instances on one database and one mock LLM: one with `BOR_AUTH=off`, one "
            "with accounts, asked with `Authorization: Bearer bor_…` (a key made through "
            "`POST /api/keys`). The same deflected turn through `POST /api/chat`; time to first "
            "token from the request's start to the first `delta` frame. With accounts the key "
            "is checked from memory (its hash looked up, its user read), so no PostgreSQL round "
            "trip comes before the first token. The two instances alternate, which goes first "
            "changing from repeat to repeat."
        ),
    },
    "limits": {
        "base": "unlimited",
        "other": "limited",
        "base_label": "no limit applies",
        "other_label": "limits apply",
        "title": "## Limits: what a limit adds to the time to first token (`make bench-load`, scenario `limits`)",
        "what": (
            "One bor instance with accounts, asked with two API keys of two people: one that "
            "no limit applies to, and one whose key and person both have limits on turns a "
            "day and tokens a day and a month (set far above what the run uses, so that no "
            "turn is refused). The same deflected turn through `POST /api/chat`; time to first "
            "token from the request's start to the first `delta` frame. Limits are checked "
            "from memory; a turns limit takes turns from the instances' shared count in blocks "
            "of up to 1,024 (one short transaction per block, docs/LIMITS.md), and each turn's use is told "
            "to other instances by a `NOTIFY` sent off the turn's path. Each run starts with "
            "the log's queue drained. The two keys alternate, which goes first changing from "
            "repeat to repeat."
        ),
    },
}


def runs(out, scenario, clients):
    """(repeat, load average, base summary, other summary) of each repeat."""
    ways = SCENARIOS[scenario]
    found = []
    for path in glob.glob(os.path.join(out, f"{scenario}-{ways['base']}-c{clients}-*.json")):
        repeat = int(re.search(r"-(\d+)\.json$", path).group(1))
        with open(os.path.join(out, f"{scenario}-load-c{clients}-{repeat}.txt")) as f:
            load_average = f.read().split()[:3]
        found.append((
            repeat,
            load_average,
            load(out, f"{scenario}-{ways['base']}-c{clients}-{repeat}"),
            load(out, f"{scenario}-{ways['other']}-c{clients}-{repeat}"),
        ))
    return sorted(found)


def ttft(run, key):
    return run["ttft_ms"][key] if run and run.get("ttft_ms") else None


def render(out, scenario):
    ways = SCENARIOS[scenario]
    base, other = ways["base_label"], ways["other_label"]
    with open(os.path.join(out, "machine.json")) as f:
        facts = json.load(f)
    lines = []
    add = lines.append
    add(ways["title"])
    add("")
    add(
        f"Measured {facts['date']} on commit `{facts['commit']}`"
        + (" (with uncommitted changes)" if facts["dirty"] else "")
        + f": {facts['nproc']} cores ({facts['cpu']}), {facts['memory_gib']} GiB. "
        "The machine was shared with other builds and tests; the load average (1, 5, 15 min) "
        "before each repeat is in the tables."
    )
    add("")
    add(ways["what"])
    add("")
    for clients in (1, 100):
        found = runs(out, scenario, clients)
        if not found:
            continue
        add(f"### {clients} concurrent client{'s' if clients > 1 else ''}")
        add("")
        add(f"| repeat | load average | requests each | {base} p50 / p99 ms | {other} p50 / p99 ms | {other} − {base} p50 / p99 ms | errors |")
        add("|---:|---|---:|---:|---:|---:|---|")
        deltas50, deltas99, base50 = [], [], []
        for repeat, load_average, first, second in found:
            d50 = None if ttft(second, "p50") is None or ttft(first, "p50") is None else ttft(second, "p50") - ttft(first, "p50")
            d99 = None if ttft(second, "p99") is None or ttft(first, "p99") is None else ttft(second, "p99") - ttft(first, "p99")
            if d50 is not None:
                deltas50.append(d50)
                deltas99.append(d99)
                base50.append(ttft(first, "p50"))
            errors = (first["errors"] if first else 0) + (second["errors"] if second else 0)
            add(
                f"| {repeat} | {' '.join(load_average)} | {first['requests'] if first else '–'} "
                f"| {ms(ttft(first, 'p50'))} / {ms(ttft(first, 'p99'))} "
                f"| {ms(ttft(second, 'p50'))} / {ms(ttft(second, 'p99'))} "
                f"| {ms(d50)} / {ms(d99)} | {errors} |"
            )
        add("")
        if deltas50:
            spread = max(base50) - min(base50)
            median50 = statistics.median(deltas50)
            verdict = "within" if abs(median50) <= spread else "outside"
            add(
                f"Median over {len(deltas50)} repeats of what {other} adds: **{median50:+.2f} ms at p50**, "
                f"{statistics.median(deltas99):+.2f} ms at p99. The {base} p50 itself moved by "
                f"{spread:.2f} ms between repeats (the noise of this machine at the time), so the "
                f"difference is {verdict} the noise."
            )
            add("")
    return "\n".join(lines).rstrip()


def main(args):
    if len(args) == 4 and args[0] == "--write" and args[3] in SCENARIOS:
        scenario = args[3]
        begin, end = f"<!-- bench-{scenario}:begin -->", f"<!-- bench-{scenario}:end -->"
        replace_section(args[2], begin, end, render(args[1], scenario))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
