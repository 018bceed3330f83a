"""Proves the served BERT embedder (bert_onnx.py, embed_server.py) against its upstream files.

    python check_embedder.py MODEL_DIR BASE_URL

MODEL_DIR holds the upstream `config.json`, `tokenizer.json` and `model.safetensors`;
BASE_URL is the embedding server (e.g. http://127.0.0.1:18088). For each text below, the
vector the server returns (`POST /v1/embeddings`) points the same way as the one a numpy
forward pass of the upstream F32 weights gives over the `tokenizers` library's token ids
(mean pooling over every token, as the model is trained): cosine >= 0.9999999. A text of
more than 256 tokens (upstream's `max_seq_length`) gets the vector of its first 255 and
its closing [SEP], between 256 and 512 tokens (where the position embeddings would still
reach) as past 512. Then the
server's own rules (embed_server.py): one unit vector per text in order, a one-text
request answered before the texts of a larger one queued earlier, and an OpenAI-shaped
error for a body that is not texts, too many texts, too large a body or another route.

Runs as a unittest suite, so its last line says how many checks passed.
"""

import http.client
import json
import math
import sys
import threading
import time
import unittest
import urllib.parse
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from json_client import post_raw

# Tight enough that tanh's approximation of GELU (0.999999) or another norm epsilon fails.
MIN_COSINE = 0.9999999
MAX_TOKENS = 256

TEXTS = [
    "How do I import my own documents?",
    "What is the capital of France?",
    "BOR_LLM_RETRIES sets how many times a failed request is retried (0..=10).",
    "Café déjà vu: naïve façades, ÉLAN and Ünïcödé accents.",
    "Don't split e-mail addresses like first.last@example.org, or URLs: https://example.org/a?b=c#d!",
    "unbelievably misunderstood antidisestablishmentarianism, pneumonoultramicroscopic",
    "   spaces\tand\nnew lines   between   words   ",
    "数字 2024 年, 東京 and Ελληνικά text with emoji 🙂 and symbols © ® ™ ±",
    "MixedCASE CamelCaseWords HTTPServer getHTTPResponseCode x86_64 C++ C# .NET",
    "A chunk of a document is at most 1200 characters long; chunks overlap by 150 "
    "characters, so that a sentence cut at a boundary still appears whole in one of "
    "them. The sample knowledge base describes how bor retries a failing language "
    "model, how it strips tool-call markup that a model leaks into its answer, and how "
    "a question that matches nothing in the documents is deflected: the model is told "
    "that the knowledge base has nothing relevant, and the page says so.",
]


def post_json(url: str, body: dict) -> dict:
    status, reply = post_raw(url, json.dumps(body).encode())
    if status != 200:
        raise AssertionError(f"{url} answered HTTP {status}: {reply}")
    return reply


