#!/usr/bin/env bash
# The local model servers that `make run`, the real-model tests and the model benchmark
# use, one process per model, on loopback: llama-cpp-python's OpenAI-compatible server
# for the GGUF models (it keeps one model loaded per process), and
# scripts/models/embed_server.py on ONNX Runtime for MiniLM. Everything lives in
# .llm-server/ (gitignored).
#
#   scripts/llm-server.sh install [MODEL…]    virtual environment, llama-cpp-python when a
#                                             model runs on it (compiles
#                                             llama.cpp the first time: 5 to 25 minutes on
#                                             2 cores, depending on what else runs) and the
#                                             models (default: qwen minilm); quick when done
#   scripts/llm-server.sh start MODEL PORT    install if needed, start in the background in
#                                             a session of its own (a Ctrl-C in the terminal
#                                             does not reach it) and wait until it answers
#   scripts/llm-server.sh stop PORT           stop the server that `start` started there
#   scripts/llm-server.sh status PORT         whether one answers there
#   scripts/llm-server.sh serve MODEL PORT    run in the foreground (exec: the caller's
#                                             child is the server itself), for tests that
#                                             kill it and for containers (LLM_SERVER_HOST:
#                                             the address to listen on, 127.0.0.1 unless set)
#   scripts/llm-server.sh check-embedder PORT the MiniLM conversion proved against its
#                                             upstream files, on the server at PORT
#   scripts/llm-server.sh check-nomic PORT    the served nomic-embed-text proved against
#                                             its weights (a forward pass in numpy)
#   scripts/llm-server.sh check-reranker PORT the re-ranking server proved: nanoranker at
#                                             PORT against its published examples, and
#                                             the cross-encoder path on a tiny model
#
# MODEL is one of
#   qwen     Qwen2.5-Coder-0.5B-Instruct Q4_K_M, chat (alias qwen2.5-coder-0.5b)
#   minilm   all-MiniLM-L6-v2 as an ONNX graph (F32) on ONNX Runtime, embeddings
#            (alias all-minilm-l6-v2; scripts/models/embed_server.py, not llama-cpp-python)
#   smollm2  SmolLM2-135M-Instruct Q4_1, chat and embeddings (alias smollm2)
#   nomic    nomic-embed-text-v1.5 F16 (768 dimensions), embeddings (alias
#            nomic-embed-text-v1.5; bor adds its task prefixes, scripts/models/nomic.env)
#   qwen-tools  qwen with llama-cpp-python's function-calling chat format (benchmark)
#   nanoranker  nanoranker 1.2's re-ranking network, `/v1/rerank` (scripts/models/rerank_server.py)
#   ms-marco    your own copy of cross-encoder/ms-marco-MiniLM-L6-v2's ONNX export, `/v1/rerank`:
#               CROSS_ENCODER_DIR names the folder holding onnx/model.onnx (or model.onnx)
#               and tokenizer.json, each refused unless its SHA-256 is the published one
#               (alias ms-marco-minilm-l6-v2; docs/LOCAL_MODELS.md, "Re-ranking")
# Where each comes from, and how it is checked: scripts/models/fetch.py.
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_CPP_PYTHON_VERSION=0.3.36
# The model acquisition, its checks and the embedding server (wheels, no compilation):
# onnx writes the embedder's graph, ONNX Runtime runs it.
TOOL_PACKAGES=(onnx==1.23.2 onnxruntime==1.32.0 safetensors==0.8.0 tokenizers==0.23.3)
# nanoranker's sentence encoder tokenizes inside its graph with this library's operator.
RERANK_PACKAGES=(onnxruntime-extensions==0.15.2)
# A portable x86-64 build (AVX2): llama.cpp's native build enables AMX where the CPU
# reports it, and its AMX kernels crash in virtual machines that do not grant AMX.
# The multimodal library is not needed.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF"
DEFAULT_MODELS=(qwen minilm)

HOME_DIR=${BOR_LLM_SERVER_HOME:-$PWD/.llm-server}
VENV=$HOME_DIR/venv
PYTHON=$VENV/bin/python
MODELS_DIR=$HOME_DIR/models
SERVER_STAMP=$VENV/.installed
TOOLS_STAMP=$VENV/.tools-installed
RERANK_STAMP=$VENV/.rerank-installed
RUN_DIR=$HOME_DIR/run

