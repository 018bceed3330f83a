"""Embedding throughput of an OpenAI-compatible embeddings server on a BEIR corpus.

    python3 bench/embed_speed.py BASE_URL CORPUS_DIR [--documents N] [--batch B]
                                 [--concurrent C] [--chars S] [--overlap O] [--pid PID]

BASE_URL is the server without `/v1` (e.g. http://127.0.0.1:18088). Each document of
CORPUS_DIR/corpus.jsonl becomes `# title`, a blank line and its text, as `bor eval` imports
it, cut into windows of S characters (default 1200) that overlap by O (default 150):
close to bor's chunks, which also end at a sentence or word, so the figures compare
servers on the texts an import sends. The chunks go B to a request (default 32), C
requests at a time (default 1). Prints chunks/s and tokens/s (as the server counts them),
then the time of a one-question request (p50 of 20). With --pid, the processor time the
server process (all its threads) spent on the chunks too: on a machine shared with other
work, chunks per processor-second still compare servers when wall times do not.

Only the standard library: it runs with any Python 3.
"""

import argparse
import concurrent.futures
import json
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path

QUESTION = "Does vitamin D supplementation reduce the risk of bone fractures?"


def chunks_of(corpus: Path, documents: int, chars: int, overlap: int) -> list[str]:
    chunks = []
    with open(corpus / "corpus.jsonl", encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if number >= documents:
                break
            document = json.loads(line)
            text = f"# {document['title']}\n\n{document['text']}"
            start = 0
            while True:
                chunks.append(text[start : start + chars])
                if start + chars >= len(text):
                    break
                start += chars - overlap
    return chunks


def cpu_seconds(pid: int) -> float:
    """User and system time of process `pid` and all its threads, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def embed(base_url: str, texts: list[str]) -> int:
    """Embeds `texts`; returns the prompt tokens the server reports (0 when it does not)."""
    body = json.dumps({"input": texts, "model": "embedder"}).encode()
    request = urllib.request.Request(
        f"{base_url}/v1/embeddings", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        answer = json.load(response)
    if len(answer["data"]) != len(texts):
        raise RuntimeError(f"{len(answer['data'])} vectors for {len(texts)} texts")
    return answer.get("usage", {}).get("prompt_tokens", 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base_url")
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--documents", type=int, default=500)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--concurrent", type=int, default=1)
    parser.add_argument("--chars", type=int, default=1200)
    parser.add_argument("--overlap", type=int, default=150)
    parser.add_argument("--pid", type=int, help="the server's process id")
    args = parser.parse_args()
    base_url = args.base_url.rstrip("/")

    chunks = chunks_of(args.corpus, args.documents, args.chars, args.overlap)
    batches = [chunks[i : i + args.batch] for i in range(0, len(chunks), args.batch)]
    embed(base_url, chunks[:2])
    cpu_before = cpu_seconds(args.pid) if args.pid else 0.0
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(args.concurrent) as pool:
        tokens = sum(pool.map(lambda batch: embed(base_url, batch), batches))
    seconds = time.perf_counter() - started
    cpu = ""
    if args.pid:
        per_second = len(chunks) / (cpu_seconds(args.pid) - cpu_before)
        cpu = f", {per_second:.1f} chunks per processor-second"

    question_ms = []
    for _ in range(20):
        asked = time.perf_counter()
        embed(base_url, [QUESTION])
        question_ms.append((time.perf_counter() - asked) * 1e3)
    print(
        f"{len(chunks)} chunks ({tokens} tokens) in {seconds:.1f} s: "
        f"{len(chunks) / seconds:.1f} chunks/s, {tokens / seconds:.0f} tokens/s "
        f"(batch {args.batch}, {args.concurrent} at once){cpu}; "
        f"one question p50 {statistics.median(question_ms):.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
