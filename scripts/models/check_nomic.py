"""Proves that the served nomic-embed-text-v1.5 gives the model's vectors.

    python check_nomic.py MODEL.gguf URL     (URL: the server, e.g. http://127.0.0.1:18088)

The reference is computed here, independently of llama.cpp: the GGUF's weights read
with numpy, the text split by a WordPiece tokenizer (the `tokenizers` library, with
bert-base-uncased's normalisation, over the GGUF's vocabulary), and nomic-bert's forward
pass written out (token and type embeddings, 12 post-norm layers with rotary attention
and a SwiGLU feed-forward, mean pooling over the tokens), as in nomic's published model
code. The served vector must point the same way (cosine at least 0.9999: the server
computes in F16 where this computes in F32), for texts with and without the task
prefixes, and for a text past the 512 tokens the server reads (it keeps the first 512,
as llama-cpp-python cuts: the closing [SEP] goes too). The model's sense is checked too: a question is closer
to the passage that answers it than to unrelated ones.

Runs as a unittest suite, so its last line says how many checks passed.
"""

import json
import struct
import sys
import unittest
import urllib.request
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

GGUF_ALIGNMENT = 32
# ggml's tensor types read here: the F16 GGUF holds F32 norms and F16 matrices.
GGML_TYPES = {0: np.float32, 1: np.float16}
# GGUF's metadata value types: struct format of each scalar, 8 string, 9 array.
SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

MIN_COSINE = 0.9999
TEXTS = [
    "search_query: What does the drug do to blood pressure?",
    "search_document: # ACE inhibitors\n\nAngiotensin-converting enzyme inhibitors lower blood "
    "pressure by relaxing the blood vessels; the first of them, captopril, was approved in 1981.",
    "search_document: The dragon slept on a pile of gold under the mountain.",
    "Plain text without a prefix, with punctuation (brackets, 3.5%) and a naïve café.",
]


class Gguf:
    """The metadata and tensors of a GGUF file (version 3), tensors as numpy arrays in
    PyTorch's (row-major, outer dimension first) shape."""

    def __init__(self, path: Path):
        self.data = np.memmap(path, mode="r")
        self.offset = 0
        magic, version = self.read("<4sI")
        if magic != b"GGUF" or version < 2:
            raise ValueError(f"{path} is not a GGUF file of version 2 or later")
        tensor_count, kv_count = self.read("<QQ")
        self.metadata = {}
        for _ in range(kv_count):
            key = self.string()
            (kind,) = self.read("<I")
            self.metadata[key] = self.value(kind)
        infos = []
        for _ in range(tensor_count):
            name = self.string()
            (dims,) = self.read("<I")
            shape = self.read(f"<{dims}Q")
            kind, offset = self.read("<IQ")
            infos.append((name, shape, kind, offset))
        alignment = self.metadata.get("general.alignment", GGUF_ALIGNMENT)
        start = (self.offset + alignment - 1) // alignment * alignment
        self.tensors = {}
        for name, shape, kind, offset in infos:
            dtype = GGML_TYPES[kind]
            count = int(np.prod(shape))
            begin = start + offset
            array = self.data[begin : begin + count * np.dtype(dtype).itemsize].view(dtype)
            self.tensors[name] = array.reshape(tuple(reversed(shape))).astype(np.float32)

    def read(self, fmt: str):
        values = struct.unpack_from(fmt, self.data, self.offset)
        self.offset += struct.calcsize(fmt)
        return values

    def string(self) -> str:
        (length,) = self.read("<Q")
        text = bytes(self.data[self.offset : self.offset + length]).decode("utf-8")
        self.offset += length
        return text

    def value(self, kind: int):
        if kind == 8:
            return self.string()
        if kind == 9:
            item_kind, count = self.read("<IQ")
            return [self.value(item_kind) for _ in range(count)]
        (value,) = self.read("<" + SCALARS[kind])
        return value


def wordpiece(model: Gguf) -> Tokenizer:
    """bert-base-uncased's tokenizer over the GGUF's vocabulary: [CLS] text [SEP]. The
    GGUF writes a word's first piece with a leading "▁" and the pieces after it
    bare; WordPiece's own spelling is the piece bare and the pieces after it with "##"."""
    vocab = {}
    for index, token in enumerate(model.metadata["tokenizer.ggml.tokens"]):
        if token.startswith("\u2581"):
            token = token[1:]
        elif not (token.startswith("[") and token.endswith("]")):
            token = "##" + token
        vocab.setdefault(token, index)
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])]
    )
    tokenizer.decoder = decoders.WordPiece()
    return tokenizer


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * weight + bias


def rotary(x: np.ndarray, base: float) -> np.ndarray:
    """Rotary position embedding, the halves of each head rotated (GPT-NeoX's layout,
    nomic-bert's `rotary_emb_interleaved: false`); x is (heads, tokens, head size)."""
    _, tokens, size = x.shape
    frequencies = 1.0 / base ** (np.arange(0, size, 2, dtype=np.float64) / size)
    angles = np.outer(np.arange(tokens, dtype=np.float64), frequencies)
    cos = np.cos(angles).astype(np.float32)
    sin = np.sin(angles).astype(np.float32)
    first, second = x[..., : size // 2], x[..., size // 2 :]
    return np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)


