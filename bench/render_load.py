#!/usr/bin/env python3
"""Turns the JSON summaries of `bench/load.sh` into the load section of RESULTS.md.

    render_load.py --write OUT_DIR RESULTS_MD   replace the section between the markers
    render_load.py --saturated OUT_DIR RATE     exit 0 when bor could not keep up at RATE
                                                (errors, or p99 over SATURATED_P99_MS)
"""

import json
import os
import sys

BEGIN = "<!-- bench-load:begin -->"
END = "<!-- bench-load:end -->"
SUSTAINED_BUDGET_MS = 5.0
SATURATED_P99_MS = 250.0
SUSTAINED_RATES = (25, 50, 100, 200, 400, 700, 1000, 1400, 2000)
TARGETS = {
    "ttft_p99_c1_ms": 1.0,
    "ttft_p99_r1000_ms": 2.0,
    "turns_per_s_c100": 2000,
    "cpu_per_turn_ms": 0.4,
    "ttft_p99_c100_ms": 2.0,
    "tokens_per_s": 100_000,
    "kib_per_turn": 64,
}


def load(out, name):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def ms(value):
    return "–" if value is None else f"{value:.2f}"


def pct(run, key):
    return None if run is None or not run.get("ttft_ms") else run["ttft_ms"][key]


def added(bor, floor, key):
    if pct(bor, key) is None or pct(floor, key) is None:
        return None
    return pct(bor, key) - pct(floor, key)


def errors(run):
    if run is None:
        return "–"
    if run["errors"] == 0:
        return "0"
    return f"{run['errors']} ({', '.join(f'{k}: {v}' for k, v in run['outcomes'].items() if k != 'complete')})"


def within_budget(out, rate):
    bor = load(out, f"sustained-bor-r{rate}")
    floor = load(out, f"sustained-mock-r{rate}")
    extra = added(bor, floor, "p99")
    return bor is not None and bor["errors"] == 0 and extra is not None and extra < SUSTAINED_BUDGET_MS


def saturated(out, rate):
    bor = load(out, f"sustained-bor-r{rate}")
    return bor is None or bor["errors"] > 0 or (pct(bor, "p99") or 0) > SATURATED_P99_MS


def verdict(ok):
    return "met" if ok else "**missed**"


def criterion_rows(out):
    """(group, benchmark, piece size, throughput text) from criterion's estimates."""
    root = os.path.join(os.path.dirname(os.path.abspath(out)), "..", "criterion")
    rows = []
    for group in ("scaffolding_filter", "upstream_sse"):
        base = os.path.join(root, group)
        if not os.path.isdir(base):
            continue
        for name in sorted(os.listdir(base)):
            for size in sorted(os.listdir(os.path.join(base, name)), key=lambda s: (len(s), s)):
                new = os.path.join(base, name, size, "new")
                try:
                    with open(os.path.join(new, "estimates.json")) as f:
                        mean_ns = json.load(f)["mean"]["point_estimate"]
                    with open(os.path.join(new, "benchmark.json")) as f:
                        throughput = json.load(f)["throughput"]
                except (OSError, KeyError, ValueError):
                    continue
                if "Bytes" in throughput:
                    rate = throughput["Bytes"] / mean_ns * 1e3
                    rows.append((group, name, size, rate, f"{rate:,.0f} MB/s"))
                elif "Elements" in throughput:
                    rate = throughput["Elements"] / mean_ns * 1e9
                    rows.append((group, name, size, rate, f"{rate / 1e6:,.2f} M tokens/s"))
    return rows