say() { echo "llm-server: $*" >&2; }
die() {
    say "$*"
    exit 1
}

# The file, alias and server options of MODEL (sets MODEL_FILE, MODEL_ALIAS, MODEL_ARGS,
# MODEL_TITLE, and MODEL_FETCH: the name scripts/models/fetch.py knows its file by).
model_settings() {
    case "$1" in
    qwen)
        MODEL_TITLE="Qwen2.5-Coder-0.5B-Instruct (Q4_K_M)"
        MODEL_FILE=$MODELS_DIR/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
        MODEL_ALIAS=qwen2.5-coder-0.5b
        MODEL_FETCH=qwen
        # 8k of its 32k context: bor's prompts for this model stay far below.
        MODEL_ARGS=(--n_ctx 8192)
        ;;
    minilm)
        MODEL_TITLE="all-MiniLM-L6-v2 (ONNX, F32)"
        MODEL_FILE=$MODELS_DIR/all-minilm-l6-v2.onnx
        MODEL_ALIAS=all-minilm-l6-v2
        MODEL_FETCH=minilm
        # Served by scripts/models/embed_server.py on ONNX Runtime: 4 times the chunks/s
        # of llama-cpp-python's server on the same machine (docs/LOCAL_MODELS.md).
        ;;
    qwen-tools)
        # The benchmark's variant: llama-cpp-python's function-calling chat format, which
        # shows the model bor's tools and turns its calls into structured tool calls.
        model_settings qwen
        MODEL_TITLE="Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, chatml-function-calling)"
        MODEL_ARGS+=(--chat_format chatml-function-calling)
        ;;
    nomic)
        MODEL_TITLE="nomic-embed-text-v1.5 (F16)"
        MODEL_FILE=$MODELS_DIR/nomic-embed-text-v1.5.f16.gguf
        MODEL_ALIAS=nomic-embed-text-v1.5
        MODEL_FETCH=nomic
        # Mean pooling, as the model was trained and as sentence-transformers runs it.
        # Batches of 512 tokens: the texts of a request share a batch, and the model
        # attends across all of it (masked), so batches of 2,048 cost twice the time per
        # chunk (docs/LOCAL_MODELS.md). A text is read up to 512 tokens (about 2,000
        # characters; a 600-character chunk is about 120) and cut there.
        MODEL_ARGS=(--n_ctx 2048 --n_batch 512 --n_ubatch 512 --embedding true --kv_overrides nomic-bert.pooling_type=int:1)
        ;;
    smollm2)
        MODEL_TITLE="SmolLM2-135M-Instruct (Q4_1)"
        MODEL_FILE=$MODELS_DIR/SmolLM2-135M-Instruct.Q4_1.gguf
        MODEL_ALIAS=smollm2
        MODEL_FETCH=smollm2
        # The model's whole 8k context; mean pooling gives OpenAI-shaped /v1/embeddings.
        MODEL_ARGS=(--n_ctx 8192 --embedding true --kv_overrides llama.pooling_type=int:1)
        ;;
    nanoranker)
        MODEL_TITLE="nanoranker 1.2 (re-ranking, ONNX)"
        MODEL_FILE=$MODELS_DIR/nanoranker/reranker_nn_v2.onnx
        MODEL_ALIAS=nanoranker
        MODEL_FETCH=nanoranker
        ;;
    ms-marco)
        MODEL_TITLE="ms-marco-MiniLM-L6-v2 (cross-encoder, ONNX)"
        [ -n "${CROSS_ENCODER_DIR:-}" ] ||
            die "ms-marco: set CROSS_ENCODER_DIR to the folder of onnx/model.onnx and tokenizer.json (docs/LOCAL_MODELS.md)"
        MODEL_FILE=$CROSS_ENCODER_DIR/onnx/model.onnx
        [ -f "$MODEL_FILE" ] || MODEL_FILE=$CROSS_ENCODER_DIR/model.onnx
        MODEL_ALIAS=ms-marco-minilm-l6-v2
        # Your files, checked by the server when it starts: nothing to fetch.
        MODEL_FETCH=
        ;;
    *) die "unknown model '$1' (qwen, minilm, smollm2, nomic, nanoranker or ms-marco)" ;;
    esac
}

