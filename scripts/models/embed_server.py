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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import onnxruntime
from tokenizers import Tokenizer

MAX_BODY_BYTES = 8 * 1024 * 1024
MAX_TEXTS = 2048
MAX_REQUESTS_AT_WORK = 16
# Where all-MiniLM-L6-v2 is trained and used upstream to cut a text (sentence-transformers'
# `max_seq_length`, 256, though its position embeddings reach 512): a longer text keeps
# its first 255 tokens and its closing [SEP], and gets the vector upstream gives it.
MAX_TOKENS = 256


class RequestError(Exception):
    def __init__(self, status: HTTPStatus, message: str, kind: str = "invalid_request_error"):
        super().__init__(message)
        self.status = status
        self.kind = kind


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


def handler_for(embedder: Embedder, alias: str):
    at_work = threading.BoundedSemaphore(MAX_REQUESTS_AT_WORK)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The headers and the body are two writes: without this, a kept-alive connection
        # waits for the client's delayed acknowledgement between them (up to 40 ms).
        disable_nagle_algorithm = True
        # A client that sends nothing for this long loses its connection (and its place
        # among the requests at work); bor's client drops idle connections sooner (15 s).
        timeout = 30
        server_version = "bor-embed"

        def reply(self, status: HTTPStatus, payload: dict) -> None:
            body = json.dumps(payload, separators=(",", ":")).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

        def fail(self, error: RequestError) -> None:
            self.reply(error.status, {"error": {"message": str(error), "type": error.kind}})

        def send_error(self, code, message=None, explain=None) -> None:
            # What the standard library refuses itself (a malformed request line, another
            # method, headers too long) gets the same JSON as the rest, and the end of the
            # connection, since the rest of the request was not read.
            self.close_connection = True
            status = HTTPStatus(code)
            kind = "server_error" if code >= 500 else "invalid_request_error"
            self.fail(RequestError(status, message or status.phrase, kind))

        def do_GET(self) -> None:
            if self.path.split("?")[0].rstrip("/") != "/v1/models":
                self.fail(RequestError(HTTPStatus.NOT_FOUND, f"no route {self.path}"))
                return
            model = {"id": alias, "object": "model", "owned_by": "local"}
            self.reply(HTTPStatus.OK, {"object": "list", "data": [model]})

        def do_POST(self) -> None:
            # Until the body is read, the connection cannot carry another request.
            self.close_when_answered = self.close_connection
            self.close_connection = True
            try:
                self.reply(HTTPStatus.OK, self.embeddings())
            except RequestError as error:
                self.answer_if_connected(error)
            except (ConnectionError, TimeoutError):
                # The client gave up, or stalled (bor timed the request out, or stopped).
                self.log_error("the client went before the request was answered")
                self.close_connection = True
            except Exception as error:  # noqa: BLE001 (a reply, never a dropped connection)
                self.log_error("embedding failed: %r", error)
                self.answer_if_connected(
                    RequestError(HTTPStatus.INTERNAL_SERVER_ERROR, str(error), "server_error")
                )

        def answer_if_connected(self, error: RequestError) -> None:
            try:
                self.fail(error)
            except (ConnectionError, TimeoutError):
                self.close_connection = True

        def embeddings(self) -> dict:
            if self.path.split("?")[0].rstrip("/") != "/v1/embeddings":
                raise RequestError(HTTPStatus.NOT_FOUND, f"no route {self.path}")
            try:
                length = int(self.headers.get("Content-Length", ""))
            except ValueError:
                raise RequestError(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required") from None
            if length < 0:
                raise RequestError(HTTPStatus.BAD_REQUEST, "Content-Length is negative")
            if length > MAX_BODY_BYTES:
                raise RequestError(
                    HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the body is over {MAX_BODY_BYTES} bytes"
                )
            # Taken before the body is read: at most this many bodies are held at once.
            if not at_work.acquire(blocking=False):
                raise RequestError(
                    HTTPStatus.SERVICE_UNAVAILABLE, "too many requests at work", "server_error"
                )
            try:
                body = self.rfile.read(length)
                self.close_connection = self.close_when_answered
                vectors, tokens = embedder.embed(texts_of(body))
            finally:
                at_work.release()
            data = [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ]
            usage = {"prompt_tokens": tokens, "total_tokens": tokens}
            return {"object": "list", "data": data, "model": alias, "usage": usage}

        def log_request(self, code="-", size="-") -> None:
            # Failed requests only: a line per request would be most of the log during an
            # import. Errors (`log_error`) are always written.
            if str(getattr(code, "value", code))[:1] in "45":
                super().log_request(code, size)

    return Handler


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
    server = ThreadingHTTPServer((args.host, args.port), handler_for(embedder, args.alias))
    server.daemon_threads = True
    print(
        f"embed-server: {args.alias} ({embedder.dimension} dimensions, {args.workers} workers, "
        f"ONNX Runtime {onnxruntime.__version__}) on http://{args.host}:{args.port}/v1",
        file=sys.stderr,
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
