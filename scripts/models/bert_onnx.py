"""Writes a BERT sentence-embedding model as an ONNX graph, the format ONNX Runtime runs.

    python bert_onnx.py MODEL_DIR OUTPUT.onnx

MODEL_DIR holds the model as its authors publish it: `config.json` and
`model.safetensors` (the tokenizer stays `tokenizer.json`, read by the `tokenizers`
library in the server). The graph is the model's forward pass in F32, written op by op
from the published weights (no torch):

- input `input_ids`, int64 [texts, tokens]: the token ids of texts of one length (the
  embedding server passes one text a call, so no padding and no attention mask);
- embeddings (word + position + the first token type), then each layer's self-attention
  and feed-forward with exact (erf) GELU and the post-norm residuals of BERT;
- output `embedding`, F32 [texts, hidden]: the mean over every token (how
  sentence-transformers models such as all-MiniLM-L6-v2 are trained), cut to unit
  length.

Only numpy, safetensors and the `onnx` package are needed. The vectors served from this
graph are checked against a numpy forward pass of the same weights by
`check_embedder.py`.
"""

import json
import math
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

# The first opset with LayerNormalization as one op (ONNX Runtime 1.32 runs later ones too).
OPSET = 17
IR_VERSION = 8


class Graph:
    """Nodes and initializers of a graph being written; each op gets a fresh output name."""

    def __init__(self, weights: dict[str, np.ndarray]):
        self.weights = weights
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.names = 0

    def constant(self, name: str, value) -> str:
        array = np.asarray(value)
        array = array.astype(np.int64 if array.dtype.kind in "iu" else np.float32)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def weight(self, name: str, transpose: bool = False) -> str:
        array = self.weights[name]
        return self.constant(f"{name}.T" if transpose else name, array.T if transpose else array)

    def op(self, kind: str, inputs: list[str], **attributes) -> str:
        self.names += 1
        output = f"{kind.lower()}_{self.names}"
        self.nodes.append(helper.make_node(kind, inputs, [output], **attributes))
        return output

    def dense(self, x: str, prefix: str) -> str:
        """`x @ W.T + b` of the linear layer `prefix` (PyTorch stores W as [out, in])."""
        product = self.op("MatMul", [x, self.weight(f"{prefix}.weight", transpose=True)])
        return self.op("Add", [product, self.weight(f"{prefix}.bias")])

    def layer_norm(self, x: str, prefix: str, epsilon: float) -> str:
        scale, bias = self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")
        return self.op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=epsilon)


def build(config: dict, weights: dict[str, np.ndarray], name: str) -> onnx.ModelProto:
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    head_size = hidden // heads
    epsilon = config["layer_norm_eps"]
    g = Graph(weights)

    # Embeddings: word + position (the table's first `tokens` rows) + token type 0, then
    # their norm.
    first, second = g.constant("first", [0]), g.constant("second", [1])
    tokens = g.op("Slice", [g.op("Shape", ["input_ids"]), second, g.constant("third", [2])])
    words = g.op("Gather", [g.weight("embeddings.word_embeddings.weight"), "input_ids"], axis=0)
    table = g.weight("embeddings.position_embeddings.weight")
    placed = g.op("Slice", [table, first, tokens, first])
    first_type = g.constant("token_type_0", weights["embeddings.token_type_embeddings.weight"][0])
    x = g.op("Add", [g.op("Add", [words, placed]), first_type])
    x = g.layer_norm(x, "embeddings.LayerNorm", epsilon)

    by_head = g.constant("by_head", [0, 0, heads, head_size])  # [texts, tokens, heads, size]
    joined = g.constant("joined", [0, 0, hidden])
    score_scale = g.constant("score_scale", 1.0 / math.sqrt(head_size))
    half, one = g.constant("half", 0.5), g.constant("one", 1.0)
    root_two = g.constant("root_two", math.sqrt(2.0))
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}"

        def split(t: str, perm: list[int]) -> str:
            return g.op("Transpose", [g.op("Reshape", [t, by_head])], perm=perm)

        query = split(g.dense(x, f"{p}.attention.self.query"), [0, 2, 1, 3])
        key_t = split(g.dense(x, f"{p}.attention.self.key"), [0, 2, 3, 1])
        value = split(g.dense(x, f"{p}.attention.self.value"), [0, 2, 1, 3])
        scores = g.op("Mul", [g.op("MatMul", [query, key_t]), score_scale])
        weights_of_tokens = g.op("Softmax", [scores], axis=-1)
        context = g.op("Transpose", [g.op("MatMul", [weights_of_tokens, value])], perm=[0, 2, 1, 3])
        context = g.op("Reshape", [context, joined])
        attended = g.op("Add", [x, g.dense(context, f"{p}.attention.output.dense")])
        x = g.layer_norm(attended, f"{p}.attention.output.LayerNorm", epsilon)

        up = g.dense(x, f"{p}.intermediate.dense")
        erf = g.op("Erf", [g.op("Div", [up, root_two])])
        gelu = g.op("Mul", [g.op("Mul", [up, half]), g.op("Add", [erf, one])])
        fed = g.op("Add", [x, g.dense(gelu, f"{p}.output.dense")])
        x = g.layer_norm(fed, f"{p}.output.LayerNorm", epsilon)

    mean = g.op("ReduceMean", [x], axes=[1], keepdims=0)
    g.nodes.append(helper.make_node("LpNormalization", [mean], ["embedding"], axis=-1, p=2))

    graph = helper.make_graph(
        g.nodes,
        name,
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["texts", "tokens"])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["texts", hidden])],
        g.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    return model


def convert(model_dir: Path, output: Path, name: str) -> None:
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    if config.get("position_embedding_type", "absolute") != "absolute" or config.get(
        "hidden_act"
    ) != "gelu":
        raise ValueError(f"{name}: only BERT with absolute positions and GELU is written")
    weights = {
        key: value.astype(np.float32)
        for key, value in load_file(str(model_dir / "model.safetensors")).items()
    }
    onnx.save(build(config, weights, name), str(output))


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python bert_onnx.py MODEL_DIR OUTPUT.onnx", file=sys.stderr)
        return 2
    convert(Path(argv[1]), Path(argv[2]), Path(argv[1]).name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