server_installed() {
    [ -x "$PYTHON" ] &&
        [ "$(cat "$SERVER_STAMP" 2>/dev/null)" = "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION $LLAMA_CMAKE_ARGS" ] &&
        "$PYTHON" -c 'import llama_cpp.server' 2>/dev/null
}

tools_installed() {
    [ "$(cat "$TOOLS_STAMP" 2>/dev/null)" = "${TOOL_PACKAGES[*]}" ]
}

# pip, with its verbose build log in a file and a progress line on the terminal (a line
# every 30 s when stderr is not a terminal).
pip_install_with_progress() {
    local log=$HOME_DIR/install.log started=$SECONDS next_report=0 pid step what elapsed line
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        "$PYTHON" -m pip install --no-cache-dir --disable-pip-version-check -v "$@" >"$log" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        sleep 2
        # ninja prints "[n/total]" for each file it compiles; then the wheel is linked,
        # packed and installed.
        step=$(tail -c 65536 "$log" | grep -oE '^ *\[[0-9]+/[0-9]+\]' | tail -n 1 | tr -d ' []' || true)
        if tail -c 65536 "$log" | grep -qE 'Building wheel for llama-cpp-python .*done|Created wheel'; then
            what="installing the built wheel"
        elif [ -n "$step" ]; then
            what="compiling llama.cpp, step $step"
        else
            what="downloading and preparing"
        fi
        elapsed=$((SECONDS - started))
        line=$(printf 'installing llama-cpp-python: %s, %dm%02ds' "$what" $((elapsed / 60)) $((elapsed % 60)))
        if [ -t 2 ]; then
            printf '\rllm-server: %s   ' "$line" >&2
        elif ((elapsed >= next_report)); then
            say "$line"
            next_report=$((elapsed + 30))
        fi
    done
    if [ -t 2 ]; then
        echo >&2
    fi
    if ! wait "$pid"; then
        tail -n 30 "$log" >&2
        die "pip failed; the whole log is in $log"
    fi
}

# The virtual environment, made when missing.
ensure_venv() {
    if [ -x "$PYTHON" ]; then
        return 0
    fi
    mkdir -p "$HOME_DIR"
    python3 -m venv "$VENV" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
}

# Whether MODEL runs on llama-cpp-python: every one but the ONNX embedder and re-rankers,
# which need only the tools (ONNX Runtime and the tokenizer), so that installing them
# compiles nothing.
runs_on_llama() {
    case "$1" in
    minilm | nanoranker | ms-marco) return 1 ;;
    *) return 0 ;;
    esac
}

install_server() {
    if server_installed; then
        return 0
    fi
    local started=$SECONDS
    say "installing llama-cpp-python $LLAMA_CPP_PYTHON_VERSION into $VENV"
    say "the first install compiles llama.cpp: 5 minutes on 2 free cores, up to 25 when other builds run (later starts take seconds)"
    ensure_venv
    pip_install_with_progress "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION"
    "$PYTHON" -c 'import llama_cpp.server' || die "llama_cpp.server does not import after the install"
    echo "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION $LLAMA_CMAKE_ARGS" >"$SERVER_STAMP"
    say "llama-cpp-python installed in $((SECONDS - started))s"
}

install_tools() {
    if tools_installed; then
        return 0
    fi
    say "installing ${TOOL_PACKAGES[*]} (the model conversion and its checks)"
    "$PYTHON" -m pip install --quiet --disable-pip-version-check "${TOOL_PACKAGES[@]}"
    echo "${TOOL_PACKAGES[*]}" >"$TOOLS_STAMP"
}

