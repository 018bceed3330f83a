"""The HTTP side that the local model servers (embed_server.py, rerank_server.py) share.

`GET /v1/models` names the one model; each POST route reads a JSON body and answers
JSON. Bounds: a body of at most 8 MiB, at most 16 requests at work (more get 503 and
are retried by bor), 30 s of silence on a connection; every error is OpenAI-shaped
JSON, and a request whose body was not read ends its connection.
"""

import json
import sys
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY_BYTES = 8 * 1024 * 1024
MAX_REQUESTS_AT_WORK = 16


class RequestError(Exception):
    def __init__(self, status: HTTPStatus, message: str, kind: str = "invalid_request_error"):
        super().__init__(message)
        self.status = status
        self.kind = kind


def handler_for(alias: str, name: str, routes: dict[str, Callable[[bytes], dict]]):
    """A handler serving `alias` as the one model and each POST route of `routes`: its
    function gets the body and answers the reply's JSON, or raises RequestError."""
    at_work = threading.BoundedSemaphore(MAX_REQUESTS_AT_WORK)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The headers and the body are two writes: without this, a kept-alive connection
        # waits for the client's delayed acknowledgement between them (up to 40 ms).
        disable_nagle_algorithm = True
        # A client that sends nothing for this long loses its connection (and its place
        # among the requests at work); bor's client drops idle connections sooner (15 s).
        timeout = 30
        server_version = f"bor-{name}"

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

        def route(self) -> str:
            return self.path.split("?")[0].rstrip("/")

        def do_GET(self) -> None:
            if self.route() != "/v1/models":
                self.fail(RequestError(HTTPStatus.NOT_FOUND, f"no route {self.path}"))
                return
            model = {"id": alias, "object": "model", "owned_by": "local"}
            self.reply(HTTPStatus.OK, {"object": "list", "data": [model]})

        def do_POST(self) -> None:
            # Until the body is read, the connection cannot carry another request.
            self.close_when_answered = self.close_connection
            self.close_connection = True
            try:
                self.reply(HTTPStatus.OK, self.answer())
            except RequestError as error:
                self.answer_if_connected(error)
            except (ConnectionError, TimeoutError):
                # The client gave up, or stalled (bor timed the request out, or stopped).
                self.log_error("the client went before the request was answered")
                self.close_connection = True
            except Exception as error:  # noqa: BLE001 (a reply, never a dropped connection)
                self.log_error("%s failed: %r", name, error)
                self.answer_if_connected(
                    RequestError(HTTPStatus.INTERNAL_SERVER_ERROR, str(error), "server_error")
                )

        def answer_if_connected(self, error: RequestError) -> None:
            try:
                self.fail(error)
            except (ConnectionError, TimeoutError):
                self.close_connection = True

        def answer(self) -> dict:
            work = routes.get(self.route())
            if work is None:
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
                return work(body)
            finally:
                at_work.release()

        def log_request(self, code="-", size="-") -> None:
            # Failed requests only: a line per request would be most of the log during an
            # import. Errors (`log_error`) are always written.
            if str(getattr(code, "value", code))[:1] in "45":
                super().log_request(code, size)

    return Handler


def serve(host: str, port: int, handler, banner: str) -> int:
    """Serves until interrupted, after printing `banner`."""
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    print(banner, file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0
