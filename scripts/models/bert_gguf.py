"""Writes a BERT sentence-embedding model as GGUF, the file format llama.cpp serves.

    python bert_gguf.py MODEL_DIR OUTPUT.gguf

MODEL_DIR holds the model as its authors publish it: `config.json`, `tokenizer.json`
(a WordPiece tokenizer) and `model.safetensors`. The layout written is the one llama.cpp's
`bert` architecture reads (its `src/models/bert.cpp` and vocabulary loader):

- hyperparameters under `bert.*`, non-causal attention, mean pooling (what
  sentence-transformers models such as all-MiniLM-L6-v2 are trained with);
- the WordPiece vocabulary in llama.cpp's form: a word-start piece carries the marker
  U+2581 in front, a continuation piece (`##ing`) loses its `##`, special tokens
  (`[CLS]`, `[SEP]`, …) stay as they are and are typed CONTROL; the tokenizer model is
  `bert`, and the normalizer's lowercasing and accent stripping are written out, because
  llama.cpp assumes neither when the keys are missing;
- 2-D weight matrices in F16; biases, norms, the position and token-type embeddings in
  F32.

Only numpy, safetensors and the `gguf` package are needed (no torch). The vocabulary and
the vectors this produces are checked against the `tokenizers` library and a numpy
forward pass by `check_embedder.py`.
"""

import json
import re
import sys
from pathlib import Path

import gguf
import numpy as np
from safetensors.numpy import load_file

ARCH = "bert"
WORD_START = "\u2581"
CONTINUATION = "##"

# Tensors outside the layers: upstream name -> GGUF name.
EMBEDDING_TENSORS = {
    "embeddings.word_embeddings.weight": "token_embd.weight",
    "embeddings.position_embeddings.weight": "position_embd.weight",
    "embeddings.token_type_embeddings.weight": "token_types.weight",
    "embeddings.LayerNorm.weight": "token_embd_norm.weight",
    "embeddings.LayerNorm.bias": "token_embd_norm.bias",
}
# Inside layer N (`encoder.layer.N.<part>.{weight,bias}` -> `blk.N.<name>.{weight,bias}`).
LAYER_TENSORS = {
    "attention.self.query": "attn_q",
    "attention.self.key": "attn_k",
    "attention.self.value": "attn_v",
    "attention.output.dense": "attn_output",
    "attention.output.LayerNorm": "attn_output_norm",
    "intermediate.dense": "ffn_up",
    "output.dense": "ffn_down",
    "output.LayerNorm": "layer_output_norm",
}
# Not used for sentence embeddings.
UNUSED_TENSORS = {"embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias"}
# 2-D, yet kept in F32 (llama.cpp reads them as rows, by position and token type).
F32_MATRICES = {"position_embd.weight", "token_types.weight"}
LAYER_NAME = re.compile(r"^encoder\.layer\.(\d+)\.(.+)\.(weight|bias)$")


def gguf_tensor_name(name: str) -> str | None:
    """The GGUF name of an upstream tensor; None for one that is left out."""
    name = name.removeprefix("bert.")
    if name in UNUSED_TENSORS:
        return None
    if name in EMBEDDING_TENSORS:
        return EMBEDDING_TENSORS[name]
    match = LAYER_NAME.match(name)
    if match and match.group(2) in LAYER_TENSORS:
        block, part, kind = match.groups()
        return f"blk.{block}.{LAYER_TENSORS[part]}.{kind}"
    raise ValueError(f"unexpected tensor {name!r}: not a BERT encoder tensor")


def stored(gguf_name: str, data: np.ndarray) -> np.ndarray:
    """The array as it is written: F16 for weight matrices, F32 for everything else."""
    if data.ndim == 2 and gguf_name.endswith(".weight") and gguf_name not in F32_MATRICES:
        return data.astype(np.float16)
    return data.astype(np.float32)


