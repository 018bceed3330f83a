"""The local models' benchmark: whole turns through bor, and the figures of RESULTS.md.

    local_models.py measure NAME BOR_URL CHAT_URL EMBED_URL EMBED_MODEL DATABASE OUT.json
    local_models.py render OUT_DIR RESULTS_MD

`measure` asks bor (at BOR_URL, in front of the setup's model servers) every question of
tests/real_model/questions.json, one at a time, and records for each: the answer, its
path, whether it states the expected fact, the time to the first visible word (the first
`delta` frame with a non-space character), the whole time, and the answer's tokens per
second after that first word (tokens counted by the chat server's tokenizer). It also
computes, for every question, the best cosine similarity between its embedding and the
stored chunks (read from DATABASE with psql), which is what the deflect threshold is
compared with. The machine's load average is read before each question.

`render` writes the section of RESULTS.md between its markers from the JSON files.
"""

import json
import math
import re
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

QUESTIONS = Path(__file__).resolve().parent.parent / "tests/real_model/questions.json"
BEGIN = "<!-- local-models:begin -->"
END = "<!-- local-models:end -->"
WORD = re.compile(r"[A-Za-z0-9_]+")
TURN_TIMEOUT_S = 600


def post(url: str, body: dict, timeout: float = TURN_TIMEOUT_S):
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    return urllib.request.urlopen(request, timeout=timeout)


def states_fact(answer: str, fact: list[str]) -> bool:
    """Whether one of the fact's words is a word of the answer (case-insensitive)."""
    words = {word.lower() for word in WORD.findall(answer)}
    return any(alternative.lower() in words for alternative in fact)


def turn(bor_url: str, question: str) -> dict:
    """One chat turn, timed from the request to each frame."""
    started = time.monotonic()
    first_visible = None
    answer, event, frames = "", None, []
    with post(f"{bor_url}/api/chat", {"message": question}) as response:
        for raw in response:
            line = raw.decode("utf-8").rstrip("\n")
            if line.startswith("event: "):
                event = line[len("event: "):]
            elif line.startswith("data: ") and event:
                data = json.loads(line[len("data: "):])
                frames.append((event, data))
                if event == "delta":
                    answer += data["text"]
                    if first_visible is None and data["text"].strip():
                        first_visible = time.monotonic() - started
    ended = time.monotonic() - started
    terminal = frames[-1] if frames else ("none", {})
    return {
        "answer": answer,
        "terminal": terminal[0],
        "path": terminal[1].get("path"),
        "rounds": terminal[1].get("rounds"),
        "sources": len(terminal[1].get("sources", [])),
        "tool_calls": sum(1 for e, d in frames if e == "tool" and d.get("phase") == "start"),
        "first_visible_s": first_visible,
        "total_s": ended,
    }


def token_count(chat_url: str, text: str) -> int | None:
    base = chat_url.removesuffix("/v1")
    try:
        with post(f"{base}/extras/tokenize/count", {"input": text}, timeout=60) as response:
            return json.load(response)["count"]
    except OSError:
        return None


def unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def stored_chunks(database: str) -> list[list[float]]:
    rows = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-At", "-d", database, "-c",
         "SELECT embedding FROM chunks"],
        check=True, capture_output=True, text=True,
    ).stdout.split()
    return [unit([float(x) for x in row.strip("{}").split(",")]) for row in rows]


def best_scores(embed_url: str, model: str, database: str, questions: list[str]) -> list[float]:
    with post(f"{embed_url}/embeddings", {"model": model, "input": questions}) as response:
        data = sorted(json.load(response)["data"], key=lambda item: item["index"])
    chunks = stored_chunks(database)
    scores = []
    for item in data:
        question = unit(item["embedding"])
        scores.append(max(sum(a * b for a, b in zip(question, chunk)) for chunk in chunks))
    return scores


