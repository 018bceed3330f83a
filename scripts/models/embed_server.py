"""An OpenAI-compatible embeddings server for a BERT model written by bert_onnx.py.

    python embed_server.py --model MODEL.onnx --tokenizer tokenizer.json \
        --alias NAME --port PORT [--workers N] [--host 127.0.0.1]

Serves `GET /v1/models` (the one model, as `NAME`) and `POST /v1/embeddings` (`input`:
a string or a list of strings; `model` is not checked, as llama.cpp's servers do not),
on ONNX Runtime's CPU kernels, which pick the widest vector instructions the processor
has when the server starts.

How it runs: each text is tokenized by the `tokenizers` library with the model's own
`tokenizer.json`, cut where upstream cuts (256 tokens), and run alone (no padding); the texts
of a request, and of requests that arrive together, are spread over N workers of one
thread each (default: the processor count), a one-text request's first. One thread per run and not one run over N
threads: on a shared machine, a run split over two threads waits for the slower one
after every operation (docs/LOCAL_MODELS.md has the measurements).

Bounds: a body of at most 8 MiB, at most 2,048 texts a request, at most 16 requests at
work (more get 503 and are retried by bor), 30 s of silence on a connection; every
error is OpenAI-shaped JSON, and a request whose body was not read ends its connection.
"""

import argparse
import itertools
import json
import os
import queue
import sys
import threading
from concurrent.futures import Future
from http import HTTPStatus

import numpy as np
import onnxruntime
from tokenizers import Tokenizer

from json_server import RequestError, handler_for, serve

MAX_TEXTS = 2048
# Where all-MiniLM-L6-v2 is trained and used upstream to cut a text (sentence-transformers'
# `max_seq_length`, 256, though its position embeddings reach 512): a longer text keeps
# its first 255 tokens and its closing [SEP], and gets the vector upstream gives it.
MAX_TOKENS = 256


class Embedder:
    """The model and its tokenizer, and the workers that run it; `embed` is safe to call
    from several threads.

    The texts wait in one queue, a request of a single text (a question being asked)
    before the texts of larger requests (an import's chunks), each kind in the order it
    came: a question asked during an import waits for the texts being run, not for the
    import's queue.
    """

    def __init__(self, model: str, tokenizer: str, workers: int):
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = onnxruntime.InferenceSession(
            model, options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer = Tokenizer.from_file(tokenizer)
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.dimension = int(self.session.get_outputs()[0].shape[1])
        self.queue: queue.PriorityQueue = queue.PriorityQueue()
        self.arrival = itertools.count()
        for number in range(workers):
            threading.Thread(target=self.work, name=f"embed-{number}", daemon=True).start()

    def work(self) -> None:
        while True:
            _, _, ids, result = self.queue.get()
            try:
                result.set_result(self.one(ids))
            except Exception as error:  # noqa: BLE001 (handed to the request that waits)
                result.set_exception(error)

    def one(self, ids: list[int]) -> list[float]:
        batch = np.asarray([ids], dtype=np.int64)
        (vectors,) = self.session.run(["embedding"], {"input_ids": batch})
        return vectors[0].tolist()

    def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        """One unit vector per text, in order, and the number of tokens read."""
        encodings = self.tokenizer.encode_batch(texts, add_special_tokens=True)
        ids = [encoding.ids for encoding in encodings]
        rank = 0 if len(texts) == 1 else 1
        results = [Future() for _ in ids]
        for text_ids, result in zip(ids, results):
            self.queue.put((rank, next(self.arrival), text_ids, result))
        return [result.result() for result in results], sum(len(i) for i in ids)


def texts_of(body: bytes) -> list[str]:
    try:
        request = json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        # ValueError: not JSON, or a number of more digits than Python converts.
        raise RequestError(HTTPStatus.BAD_REQUEST, f"the body is not JSON: {error}") from None
    if not isinstance(request, dict) or "input" not in request:
        raise RequestError(HTTPStatus.BAD_REQUEST, "the body must be an object with `input`")
    given = request["input"]
    texts = [given] if isinstance(given, str) else given
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise RequestError(HTTPStatus.BAD_REQUEST, "`input` must be a string or a list of strings")
    if not texts:
        raise RequestError(HTTPStatus.BAD_REQUEST, "`input` holds no text")
    if len(texts) > MAX_TEXTS:
        raise RequestError(
            HTTPStatus.BAD_REQUEST, f"`input` holds {len(texts)} texts; at most {MAX_TEXTS}"
        )
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            # JSON can name a lone surrogate (\ud800), which is no character.
            raise RequestError(HTTPStatus.BAD_REQUEST, "a text is not valid Unicode") from None
    return texts


def embeddings_of(embedder: Embedder, alias: str, body: bytes) -> dict:
    vectors, tokens = embedder.embed(texts_of(body))
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    return {"object": "list", "data": data, "model": alias, "usage": usage}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv[1:])
    embedder = Embedder(args.model, args.tokenizer, max(1, args.workers))
    routes = {"/v1/embeddings": lambda body: embeddings_of(embedder, args.alias, body)}
    return serve(
        args.host,
        args.port,
        handler_for(args.alias, "embed", routes),
        f"embed-server: {args.alias} ({embedder.dimension} dimensions, {args.workers} workers, "
        f"ONNX Runtime {onnxruntime.__version__}) on http://{args.host}:{args.port}/v1",
    )

if __name__ == "__main__":
    sys.exit(main(sys.argv))