def llama_vocabulary(tokenizer: dict) -> tuple[list[str], list[int]]:
    """The tokens in id order, in llama.cpp's WordPiece form, and their types."""
    model = tokenizer["model"]
    if model.get("type") != "WordPiece" or model.get("continuing_subword_prefix") != CONTINUATION:
        raise ValueError("not a WordPiece tokenizer with '##' continuations")
    by_id = {token_id: token for token, token_id in model["vocab"].items()}
    if sorted(by_id) != list(range(len(by_id))):
        raise ValueError("the vocabulary's ids are not 0..n-1")
    added = {entry["id"]: entry for entry in tokenizer.get("added_tokens", [])}
    tokens, types = [], []
    for token_id in range(len(by_id)):
        token = by_id[token_id]
        entry = added.get(token_id)
        if entry is not None and entry.get("special"):
            tokens.append(token)
            types.append(gguf.TokenType.CONTROL)
            continue
        if token.startswith(CONTINUATION):
            tokens.append(token[len(CONTINUATION):])
        else:
            tokens.append(WORD_START + token)
        types.append(gguf.TokenType.USER_DEFINED if entry is not None else gguf.TokenType.NORMAL)
    return tokens, types


def special_token_id(tokenizer: dict, text: str) -> int:
    for entry in tokenizer.get("added_tokens", []):
        if entry["content"] == text:
            return entry["id"]
    raise ValueError(f"the tokenizer has no {text} token")


def normalizer_flags(tokenizer: dict) -> tuple[bool, bool]:
    """(lowercase, strip accents) of a BertNormalizer; accents follow lowercasing when unset."""
    normalizer = tokenizer.get("normalizer") or {}
    if normalizer.get("type") != "BertNormalizer":
        raise ValueError("expected a BertNormalizer")
    lowercase = bool(normalizer.get("lowercase", True))
    strip_accents = normalizer.get("strip_accents")
    return lowercase, lowercase if strip_accents is None else bool(strip_accents)


def convert(model_dir: Path, output: Path, name: str) -> None:
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    tokenizer = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    if config.get("model_type") != "bert":
        raise ValueError(f"not a BERT model: {config.get('model_type')!r}")
    tokens, types = llama_vocabulary(tokenizer)
    if len(tokens) != config["vocab_size"]:
        raise ValueError(f"{len(tokens)} tokens, the config says {config['vocab_size']}")
    lowercase, strip_accents = normalizer_flags(tokenizer)

    writer = gguf.GGUFWriter(str(output), ARCH)
    writer.add_name(name)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_layer_norm_eps(config["layer_norm_eps"])
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.MEAN)

    writer.add_tokenizer_model(ARCH)
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_type_count(config.get("type_vocab_size", 1))
    writer.add_bool("tokenizer.ggml.normalizer.lowercase", lowercase)
    writer.add_bool("tokenizer.ggml.normalizer.strip_accents", strip_accents)
    cls, sep = special_token_id(tokenizer, "[CLS]"), special_token_id(tokenizer, "[SEP]")
    writer.add_bos_token_id(cls)
    writer.add_eos_token_id(sep)
    writer.add_sep_token_id(sep)
    writer.add_unk_token_id(special_token_id(tokenizer, "[UNK]"))
    writer.add_pad_token_id(special_token_id(tokenizer, "[PAD]"))
    writer.add_mask_token_id(special_token_id(tokenizer, "[MASK]"))

    weights = load_file(str(model_dir / "model.safetensors"))
    expected_blocks = set(range(config["num_hidden_layers"]))
    seen_blocks = set()
    for upstream_name in sorted(weights):
        gguf_name = gguf_tensor_name(upstream_name)
        if gguf_name is None:
            continue
        if gguf_name.startswith("blk."):
            seen_blocks.add(int(gguf_name.split(".")[1]))
        writer.add_tensor(gguf_name, stored(gguf_name, weights[upstream_name]))
    if seen_blocks != expected_blocks:
        raise ValueError(f"layers {sorted(seen_blocks)}, expected 0..{len(expected_blocks) - 1}")

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python bert_gguf.py MODEL_DIR OUTPUT.gguf", file=sys.stderr)
        return 2
    model_dir, output = Path(argv[1]), Path(argv[2])
    convert(model_dir, output, model_dir.name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
