"""Proves a converted BERT embedder (bert_gguf.py) against its upstream files, as served.

    python check_embedder.py MODEL_DIR BASE_URL

MODEL_DIR holds the upstream `config.json`, `tokenizer.json` and `model.safetensors`;
BASE_URL is the llama-cpp-python server that serves the GGUF (e.g.
http://127.0.0.1:18088). For each text below:

- the token ids the server gives (`POST /extras/tokenize`) equal those of the
  `tokenizers` library with the upstream tokenizer (no padding, no truncation);
- the vector the server returns (`POST /v1/embeddings`) points the same way as the one
  a numpy forward pass of the upstream F32 weights gives (mean pooling over every token,
  as the model is trained): cosine >= 0.9999.

Runs as a unittest suite, so its last line says how many checks passed.
"""

import json
import math
import sys
import unittest
import urllib.request
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

MIN_COSINE = 0.9999

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
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response)


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

    def served_ids(self, text: str) -> list[int]:
        return post_json(f"{self.base_url}/extras/tokenize", {"input": text})["tokens"]

    def test_token_ids_equal_the_tokenizers_library(self):
        for text in TEXTS:
            with self.subTest(text=text):
                self.assertEqual(self.served_ids(text), self.tokenizer.encode(text).ids)

    def test_served_vectors_match_the_reference_forward_pass(self):
        served = post_json(f"{self.base_url}/v1/embeddings", {"input": TEXTS})["data"]
        served.sort(key=lambda item: item["index"])
        self.assertEqual(len(served), len(TEXTS))
        for text, item in zip(TEXTS, served):
            with self.subTest(text=text):
                vector = np.asarray(item["embedding"], dtype=np.float64)
                expected = self.reference.embed(self.tokenizer.encode(text).ids)
                cosine = vector @ expected / (np.linalg.norm(vector) * np.linalg.norm(expected))
                self.assertGreaterEqual(cosine, MIN_COSINE)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python check_embedder.py MODEL_DIR BASE_URL", file=sys.stderr)
        return 2
    ServedEmbedderMatchesUpstream.model_dir = Path(argv[1])
    ServedEmbedderMatchesUpstream.base_url = argv[2].rstrip("/")
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(ServedEmbedderMatchesUpstream)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
