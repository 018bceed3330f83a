"""Follow-up questions: which searched query finds the passage a follow-up asks about.

    python3 bench/followups.py BOR_URL --api-key KEY [--collection NAME] [--top-k K]
                               [--chat-url URL --chat-model NAME] [--json]

Each conversation of bench/followups/conversations.jsonl is a question and the question
after it, which either follows it up ("and what is its default?") or changes the topic;
a chunk is relevant when it holds one of the conversation's needles (whitespace
collapsed). The knowledge base is that of bench/followups/README.md, in one collection
(NAME, default `handbook`). Each way of searching the second question is asked through
`POST /api/search` and measured by hit@K (a relevant chunk among the K a turn gives the
model, K = BOR_RETRIEVAL_TOP_K by default), MRR@10 and how often the turn would be
grounded:

  alone      the question as it was asked
  bor        what bor searches: the question with the conversation sent as `history`
  sources    the question, then the titles and headings of the first question's sources
  condensed  a chat request rewrites the question as a standalone one first (with
             --chat-url, an OpenAI-compatible server without `/v1`); its time is shown

Only the standard library: it runs with any Python 3.
"""

import argparse
import json
import statistics
import sys
import time
import urllib.request
from pathlib import Path

CONVERSATIONS = Path(__file__).parent / "followups" / "conversations.jsonl"
MEASURED_DEPTH = 10
CONDENSING_PROMPT = (
    "Rewrite the user's last question as one standalone question that names what it "
    "refers to, using the conversation before it. If it already stands alone, repeat "
    "it. Reply with the question only."
)


def call(url: str, body=None, headers=None, method=None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.load(response)


def collapsed(text: str) -> str:
    return " ".join(text.split())


class Bor:
    def __init__(self, url: str, api_key: str, collection: str):
        self.url = url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {api_key}"}
        self.collection = collection

    def chunks(self) -> dict[int, str]:
        """Every chunk of the collection, by id."""
        listed = call(f"{self.url}/api/documents?collection={self.collection}", headers=self.headers)
        texts = {}
        for document in listed:
            passages = call(f"{self.url}/api/documents/{document['id']}", headers=self.headers)
            for chunk in passages["chunks"]:
                texts[chunk["id"]] = collapsed(f"{chunk['heading']} {chunk['text']}")
        return texts

    def search(self, query: str, history=None) -> dict:
        body = {"query": query, "top_k": MEASURED_DEPTH, "collections": [self.collection]}
        if history is not None:
            body["history"] = history
        return call(f"{self.url}/api/search", body, self.headers)


def condensed(chat_url: str, model: str, previous: str, question: str) -> tuple[str, float]:
    started = time.monotonic()
    reply = call(
        f"{chat_url.rstrip('/')}/v1/chat/completions",
        {
            "model": model,
            "temperature": 0,
            "max_tokens": 64,
            "messages": [
                {"role": "system", "content": CONDENSING_PROMPT},
                {"role": "user", "content": f"Earlier question: {previous}\nLast question: {question}"},
            ],
        },
    )
    text = (reply["choices"][0]["message"].get("content") or "").strip()
    return text or question, time.monotonic() - started


def measure(found: list[dict], relevant: set[int], top_k: int) -> tuple[bool, float]:
    ids = [result["chunk_id"] for result in found[:MEASURED_DEPTH]]
    hit = any(chunk in relevant for chunk in ids[:top_k])
    reciprocal = next((1 / (rank + 1) for rank, chunk in enumerate(ids) if chunk in relevant), 0.0)
    return hit, reciprocal


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bor_url")
    parser.add_argument("--api-key", required=True)
    parser.add_argument("--collection", default="handbook")
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--chat-url")
    parser.add_argument("--chat-model", default="qwen")
    parser.add_argument("--json", action="store_true")
    arguments = parser.parse_args()

    bor = Bor(arguments.bor_url, arguments.api_key, arguments.collection)
    chunks = bor.chunks()
    conversations = [json.loads(line) for line in CONVERSATIONS.read_text().splitlines() if line.strip()]
    strategies = ["alone", "bor", "sources"] + (["condensed"] if arguments.chat_url else [])
    rows = []
    for conversation in conversations:
        needles = [collapsed(needle) for needle in conversation["needles"]]
        relevant = {chunk for chunk, text in chunks.items() if any(needle in text for needle in needles)}
        if not relevant:
            print(f"{conversation['id']}: no chunk holds a needle", file=sys.stderr)
            return 1
        previous, question = conversation["previous"], conversation["question"]
        row = {"id": conversation["id"], "kind": conversation["kind"]}
        asked = {
            "alone": lambda: bor.search(question),
            "bor": lambda: bor.search(question, [{"role": "user", "content": previous}]),
        }

        def by_sources():
            earlier = bor.search(previous)["results"][: arguments.top_k]
            names = dict.fromkeys(f"{r['title']} {r['heading']}".strip() for r in earlier)
            return bor.search(question + "\n" + "\n".join(names))

        asked["sources"] = by_sources
        if arguments.chat_url:
            def by_condensing():
                query, seconds = condensed(arguments.chat_url, arguments.chat_model, previous, question)
                row["condensed"] = query
                row["condensing_s"] = seconds
                return bor.search(query)

            asked["condensed"] = by_condensing
        for strategy in strategies:
            response = asked[strategy]()
            hit, reciprocal = measure(response["results"], relevant, arguments.top_k)
            row[strategy] = {"hit": hit, "rr": reciprocal, "grounded": response["grounded"],
                             "query": response.get("query")}
        rows.append(row)

    summary = {}
    for kind in ["follow-up", "new topic", "all"]:
        chosen = [row for row in rows if kind == "all" or row["kind"] == kind]
        summary[kind] = {
            strategy: {
                f"hit@{arguments.top_k}": statistics.mean(row[strategy]["hit"] for row in chosen),
                "mrr@10": statistics.mean(row[strategy]["rr"] for row in chosen),
                "grounded": statistics.mean(row[strategy]["grounded"] for row in chosen),
            }
            for strategy in strategies
        }
        summary[kind]["conversations"] = len(chosen)
    if arguments.chat_url:
        seconds = sorted(row["condensing_s"] for row in rows)
        summary["condensing_s_p50"] = statistics.median(seconds)
    if arguments.json:
        print(json.dumps({"summary": summary, "conversations": rows}, indent=2))
        return 0
    for kind in ["follow-up", "new topic", "all"]:
        print(f"{kind} ({summary[kind]['conversations']} conversations)")
        print(f"  {'strategy':<10} {'hit@' + str(arguments.top_k):>7} {'MRR@10':>7} {'grounded':>9}")
        for strategy in strategies:
            figures = summary[kind][strategy]
            print(f"  {strategy:<10} {figures[f'hit@{arguments.top_k}']:7.3f} {figures['mrr@10']:7.3f} {figures['grounded']:9.3f}")
    if arguments.chat_url:
        print(f"condensing request: p50 {summary['condensing_s_p50']:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