SERVED_TOKENS = 512


def reference_vector(model: Gguf, tokenizer: Tokenizer, text: str, limit: int = SERVED_TOKENS) -> np.ndarray:
    """nomic-bert's forward pass over `text` (its first `limit` tokens, as the server
    reads it), mean-pooled (not normalised)."""
    meta, weights = model.metadata, model.tensors
    ids = tokenizer.encode(text).ids[:limit]
    eps = meta["nomic-bert.attention.layer_norm_epsilon"]
    heads = meta["nomic-bert.attention.head_count"]
    base = meta["nomic-bert.rope.freq_base"]
    x = weights["token_embd.weight"][ids] + weights["token_types.weight"][0]
    x = layer_norm(x, weights["token_embd_norm.weight"], weights["token_embd_norm.bias"], eps)
    tokens, width = x.shape
    size = width // heads
    for layer in range(meta["nomic-bert.block_count"]):
        w = lambda name: weights[f"blk.{layer}.{name}"]  # noqa: E731
        qkv = x @ w("attn_qkv.weight").T
        q, k, v = (qkv[:, n * width : (n + 1) * width].reshape(tokens, heads, size).transpose(1, 0, 2) for n in range(3))
        q, k = rotary(q, base), rotary(k, base)
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(size)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attention = (scores / scores.sum(-1, keepdims=True)) @ v
        attention = attention.transpose(1, 0, 2).reshape(tokens, width) @ w("attn_output.weight").T
        x = layer_norm(x + attention, w("attn_output_norm.weight"), w("attn_output_norm.bias"), eps)
        up = x @ w("ffn_up.weight").T
        gate = x @ w("ffn_gate.weight").T
        feed = (up * gate / (1.0 + np.exp(-gate))) @ w("ffn_down.weight").T
        x = layer_norm(x + feed, w("layer_output_norm.weight"), w("layer_output_norm.bias"), eps)
    return x.mean(axis=0)


def served(url: str, texts: list[str]) -> list[np.ndarray]:
    request = urllib.request.Request(
        f"{url}/v1/embeddings",
        data=json.dumps({"model": "nomic-embed-text-v1.5", "input": texts}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        body = json.load(response)
    data = sorted(body["data"], key=lambda item: item["index"])
    return [np.asarray(item["embedding"], dtype=np.float32) for item in data]


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


class ServedNomicMatchesTheModel(unittest.TestCase):
    model: Gguf
    tokenizer: Tokenizer
    url: str

    def test_the_gguf_is_nomic_bert_with_mean_pooling(self):
        meta = self.model.metadata
        self.assertEqual(meta["general.architecture"], "nomic-bert")
        self.assertEqual(meta["nomic-bert.embedding_length"], 768)
        self.assertEqual(meta["nomic-bert.pooling_type"], 1, "mean")

    def test_each_text_gets_the_models_vector(self):
        vectors = served(self.url, TEXTS)
        for text, vector in zip(TEXTS, vectors):
            with self.subTest(text=text[:40]):
                self.assertEqual(vector.shape, (768,))
                similarity = cosine(vector, reference_vector(self.model, self.tokenizer, text))
                self.assertGreaterEqual(similarity, MIN_COSINE)

    def test_a_text_past_512_tokens_is_read_up_to_its_512th(self):
        # Tea up to past the cut, then rocks: read whole, the vector would lean to rocks.
        tea = " ".join(f"Tea garden {n} picks its oolong leaves by hand in spring." for n in range(45))
        rocks = " ".join(f"Granite block {n} cools slowly deep under the crust." for n in range(25))
        text = f"{tea} {rocks}"
        self.assertGreater(len(self.tokenizer.encode(tea).ids), SERVED_TOKENS)
        [vector] = served(self.url, [text])
        self.assertGreaterEqual(cosine(vector, reference_vector(self.model, self.tokenizer, text)), MIN_COSINE)
        whole = reference_vector(self.model, self.tokenizer, text, limit=len(self.tokenizer.encode(text).ids))
        self.assertLess(cosine(vector, whole), 0.99, "what lies past the 512th token is not read")

    def test_a_question_is_closest_to_the_passage_that_answers_it(self):
        question, answer, unrelated, plain = served(self.url, TEXTS)
        self.assertGreater(cosine(question, answer), cosine(question, unrelated) + 0.1)
        self.assertGreater(cosine(question, answer), cosine(question, plain) + 0.1)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    ServedNomicMatchesTheModel.model = Gguf(Path(argv[1]))
    ServedNomicMatchesTheModel.tokenizer = wordpiece(ServedNomicMatchesTheModel.model)
    ServedNomicMatchesTheModel.url = argv[2].rstrip("/")
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(ServedNomicMatchesTheModel)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
