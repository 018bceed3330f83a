"""What re-ranking does on the sample knowledge base (docs/sample-kb), through bor.

    python3 bench/rerank_sample_kb.py BOR_URL [DATABASE_URL]

Asks `POST /api/search` (BOR_URL: a bor with the sample knowledge base imported and
`BOR_AUTH=off`) every question of tests/real_model/questions.json and of the full-text
relevance benchmark (benches/knowledge/relevance.rs, each with a phrase of the passage
that answers it), and prints one JSON object:

- per question of questions.json: whether a turn would be grounded, the best cosine
  (what the grounded rule decides on) and, with re-ranking on, the best re-rank score:
  the margin between the lowest best score of a question about the documents and the
  highest of an off-topic one, for each signal;
- per relevance question: the rank of the first chunk holding its phrase among the 10
  best (the chunks' texts read from DATABASE_URL with psql), hits in the top 1 and in the
  top 3 (what the local setup gives the model), and MRR@10.

Run it once against a bor without `BOR_RERANK_BASE_URL` and once with it; the search's
own timings (`timings_ms.rerank`) are kept too.
"""

import json
import re
import statistics
import subprocess
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def post(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def relevance_questions() -> list[tuple[str, str]]:
    """The (question, phrase) pairs of benches/knowledge/relevance.rs."""
    source = (ROOT / "benches/knowledge/relevance.rs").read_text()
    block = source.split("const QUESTIONS")[1].split("];")[0]
    pairs = re.findall(r'\(\s*"((?:[^"\\]|\\.)*)",\s*"((?:[^"\\]|\\.)*)",?\s*\)', block)
    unescape = lambda text: text.replace("\\n", "\n").replace('\\"', '"')  # noqa: E731
    return [(unescape(question), unescape(phrase)) for question, phrase in pairs]


def chunk_texts(database_url: str) -> dict[int, str]:
    query = "select coalesce(json_object_agg(id, text), '{}') from chunks"
    output = subprocess.run(
        ["psql", database_url, "-Atc", query], check=True, capture_output=True, text=True
    ).stdout
    return {int(key): text for key, text in json.loads(output).items()}


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    bor = argv[1].rstrip("/")
    database_url = argv[2] if len(argv) == 3 else "postgres://postgres@127.0.0.1:5432/bor"
    questions = json.loads((ROOT / "tests/real_model/questions.json").read_text())
    kinds = [(q["question"], "answerable") for q in questions["answerable"]]
    kinds += [(q, "related") for q in questions["related"]]
    kinds += [(q, "off_topic") for q in questions["off_topic"]]

    asked, rerank_ms = [], []
    for question, kind in kinds:
        # Every chunk of the sample (22), so that the best of each signal is among them.
        reply = post(f"{bor}/api/search", {"query": question, "top_k": 50})
        cosines = [r["signals"]["vector"]["score"] for r in reply["results"] if r["signals"].get("vector")]
        reranks = [
            r["signals"]["rerank"]["score"]
            for r in reply["results"]
            if (r.get("signals") or {}).get("rerank")
        ]
        if "rerank" in reply.get("timings_ms", {}):
            rerank_ms.append(reply["timings_ms"]["rerank"])
        asked.append({
            "question": question,
            "kind": kind,
            "grounded": reply["grounded"],
            "best_cosine": max(cosines, default=None),
            "best_rerank": max(reranks, default=None),
            "rerank_error": reply.get("rerank_error"),
        })

    def margin(signal: str) -> dict | None:
        about = [a[signal] for a in asked if a["kind"] != "off_topic" and a[signal] is not None]
        off = [a[signal] for a in asked if a["kind"] == "off_topic" and a[signal] is not None]
        if not about or not off:
            return None
        return {"lowest_about": min(about), "highest_off_topic": max(off), "margin": min(about) - max(off)}

    texts = chunk_texts(database_url)
    found = []
    for question, phrase in relevance_questions():
        reply = post(f"{bor}/api/search", {"query": question, "top_k": 10})
        if "rerank" in reply.get("timings_ms", {}):
            rerank_ms.append(reply["timings_ms"]["rerank"])
        ranks = [n for n, r in enumerate(reply["results"], 1) if phrase in texts.get(r["chunk_id"], "")]
        found.append({"question": question, "rank": ranks[0] if ranks else None})
    ranks = [f["rank"] for f in found]
    print(json.dumps({
        "questions": asked,
        "grounded": {kind: sum(a["grounded"] for a in asked if a["kind"] == kind)
                     for kind in ("answerable", "related", "off_topic")},
        "margin_cosine": margin("best_cosine"),
        "margin_rerank": margin("best_rerank"),
        "relevance": {
            "questions": len(found),
            "at_1": sum(r == 1 for r in ranks),
            "at_3": sum(r is not None and r <= 3 for r in ranks),
            "mrr_at_10": sum(1 / r for r in ranks if r) / len(found),
            "ranks": found,
        },
        "rerank_ms_p50": statistics.median(rerank_ms) if rerank_ms else None,
    }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