install_rerank_packages() {
    if [ "$(cat "$RERANK_STAMP" 2>/dev/null)" = "${RERANK_PACKAGES[*]}" ]; then
        return 0
    fi
    say "installing ${RERANK_PACKAGES[*]} (nanoranker's sentence encoder)"
    "$PYTHON" -m pip install --quiet --disable-pip-version-check "${RERANK_PACKAGES[@]}"
    echo "${RERANK_PACKAGES[*]}" >"$RERANK_STAMP"
}

# Models of an earlier layout (.llm-server/model/) move to .llm-server/models/.
adopt_old_models() {
    local old=$HOME_DIR/model/SmolLM2-135M-Instruct.Q4_1.gguf
    if [ -f "$old" ] && [ ! -e "$MODELS_DIR/${old##*/}" ]; then
        mkdir -p "$MODELS_DIR"
        mv "$old" "$MODELS_DIR/"
        rmdir "$HOME_DIR/model" 2>/dev/null || true
    fi
}

install() {
    local models=("$@")
    [ ${#models[@]} -gt 0 ] || models=("${DEFAULT_MODELS[@]}")
    local files=() llama=false
    for model in "${models[@]}"; do
        model_settings "$model"
        if [ -n "$MODEL_FETCH" ]; then
            files+=("$MODEL_FETCH")
        fi
        if runs_on_llama "$model"; then
            llama=true
        fi
    done
    ensure_venv
    if [ "$llama" = true ]; then
        install_server
    fi
    install_tools
    if [[ " ${models[*]} " == *" nanoranker "* ]]; then
        install_rerank_packages
    fi
    adopt_old_models
    if [ ${#files[@]} -gt 0 ]; then
        "$PYTHON" scripts/models/fetch.py "$MODELS_DIR" "${files[@]}" || die "the models could not be fetched"
    fi
}

port_of() {
    local port=${1:-}
    [[ $port =~ ^[0-9]+$ ]] || die "not a port: '$port'"
    echo "$port"
}

answers() {
    curl --silent --fail --max-time 2 "http://127.0.0.1:$1/v1/models" >/dev/null 2>&1
}

serve() {
    local model=$1 port
    port=$(port_of "${2:-}")
    model_settings "$model"
    if [ "$model" = ms-marco ] && [ ! -f "$MODEL_FILE" ]; then
        die "ms-marco: no onnx/model.onnx or model.onnx in CROSS_ENCODER_DIR ($CROSS_ENCODER_DIR)"
    fi
    if { runs_on_llama "$model" && ! server_installed; } || ! tools_installed || [ ! -f "$MODEL_FILE" ]; then
        die "not installed; run: scripts/llm-server.sh install $model"
    fi
    case "$model" in
    nanoranker)
        [ "$(cat "$RERANK_STAMP" 2>/dev/null)" = "${RERANK_PACKAGES[*]}" ] ||
            die "not installed; run: scripts/llm-server.sh install nanoranker"
        PYTHONUNBUFFERED=1 exec "$PYTHON" scripts/models/rerank_server.py nanoranker \
            --dir "$MODELS_DIR/nanoranker" \
            --alias "$MODEL_ALIAS" \
            --host "${LLM_SERVER_HOST:-127.0.0.1}" \
            --port "$port"
        ;;
    ms-marco)
        # The server refuses files whose SHA-256 is not the published export's.
        PYTHONUNBUFFERED=1 exec "$PYTHON" scripts/models/rerank_server.py cross-encoder \
            --model "$MODEL_FILE" \
            --tokenizer "$CROSS_ENCODER_DIR/tokenizer.json" \
            --alias "$MODEL_ALIAS" \
            --host "${LLM_SERVER_HOST:-127.0.0.1}" \
            --port "$port"
        ;;
    esac
    if [ "$model" = minilm ]; then
        [ -f "$MODELS_DIR/all-MiniLM-L6-v2/tokenizer.json" ] ||
            die "not installed; run: scripts/llm-server.sh install minilm"
        # A worker of one thread per core; the log shows errors only.
        PYTHONUNBUFFERED=1 exec "$PYTHON" scripts/models/embed_server.py \
            --model "$MODEL_FILE" \
            --tokenizer "$MODELS_DIR/all-MiniLM-L6-v2/tokenizer.json" \
            --alias "$MODEL_ALIAS" \
            --host "${LLM_SERVER_HOST:-127.0.0.1}" \
            --port "$port"
    fi
    # One thread each: two threads collapse to a few tokens/s when the other core is busy
    # (and read a prompt at 9 tokens/s instead of 32 with one, measured with other builds
    # running). A second request waits for the running one instead of cutting its stream
    # off. A fixed seed: sampling repeats itself (bor's local setups decode greedily).
    # Unbuffered output, so the log shows each line (disconnects, errors) as it happens.
    PYTHONUNBUFFERED=1 exec "$PYTHON" -m llama_cpp.server \
        --model "$MODEL_FILE" \
        --model_alias "$MODEL_ALIAS" \
        --host "${LLM_SERVER_HOST:-127.0.0.1}" \
        --port "$port" \
        --n_threads 1 \
        --n_threads_batch 1 \
        --interrupt_requests false \
        --seed 1 \
        --verbose false \
        "${MODEL_ARGS[@]}"
}

start() {
    local model=$1 port pid_file log
    port=$(port_of "${2:-}")
    model_settings "$model"
    pid_file=$RUN_DIR/$port.pid
    log=$RUN_DIR/$port.log
    install "$model"
    if answers "$port"; then
        die "127.0.0.1:$port is already in use; stop that server or choose another port"
    fi
    mkdir -p "$RUN_DIR"
    say "loading $MODEL_TITLE on 127.0.0.1:$port"
    # A session of its own: the terminal's Ctrl-C goes to bor, which then has its grace
    # to finish the turns in flight with this server still there; `stop` ends it after.
    setsid "$0" serve "$model" "$port" >"$log" 2>&1 </dev/null &
    echo $! >"$pid_file"
    local started=$SECONDS
    until answers "$port"; do
        if ! kill -0 "$(cat "$pid_file")" 2>/dev/null; then
            tail -n 20 "$log" >&2
            rm -f "$pid_file"
            die "the server exited; its log is $log"
        fi
        if ((SECONDS - started > 180)); then
            stop "$port"
            die "the server did not answer within 180 s; its log is $log"
        fi
        sleep 0.2
    done
    say "$MODEL_TITLE serves http://127.0.0.1:$port/v1 (model $MODEL_ALIAS; log $log)"
}

stop() {
    local port pid_file pid
    port=$(port_of "${1:-}")
    pid_file=$RUN_DIR/$port.pid
    [ -f "$pid_file" ] || return 0
    pid=$(cat "$pid_file")
    if kill "$pid" 2>/dev/null; then
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pid_file"
}

status() {
    local port
    port=$(port_of "${1:-}")
    if answers "$port"; then
        echo "running on 127.0.0.1:$port"
    else
        echo "not running on 127.0.0.1:$port"
        return 1
    fi
}

check_embedder() {
    local port
    port=$(port_of "${1:-}")
    install_tools
    "$PYTHON" scripts/models/check_embedder.py "$MODELS_DIR/all-MiniLM-L6-v2" "http://127.0.0.1:$port"
}

check_nomic() {
    local port
    port=$(port_of "${1:-}")
    install_tools
    model_settings nomic
    "$PYTHON" scripts/models/check_nomic.py "$MODEL_FILE" "http://127.0.0.1:$port"
}

check_reranker() {
    local port
    port=$(port_of "${1:-}")
    install_tools
    "$PYTHON" scripts/models/check_reranker.py "http://127.0.0.1:$port"
}

command=${1:-}
shift || true
case "$command" in
install) install "$@" ;;
start) start "${1:-}" "${2:-}" ;;
stop) stop "${1:-}" ;;
status) status "${1:-}" ;;
serve) serve "${1:-}" "${2:-}" ;;
check-embedder) check_embedder "${1:-}" ;;
check-nomic) check_nomic "${1:-}" ;;
check-reranker) check_reranker "${1:-}" ;;
*)
    echo "usage: $0 install [MODEL…] | start MODEL PORT | stop PORT | status PORT | serve MODEL PORT | check-embedder PORT | check-nomic PORT | check-reranker PORT" >&2
    exit 2
    ;;
esac
