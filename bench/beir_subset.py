"""A subset of a BEIR collection, for `bor eval` runs with a slow embedder.

    python3 bench/beir_subset.py SOURCE TARGET [--judged 300] [--unjudged 500] [--qrels train.tsv]

Keeps the first JUDGED abstracts (in the corpus's order) that some query is judged
against, the first UNJUDGED that none is, and the queries whose judged abstracts are all
kept (with their judgements). The subset is easier than the whole collection (fewer
distractors): compare runs on the same subset only. Standard library only.
"""

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--judged", type=int, default=300)
    parser.add_argument("--unjudged", type=int, default=500)
    parser.add_argument("--qrels", default="train.tsv")
    args = parser.parse_args()

    qrels_lines = (args.source / "qrels" / args.qrels).read_text().splitlines()
    header, judgements = qrels_lines[0], [line.split("\t") for line in qrels_lines[1:] if line.strip()]
    judged_ids = {corpus_id for _, corpus_id, _ in judgements}

    kept_lines, kept_ids, judged, unjudged = [], set(), 0, 0
    for line in (args.source / "corpus.jsonl").read_text().splitlines():
        doc_id = json.loads(line)["_id"]
        if doc_id in judged_ids and judged < args.judged:
            judged += 1
        elif doc_id not in judged_ids and unjudged < args.unjudged:
            unjudged += 1
        else:
            continue
        kept_lines.append(line)
        kept_ids.add(doc_id)

    by_query: dict[str, list[list[str]]] = {}
    for row in judgements:
        by_query.setdefault(row[0], []).append(row)
    queries = {q for q, rows in by_query.items() if all(corpus_id in kept_ids for _, corpus_id, _ in rows)}

    (args.target / "qrels").mkdir(parents=True, exist_ok=True)
    (args.target / "corpus.jsonl").write_text("\n".join(kept_lines) + "\n")
    query_lines = [
        line
        for line in (args.source / "queries.jsonl").read_text().splitlines()
        if line.strip() and json.loads(line)["_id"] in queries
    ]
    (args.target / "queries.jsonl").write_text("\n".join(query_lines) + "\n")
    rows = ["\t".join(row) for row in judgements if row[0] in queries]
    (args.target / "qrels" / args.qrels).write_text("\n".join([header, *rows]) + "\n")
    print(f"{len(kept_lines)} abstracts ({judged} judged), {len(query_lines)} queries, {len(rows)} judgements")


if __name__ == "__main__":
    main()