class ReferenceBert:
    """The upstream model, forward pass in numpy (F32), mean-pooled."""

    def __init__(self, model_dir: Path):
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        self.weights = load_file(str(model_dir / "model.safetensors"))
        self.layers = config["num_hidden_layers"]
        self.heads = config["num_attention_heads"]
        self.eps = config["layer_norm_eps"]
        self.erf = np.vectorize(math.erf)

    def w(self, name: str) -> np.ndarray:
        return self.weights[name].astype(np.float32)

    def norm(self, x: np.ndarray, prefix: str) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w(f"{prefix}.weight") + self.w(
            f"{prefix}.bias"
        )

    def dense(self, x: np.ndarray, prefix: str) -> np.ndarray:
        return x @ self.w(f"{prefix}.weight").T + self.w(f"{prefix}.bias")

    def embed(self, ids: list[int]) -> np.ndarray:
        n = len(ids)
        x = (
            self.w("embeddings.word_embeddings.weight")[ids]
            + self.w("embeddings.position_embeddings.weight")[:n]
            + self.w("embeddings.token_type_embeddings.weight")[0]
        )
        x = self.norm(x, "embeddings.LayerNorm")
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}"
            head_dim = x.shape[1] // self.heads

            def split(t):
                return t.reshape(n, self.heads, head_dim).transpose(1, 0, 2)

            q = split(self.dense(x, f"{p}.attention.self.query"))
            k = split(self.dense(x, f"{p}.attention.self.key"))
            v = split(self.dense(x, f"{p}.attention.self.value"))
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(head_dim)
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(1, 0, 2).reshape(n, -1)
            x = self.norm(
                x + self.dense(context, f"{p}.attention.output.dense"),
                f"{p}.attention.output.LayerNorm",
            )
            hidden = self.dense(x, f"{p}.intermediate.dense")
            hidden = 0.5 * hidden * (1.0 + self.erf(hidden / math.sqrt(2.0)))
            x = self.norm(x + self.dense(hidden, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        return x.mean(axis=0)


class ServedEmbedderMatchesUpstream(unittest.TestCase):
    model_dir: Path
    base_url: str

    @classmethod
    def setUpClass(cls):
        cls.tokenizer = Tokenizer.from_file(str(cls.model_dir / "tokenizer.json"))
        cls.tokenizer.no_padding()
        cls.tokenizer.no_truncation()
        cls.reference = ReferenceBert(cls.model_dir)

    def served(self, texts: list[str]) -> list[np.ndarray]:
        data = post_json(f"{self.base_url}/v1/embeddings", {"input": texts})["data"]
        data.sort(key=lambda item: item["index"])
        self.assertEqual(len(data), len(texts))
        return [np.asarray(item["embedding"], dtype=np.float64) for item in data]

    def assert_same_direction(self, vector: np.ndarray, ids: list[int]) -> None:
        expected = self.reference.embed(ids)
        cosine = vector @ expected / (np.linalg.norm(vector) * np.linalg.norm(expected))
        self.assertGreaterEqual(cosine, MIN_COSINE)

    def test_served_vectors_match_the_reference_forward_pass(self):
        for text, vector in zip(TEXTS, self.served(TEXTS)):
            with self.subTest(text=text):
                self.assert_same_direction(vector, self.tokenizer.encode(text).ids)

    def test_a_text_over_the_model_length_is_cut_to_it(self):
        text = " ".join(TEXTS) * 6
        ids = self.tokenizer.encode(text).ids
        self.assertGreater(len(ids), 512)
        (vector,) = self.served([text])
        self.assert_same_direction(vector, ids[: MAX_TOKENS - 1] + ids[-1:])

    def test_a_text_the_positions_could_still_hold_is_cut_where_upstream_cuts(self):
        # A 1,200-character chunk of prose is about 300 tokens: past upstream's cut, and
        # within the 512 positions a server that cut there would read whole.
        text = " ".join(TEXTS[9:] * 3)
        ids = self.tokenizer.encode(text).ids
        self.assertGreater(len(ids), MAX_TOKENS)
        self.assertLessEqual(len(ids), 512)
        (vector,) = self.served([text])
        self.assert_same_direction(vector, ids[: MAX_TOKENS - 1] + ids[-1:])
        whole = self.reference.embed(ids)
        cosine = vector @ whole / (np.linalg.norm(vector) * np.linalg.norm(whole))
        self.assertLess(cosine, MIN_COSINE, "the cut changes the vector")


class ServerAnswersEveryRequest(unittest.TestCase):
    """embed_server.py: OpenAI-shaped answers, and errors for what it cannot take."""

    base_url: str

    def embeddings(self, body: bytes) -> tuple[int, dict]:
        return post_raw(f"{self.base_url}/v1/embeddings", body)

    def assert_refused(self, body: bytes, status: int, words: str) -> None:
        got, reply = self.embeddings(body)
        self.assertEqual(got, status, reply)
        self.assertIn(words, reply["error"]["message"])

    def test_one_string_is_one_unit_vector(self):
        status, reply = self.embeddings(json.dumps({"input": "How are refunds paid?"}).encode())
        self.assertEqual(status, 200)
        self.assertEqual([item["index"] for item in reply["data"]], [0])
        vector = np.asarray(reply["data"][0]["embedding"])
        self.assertAlmostEqual(float(np.linalg.norm(vector)), 1.0, places=5)
        self.assertGreater(reply["usage"]["prompt_tokens"], 2)

    def test_vectors_keep_the_order_of_the_texts(self):
        texts = TEXTS[:4]
        status, reply = self.embeddings(json.dumps({"input": texts}).encode())
        self.assertEqual(status, 200)
        self.assertEqual([item["index"] for item in reply["data"]], list(range(len(texts))))
        for text, item in zip(texts, reply["data"]):
            _, alone = self.embeddings(json.dumps({"input": [text]}).encode())
            self.assertAlmostEqual(
                float(np.dot(item["embedding"], alone["data"][0]["embedding"])), 1.0, places=5
            )

    def test_a_question_goes_before_the_texts_of_an_import(self):
        # A request of many texts is queued; a one-text request sent after it is answered
        # long before the many are done (relative to the big request's own time, so a
        # busy machine slows both alike).
        many = {"input": [TEXTS[-1]] * 400}
        finished = {}

        def send_many() -> None:
            post_json(f"{self.base_url}/v1/embeddings", many)
            finished["many"] = time.monotonic()

        started = time.monotonic()
        sender = threading.Thread(target=send_many)
        sender.start()
        time.sleep(0.3)
        post_json(f"{self.base_url}/v1/embeddings", {"input": "How are refunds paid?"})
        finished["question"] = time.monotonic()
        sender.join()
        self.assertLess(
            finished["question"] - started, (finished["many"] - started) / 2, finished
        )

    def test_what_is_not_texts_is_refused(self):
        self.assert_refused(b"not json", 400, "not JSON")
        self.assert_refused(b"[" * 100_000 + b"]" * 100_000, 400, "not JSON")
        self.assert_refused(b'{"input": ' + b"9" * 5000 + b"}", 400, "not JSON")
        self.assert_refused(b'{"input": ["\\ud800"]}', 400, "not valid Unicode")
        self.assert_refused(b"[1, 2]", 400, "an object with `input`")
        self.assert_refused(json.dumps({"input": [101, 2023]}).encode(), 400, "list of strings")
        self.assert_refused(json.dumps({"input": []}).encode(), 400, "no text")
        self.assert_refused(json.dumps({"input": ["a"] * 2049}).encode(), 400, "at most 2048")

    def connection(self) -> http.client.HTTPConnection:
        address = urllib.parse.urlsplit(self.base_url)
        return http.client.HTTPConnection(address.hostname, address.port, timeout=120)

    def announced(self, length: str) -> tuple[int, dict]:
        """The answer to a POST that announces a body of `length` and sends none."""
        connection = self.connection()
        connection.putrequest("POST", "/v1/embeddings")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", length)
        connection.endheaders()
        response = connection.getresponse()
        answer = response.status, json.load(response)
        connection.close()
        return answer

    def test_a_body_over_the_limit_is_refused_unread(self):
        # The length is announced, not sent: the refusal must come before any reading.
        status, reply = self.announced(str(9 * 1024 * 1024))
        self.assertEqual(status, 413)
        self.assertIn("over", reply["error"]["message"])
        status, reply = self.announced("-1")
        self.assertEqual(status, 400)
        self.assertIn("negative", reply["error"]["message"])

    def test_a_refusal_leaves_the_connection_usable(self):
        # On one kept-alive connection: a body left unread must not be taken for the next
        # request (the connection ends instead, and the client opens another).
        connection = self.connection()
        headers = {"Content-Type": "application/json"}
        connection.request("POST", "/v1/completions", b'{"input": "x"}', headers)
        response = connection.getresponse()
        self.assertEqual(response.status, 404)
        self.assertIn("no route", json.load(response)["error"]["message"])
        connection.request("POST", "/v1/embeddings", b'{"input": "x"}', headers)
        response = connection.getresponse()
        self.assertEqual(response.status, 200)
        self.assertEqual(len(json.load(response)["data"]), 1)
        connection.close()

    def test_another_method_gets_an_error_in_json(self):
        connection = self.connection()
        connection.request("PUT", "/v1/embeddings", b"{}")
        response = connection.getresponse()
        self.assertEqual(response.status, 501)
        self.assertEqual(response.getheader("Content-Type"), "application/json")
        self.assertIn("message", json.load(response)["error"])
        connection.close()


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python check_embedder.py MODEL_DIR BASE_URL", file=sys.stderr)
        return 2
    ServedEmbedderMatchesUpstream.model_dir = Path(argv[1])
    ServedEmbedderMatchesUpstream.base_url = argv[2].rstrip("/")
    ServerAnswersEveryRequest.base_url = argv[2].rstrip("/")
    loader = unittest.defaultTestLoader
    suite = unittest.TestSuite(
        loader.loadTestsFromTestCase(case)
        for case in (ServedEmbedderMatchesUpstream, ServerAnswersEveryRequest)
    )
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