def render(out):
    facts = load(out, "machine") or {}
    lines = []
    add = lines.append
    add("## Load, speed and memory (`make bench-load`)")
    add("")
    add(
        f"Measured {facts.get('date', '?')} on commit `{facts.get('commit', '?')}`"
        + (" (with uncommitted changes)" if facts.get("dirty") else "")
        + f": {facts.get('nproc', '?')} cores ({facts.get('cpu', '?')}), "
        f"{facts.get('memory_gib', '?')} GiB, Linux {facts.get('kernel', '?')}. "
        f"Load average before/after: {' '.join(facts.get('load_before', []))} / "
        f"{' '.join(facts.get('load_after', []))} (the benchmark's own processes count in it)."
        + (" **Quick run: small sizes, rough figures.**" if facts.get("quick") else "")
    )
    add("")
    add(
        "bor (release build), the mock LLM (`bor-mock-llm`, zero token delay unless said) and "
        "the load generator (`bor-loadgen`, one thread) share the same cores, so every "
        "figure includes their competition. Turns take the deflected path on an empty "
        "knowledge base: embedding request, retrieval in memory, one streamed chat "
        "request, the `query_log` row. The floor is the same chat request sent straight to "
        "the mock; *added* is bor's percentile minus the floor's."
    )
    add("")

    add("### Time to first delta added by bor")
    add("")
    add("| concurrent turns | floor p50 / p99 ms | bor p50 / p99 ms | added p50 / p99 ms | turns/s | errors |")
    add("|---:|---:|---:|---:|---:|---|")
    for clients in (1, 100, 1000):
        floor = load(out, f"ttft-mock-c{clients}")
        bor = load(out, f"ttft-bor-c{clients}")
        if bor is None:
            continue
        add(
            f"| {clients} | {ms(pct(floor, 'p50'))} / {ms(pct(floor, 'p99'))} "
            f"| {ms(pct(bor, 'p50'))} / {ms(pct(bor, 'p99'))} "
            f"| {ms(added(bor, floor, 'p50'))} / {ms(added(bor, floor, 'p99'))} "
            f"| {bor['requests_per_s']:.0f} | {errors(bor)} |"
        )
    add("")

    throughput = load(out, "throughput-bor")
    throughput_floor = load(out, "throughput-mock")
    if throughput:
        server = throughput.get("server", {})
        add("### Relay throughput")
        add("")
        add("| path | tokens | tokens/s | server CPU µs/token | errors |")
        add("|---|---:|---:|---:|---|")
        if throughput_floor:
            add(
                f"| straight to the mock | {throughput_floor['tokens']} | {throughput_floor['tokens_per_s']:.0f} "
                f"| {throughput_floor.get('server', {}).get('cpu_per_token_us') or 0:.2f} (mock) | {errors(throughput_floor)} |"
            )
        add(
            f"| through bor | {throughput['tokens']} | {throughput['tokens_per_s']:.0f} "
            f"| {server.get('cpu_per_token_us') or 0:.2f} (bor) | {errors(throughput)} |"
        )
        add("")

    memory_rows = []
    for streams in (1000, 5000):
        run = load(out, f"memory-bor-{streams}")
        if run is None:
            continue
        server = run["server"]
        held = max(run["peak_streaming"], 1)
        per_turn = (server["rss_peak_kib"] - server["rss_before_kib"]) / held
        memory_rows.append((streams, run, server, per_turn))
    if memory_rows:
        add("### Memory with many slow streams")
        add("")
        add("Each stream: 40 tokens 500 ms apart. RSS of the bor process from `/proc`, sampled every 100 ms.")
        add("")
        add("| streams | streaming at once (peak) | RSS before | peak RSS | RSS per in-flight turn | errors |")
        add("|---:|---:|---:|---:|---:|---|")
        for streams, run, server, per_turn in memory_rows:
            add(
                f"| {streams} | {run['peak_streaming']} | {server['rss_before_kib'] / 1024:.1f} MiB "
                f"| {server['rss_peak_kib'] / 1024:.1f} MiB | {per_turn:.1f} KiB | {errors(run)} |"
            )
        add("")

    sustained = []
    for rate in SUSTAINED_RATES:
        bor = load(out, f"sustained-bor-r{rate}")
        if bor is None:
            continue
        floor = load(out, f"sustained-mock-r{rate}")
        sustained.append((rate, bor, floor))
    best_rate = None
    if sustained:
        add("### Sustained load (open loop, requests started at a fixed rate)")
        add("")
        add("| turns/s offered | floor p99 ms | bor p50 / p99 ms | added p99 ms | within 5 ms | errors |")
        add("|---:|---:|---:|---:|---|---|")
        missed = False
        for rate, bor, floor in sustained:
            ok = within_budget(out, rate)
            missed = missed or not ok
            if not missed:
                best_rate = rate
            add(
                f"| {rate} | {ms(pct(floor, 'p99'))} | {ms(pct(bor, 'p50'))} / {ms(pct(bor, 'p99'))} "
                f"| {ms(added(bor, floor, 'p99'))} | {'yes' if ok else 'no'} | {errors(bor)} |"
            )
        add("")
        add(
            "Highest offered rate up to which every rate tried kept p99 added under 5 ms with no "
            f"error: **{f'{best_rate} turns/s' if best_rate else 'none'}**."
        )
        add("")

    peer = {name: load(out, f"peer-{name}") for name in (
        "mock-c1", "litellm-c1", "bor-c1", "mock-c100", "litellm-c100", "bor-c100")}
    if peer["litellm-c1"]:
        add("### Side by side: LiteLLM proxy in front of the same mock")
        add("")
        add(
            "LiteLLM proxy (`litellm[proxy]` from PyPI, in `target/bench/litellm-venv`, one worker "
            "per core, local model cost map, no database, no callbacks) relays one OpenAI chat "
            "completion; bor runs a whole turn (embedding, retrieval, chat, log row) for the same "
            "question. CPU is the server's own processes (all LiteLLM workers)."
        )
        add("")
        add("| | clients | added TTFT p50 / p99 ms | requests/s | server CPU ms/request | errors |")
        add("|---|---:|---:|---:|---:|---|")
        for clients in ("c1", "c100"):
            floor = peer[f"mock-{clients}"]
            for name in ("litellm", "bor"):
                run = peer[f"{name}-{clients}"]
                if run is None:
                    continue
                cpu = run.get("server", {}).get("cpu_per_request_ms")
                add(
                    f"| {name} | {run['settings'].get('clients')} | {ms(added(run, floor, 'p50'))} / {ms(added(run, floor, 'p99'))} "
                    f"| {run['requests_per_s']:.0f} | {ms(cpu)} | {errors(run)} |"
                )
        add("")
        ratios = []
        for clients in ("c1", "c100"):
            floor = peer[f"mock-{clients}"]
            lite, bor = peer[f"litellm-{clients}"], peer[f"bor-{clients}"]
            if not (lite and bor):
                continue
            for key in ("p50", "p99"):
                a, b = added(lite, floor, key), added(bor, floor, key)
                if a is not None and b is not None and b > 0:
                    ratios.append(f"added TTFT {key} at {clients[1:]} client(s): LiteLLM/bor = {a / b:.1f}×")
            a = lite.get("server", {}).get("cpu_per_request_ms")
            b = bor.get("server", {}).get("cpu_per_request_ms")
            if a and b:
                ratios.append(f"CPU per request at {clients[1:]} client(s): LiteLLM/bor = {a / b:.1f}×")
        if ratios:
            add("Ratios: " + "; ".join(ratios) + ".")
            add("")

    micro = criterion_rows(out)
    if micro:
        add("### Micro-benchmarks (criterion, `cargo bench -p bor-actors`)")
        add("")
        add(
            "One core, no competition from the servers. The filter gets clean prose or "
            "markup-heavy text in pieces of 6 bytes (a token as a model streams it) or 4 KiB; "
            "the upstream stream is 2,000 OpenAI chunks framed and decoded from reads of 180 "
            "bytes (one event each) or 16 KiB."
        )
        add("")
        add("| benchmark | text | piece bytes | throughput |")
        add("|---|---|---:|---:|")
        for group, name, size, _, text in micro:
            add(f"| {group} | {name} | {size} | {text} |")
        add("")

    add("### Targets")
    add("")
    add("| target | measured | |")
    add("|---|---|---|")
    c1 = added(load(out, "ttft-bor-c1"), load(out, "ttft-mock-c1"), "p99")
    if c1 is not None:
        add(f"| added TTFT p99 with 1 client ≤ 1 ms | {c1:.2f} ms | {verdict(c1 <= TARGETS['ttft_p99_c1_ms'])} |")
    r1000 = added(load(out, "sustained-bor-r1000"), load(out, "sustained-mock-r1000"), "p99")
    if r1000 is not None:
        add(f"| added TTFT p99 at 1,000 turns/s offered (open loop) ≤ 2 ms | {r1000:.2f} ms | {verdict(r1000 <= TARGETS['ttft_p99_r1000_ms'])} |")
    busy = load(out, "ttft-bor-c100")
    if busy:
        rate = busy["requests_per_s"]
        add(f"| ≥ 2,000 turns/s with 100 clients | {rate:,.0f} turns/s | {verdict(rate >= TARGETS['turns_per_s_c100'])} |")
        cpu = busy.get("server", {}).get("cpu_per_request_ms")
        if cpu is not None:
            add(f"| CPU per turn ≤ 0.4 ms (100 clients) | {cpu:.2f} ms | {verdict(cpu <= TARGETS['cpu_per_turn_ms'])} |")
    c100 = added(load(out, "ttft-bor-c100"), load(out, "ttft-mock-c100"), "p99")
    if c100 is not None:
        add(f"| added TTFT p99 at 100 concurrent turns < 2 ms | {c100:.2f} ms | {verdict(c100 < TARGETS['ttft_p99_c100_ms'])} |")
    if throughput:
        rate = throughput["tokens_per_s"]
        add(f"| ≥ 100,000 relayed tokens/s | {rate:,.0f} tokens/s | {verdict(rate >= TARGETS['tokens_per_s'])} |")
    for streams, run, server, per_turn in memory_rows:
        add(f"| < 64 KiB per in-flight turn ({streams} streams) | {per_turn:.1f} KiB | {verdict(per_turn < TARGETS['kib_per_turn'])} |")
    run = load(out, "memory-bor-1000")
    if run:
        add(f"| 1,000 concurrent streams, zero errors | {run['errors']} errors | {verdict(run['errors'] == 0)} |")
    for group, name, size, rate, _ in micro:
        if group == "scaffolding_filter" and name == "clean":
            per_piece = int(size) / rate * 1e3
            add(
                f"| filter ≥ 500 MB/s on clean text, {size}-byte pieces | {rate:,.0f} MB/s "
                f"({per_piece:.0f} ns per piece) | {verdict(rate >= 500)} |"
            )
    add("")

    notes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "load-notes.md")
    if os.path.exists(notes):
        with open(notes) as f:
            add(f.read().rstrip())
            add("")
    return "\n".join(lines)


def replace_section(results, begin, end, body):
    """Puts `body` between the markers `begin` and `end` of RESULTS.md (appended when
    the markers are not there yet)."""
    section = f"{begin}\n{body}\n{end}"
    if os.path.exists(results):
        with open(results) as f:
            text = f.read()
    else:
        text = "# Benchmark results\n\n"
    if begin in text and end in text:
        start = text.index(begin)
        stop = text.index(end) + len(end)
        text = text[:start] + section + text[stop:]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    with open(results, "w") as f:
        f.write(text)


def write(out, results):
    replace_section(results, BEGIN, END, render(out))


def main(args):
    if len(args) == 3 and args[0] == "--write":
        write(args[1], args[2])
    elif len(args) == 3 and args[0] == "--saturated":
        sys.exit(0 if saturated(args[1], int(args[2])) else 1)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