def load_average() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def measure(name, bor_url, chat_url, embed_url, embed_model, database, out) -> None:
    catalogue = json.loads(QUESTIONS.read_text())
    asked = (
        [(q["question"], "answerable", q["fact"]) for q in catalogue["answerable"]]
        + [(q, "related", None) for q in catalogue["related"]]
        + [(q, "off_topic", None) for q in catalogue["off_topic"]]
    )
    scores = best_scores(embed_url, embed_model, database, [q for q, _, _ in asked])
    results = []
    for (question, kind, fact), score in zip(asked, scores):
        load = load_average()
        result = turn(bor_url, question)
        tokens = token_count(chat_url, result["answer"]) if result["answer"] else 0
        streaming = result["total_s"] - (result["first_visible_s"] or result["total_s"])
        result.update(
            question=question,
            kind=kind,
            best_score=score,
            load=load,
            tokens=tokens,
            tokens_per_s=(tokens - 1) / streaming if tokens and tokens > 1 and streaming > 0 else None,
            right=states_fact(result["answer"], fact) if fact else None,
        )
        results.append(result)
        # Written after every question: an interrupted run keeps what it measured.
        Path(out).write_text(
            json.dumps({"setup": name, "asked": len(asked), "results": results}, indent=1)
        )
        first = result["first_visible_s"]
        print(
            f"{name}: {kind:10} {result['path']!s:9} score {score:.2f} "
            f"first word {first if first is None else round(first, 1)} s, "
            f"{'right' if result['right'] else 'wrong' if fact else ''} {question}",
            file=sys.stderr, flush=True,
        )


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, digits=1, suffix=""):
    return "—" if value is None else f"{value:.{digits}f}{suffix}"


def render(out_dir: Path) -> str:
    runs = [json.loads(p.read_text()) for p in sorted(out_dir.glob("*.json"))]
    lines = [
        "## Local models (`make bench-local-models`)",
        "",
        "Whole turns through bor on the sample knowledge base (`docs/sample-kb`), one at a",
        "time, with each setup's settings (`scripts/models/*.env`: greedy decoding), each",
        "model server on one thread. Questions: `tests/real_model/questions.json`. *Right* = the",
        "answer states the fact; *deflected* = the turn took the deflected path. Times are",
        "from the request to the first visible word and to the end; tokens/s is the answer's",
        "speed after its first word. *Load* is the 1-minute load average of this 2-core",
        "machine before each question: about 1 when nothing but the benchmark runs (the",
        "model server's one thread), more when other work shares the machine.",
        "",
        "| setup | right (of answerable) | off-topic deflected | on-topic grounded | median first word | slowest first word | median tokens/s | load |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        results = run["results"]
        answerable = [r for r in results if r["kind"] == "answerable"]
        on_topic = [r for r in results if r["kind"] != "off_topic"]
        off_topic = [r for r in results if r["kind"] == "off_topic"]
        firsts = [r["first_visible_s"] for r in results]
        asked = run.get("asked", len(results))
        setup = run["setup"] if asked == len(results) else (
            f"{run['setup']} (interrupted after {len(results)} of {asked} questions)"
        )
        lines.append(
            f"| {setup} "
            f"| {sum(bool(r['right']) for r in answerable)} of {len(answerable)} "
            f"| {sum(r['path'] == 'deflected' for r in off_topic)} of {len(off_topic)} "
            f"| {sum(r['path'] == 'grounded' for r in on_topic)} of {len(on_topic)} "
            f"| {fmt(median(firsts), 1, ' s')} "
            f"| {fmt(max((f for f in firsts if f is not None), default=None), 1, ' s')} "
            f"| {fmt(median([r['tokens_per_s'] for r in results]))} "
            f"| {fmt(min(r['load'] for r in results))}–{fmt(max(r['load'] for r in results))} |"
        )
    for run in runs:
        lines += [
            "",
            f"### {run['setup']}: every question",
            "",
            "| question | kind | best cosine | path | first word | total | tok/s | answer |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in run["results"]:
            verdict = {True: "right: ", False: "wrong: ", None: ""}[r["right"]]
            answer = " ".join(r["answer"].split())
            answer = answer if len(answer) <= 110 else answer[:109] + "…"
            answer = answer.replace("|", "\\|")
            lines.append(
                f"| {r['question']} | {r['kind'].replace('_', '-')} | {r['best_score']:.2f} "
                f"| {r['path']} | {fmt(r['first_visible_s'], 1, ' s')} | {fmt(r['total_s'], 1, ' s')} "
                f"| {fmt(r['tokens_per_s'])} | {verdict}{answer} |"
            )
    return "\n".join(lines)


def write(out_dir: Path, results_md: Path) -> None:
    section = f"{BEGIN}\n{render(out_dir)}\n{END}"
    text = results_md.read_text() if results_md.exists() else "# Benchmark results\n"
    if BEGIN in text and END in text:
        start, end = text.index(BEGIN), text.index(END) + len(END)
        text = text[:start] + section + text[end:]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    results_md.write_text(text)


def main(argv: list[str]) -> int:
    if len(argv) == 9 and argv[1] == "measure":
        measure(*argv[2:])
        return 0
    if len(argv) == 4 and argv[1] == "render":
        write(Path(argv[2]), Path(argv[3]))
        return 0
    print(__doc__.strip().splitlines()[2], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
