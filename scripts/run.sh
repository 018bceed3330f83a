#!/usr/bin/env bash
# `make run`: starts bor (release build) on the local PostgreSQL, with the sample
# knowledge base of docs/sample-kb imported, and prints where to go.
#
# When no LLM server is configured (BOR_LLM_BASE_URL unset in the environment and in
# .env), the local models serve bor while it runs (scripts/llm-server.sh, each in a
# session of its own, so a Ctrl-C reaches bor only: bor has its grace to end the turns
# in flight, then the servers are stopped):
#   LOCAL_MODEL=qwen (default)  Qwen2.5-Coder-0.5B-Instruct for chat on 127.0.0.1:18089,
#                               all-MiniLM-L6-v2 for embeddings on 127.0.0.1:18088
#   LOCAL_MODEL=smollm2         SmolLM2-135M-Instruct for both on 127.0.0.1:18089
#   LOCAL_EMBED=nomic           nomic-embed-text-v1.5 for embeddings on 127.0.0.1:18088
#                               instead, with either (768 dimensions: the knowledge
#                               base is embedded anew before bor serves; README.md)
# and, when asked for, a re-ranker (off by default: docs/LOCAL_MODELS.md, "Re-ranking"):
#   LOCAL_RERANK=nanoranker     nanoranker 1.2's network on 127.0.0.1:18087
#   LOCAL_RERANK=ms-marco       your own copy of ms-marco-MiniLM-L6-v2's ONNX export
#                               (CROSS_ENCODER_DIR: its folder) on 127.0.0.1:18087
# and their settings (scripts/models/NAME.env, the embedder's first) apply where you
# have not set the variable yourself. They are also written to .llm-server/bor.env, which `bor` on the PATH (a
# link to scripts/bor beside cargo) reads, so that `bor import` in another terminal
# reaches the same servers and models.
#
# Without BOR_ADMIN_TOKEN in the environment or .env, a token is generated once, kept in
# .admin-token (gitignored, readable by you only) and printed with the admin page's
# address. A BOR_ADMIN_TOKEN you set (even empty, which keeps the admin API off) is used
# as it is.
#
# With accounts (BOR_AUTH unset or `accounts`) and nobody to sign in yet, the first admin
# is made (`bor user add admin --admin`); its generated password is kept in
# .first-admin (gitignored, readable by you only) and printed with the sign-in address
# until you remove that file.
set -euo pipefail
cd "$(dirname "$0")/.."

LOCAL_MODEL=${LOCAL_MODEL:-qwen}
LOCAL_EMBED=${LOCAL_EMBED:-}
LOCAL_RERANK=${LOCAL_RERANK:-}
CHAT_PORT=18089
EMBED_PORT=18088
RERANK_PORT=18087
SETTINGS_FILE=.llm-server/bor.env
ADMIN_TOKEN_FILE=.admin-token
FIRST_ADMIN_FILE=.first-admin
FIRST_ADMIN=admin
BOR=target/release/bor

# The servers of each local setup; its other settings are in scripts/models/NAME.env.
case "$LOCAL_MODEL" in
qwen)
    SERVERS=("${LOCAL_EMBED:-minilm} $EMBED_PORT" "qwen $CHAT_PORT")
    URLS=("BOR_LLM_BASE_URL=http://127.0.0.1:$CHAT_PORT/v1" "BOR_LLM_EMBED_BASE_URL=http://127.0.0.1:$EMBED_PORT/v1")
    ;;
smollm2)
    SERVERS=("smollm2 $CHAT_PORT")
    URLS=("BOR_LLM_BASE_URL=http://127.0.0.1:$CHAT_PORT/v1")
    if [ -n "$LOCAL_EMBED" ]; then
        SERVERS+=("$LOCAL_EMBED $EMBED_PORT")
        URLS+=("BOR_LLM_EMBED_BASE_URL=http://127.0.0.1:$EMBED_PORT/v1")
    fi
    ;;
*)
    echo "run: LOCAL_MODEL must be qwen or smollm2, not '$LOCAL_MODEL'" >&2
    exit 2
    ;;
esac
case "$LOCAL_RERANK" in
"") ;;
nanoranker | ms-marco)
    SERVERS+=("$LOCAL_RERANK $RERANK_PORT")
    URLS+=("BOR_RERANK_BASE_URL=http://127.0.0.1:$RERANK_PORT/v1")
    ;;
*)
    echo "run: LOCAL_RERANK must be nanoranker, ms-marco or empty, not '$LOCAL_RERANK'" >&2
    exit 2
    ;;
esac
# The embedder's own settings (its model name, threshold) come first, and the first
# value of each variable is the one kept.
EMBED_SETTINGS=()
case "$LOCAL_EMBED" in
"" | minilm) ;;
nomic) EMBED_SETTINGS=(scripts/models/nomic.env) ;;
*)
    echo "run: LOCAL_EMBED must be minilm or nomic, not '$LOCAL_EMBED'" >&2
    exit 2
    ;;
esac
mapfile -t LOCAL_SETTINGS < <({
    printf '%s\n' "${URLS[@]}"
    grep -hE '^BOR_[A-Z_]+=' "${EMBED_SETTINGS[@]}" "scripts/models/$LOCAL_MODEL.env"
} | awk -F= '!seen[$1]++')

say() { echo "run: $*" >&2; }

# Whether variable $1 has a value in the environment or in .env.
configured() {
    [ -n "${!1:-}" ] ||
        grep -Eqs "^[[:space:]]*(export[[:space:]]+)?$1[[:space:]]*=[[:space:]]*[\"']?[^[:space:]#\"']" .env
}

# Whether variable $1 is set at all (an empty value included) in the environment or .env.
present() {
    [ -n "${!1+set}" ] || grep -Eqs "^[[:space:]]*(export[[:space:]]+)?$1[[:space:]]*=" .env
}

# The release build, with a line every minute: its last minutes compile bor's own
# crates with optimisations, and cargo prints nothing new meanwhile.
build_release() {
    local started=$SECONDS pid elapsed
    say "building bor (release; the first build takes 5 to 15 minutes, later ones seconds)"
    cargo build --release --bin bor &
    pid=$!
    while ! wait_briefly "$pid" 60; do
        elapsed=$((SECONDS - started))
        say "still building, $((elapsed / 60))m$(printf %02d $((elapsed % 60)))s: cargo compiles bor-actors and bor itself with optimisations last, printing nothing new for minutes"
    done
    wait "$pid"
}

# Waits up to $2 seconds for process $1; true once it has ended.
wait_briefly() {
    local waited=0
    while kill -0 "$1" 2>/dev/null; do
        ((waited >= $2)) && return 1
        sleep 1
        waited=$((waited + 1))
    done
    return 0
}

start_local_models() {
    say "BOR_LLM_BASE_URL is not set: starting the local models ($LOCAL_MODEL${LOCAL_EMBED:+, embeddings: $LOCAL_EMBED})"
    trap 'for s in "${SERVERS[@]}"; do scripts/llm-server.sh stop "${s#* }"; done' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    scripts/llm-server.sh install $(for s in "${SERVERS[@]}"; do echo "${s% *}"; done)
    for server in "${SERVERS[@]}"; do
        scripts/llm-server.sh start $server
    done
    mkdir -p "$(dirname "$SETTINGS_FILE")"
    printf '%s\n' "${LOCAL_SETTINGS[@]}" >"$SETTINGS_FILE"
    local setting name
    for setting in "${LOCAL_SETTINGS[@]}"; do
        name=${setting%%=*}
        configured "$name" || export "$setting"
    done
}

# A token for the admin page when none is configured; printed with the page's address.
admin_token() {
    if present BOR_ADMIN_TOKEN || present BOR_ADMIN_TOKEN_FILE; then
        ADMIN_NOTE="admin page: $ADDRESS/admin (with your BOR_ADMIN_TOKEN)"
        return
    fi
    if [ ! -s "$ADMIN_TOKEN_FILE" ]; then
        (umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$ADMIN_TOKEN_FILE")
        say "generated an admin token in $ADMIN_TOKEN_FILE (kept for later runs)"
    fi
    BOR_ADMIN_TOKEN=$(cat "$ADMIN_TOKEN_FILE")
    export BOR_ADMIN_TOKEN
    ADMIN_NOTE="admin page: $ADDRESS/admin#token=$BOR_ADMIN_TOKEN (the token is in $ADMIN_TOKEN_FILE)"
}

# With accounts and no user yet, the first admin; how to sign in goes into SIGN_IN_NOTE.
first_admin() {
    SIGN_IN_NOTE=""
    local mode=${BOR_AUTH:-}
    if [ -z "$mode" ] && [ -f .env ]; then
        mode=$(sed -nE 's/^[[:space:]]*(export[[:space:]]+)?BOR_AUTH[[:space:]]*=[[:space:]]*"?([^"#[:space:]]+).*/\2/p' .env | tail -n 1)
    fi
    [ "${mode,,}" = off ] && return
    local users made password
    users=$("$BOR" user list)
    if [ -z "$users" ]; then
        made=$("$BOR" user add "$FIRST_ADMIN" --admin)
        password=$(sed -n 's/^password: //p' <<<"$made")
        (umask 077 && printf '%s %s\n' "$FIRST_ADMIN" "$password" >"$FIRST_ADMIN_FILE")
        say "made the first admin, $FIRST_ADMIN (the password is kept in $FIRST_ADMIN_FILE until you remove it)"
    fi
    if [ -s "$FIRST_ADMIN_FILE" ]; then
        read -r name password <"$FIRST_ADMIN_FILE"
        SIGN_IN_NOTE="sign in at $ADDRESS/login as $name, password $password (change it on the account page, /account; then remove $FIRST_ADMIN_FILE)"
    else
        SIGN_IN_NOTE="sign in at $ADDRESS/login"
    fi
}

# `bor` on the PATH: a link to scripts/bor beside cargo (~/.cargo/bin with rustup),
# which is on the PATH of whoever can run `make run`.
link_bor_command() {
    local bin link
    bin=$(dirname "$(command -v cargo)")
    link=$bin/bor
    if [ -e "$link" ] && [ ! -L "$link" ]; then
        say "$link is another program; this checkout's bor runs as $PWD/scripts/bor"
    elif [ -w "$bin" ]; then
        ln -sfn "$PWD/scripts/bor" "$link"
    else
        say "cannot write to $bin; this checkout's bor runs as $PWD/scripts/bor"
    fi
}

say "making sure PostgreSQL runs"
scripts/ensure-postgres.sh
say "making sure OCR can read scanned pages (Tesseract, Poppler)"
scripts/ensure-ocr.sh
build_release
if configured BOR_LLM_BASE_URL; then
    rm -f "$SETTINGS_FILE"
else
    start_local_models
fi
# BOR_BIND from the environment, else from .env when there is one (a fresh clone has none).
bind=${BOR_BIND:-}
if [ -z "$bind" ] && [ -f .env ]; then
    bind=$(sed -nE 's/^[[:space:]]*(export[[:space:]]+)?BOR_BIND[[:space:]]*=[[:space:]]*"?([^"#[:space:]]+).*/\2/p' .env | tail -n 1)
fi
ADDRESS=http://${bind:-127.0.0.1:8000}
admin_token
link_bor_command

# The sample knowledge base, imported on every start so that a first question finds
# something (unchanged files are left as they are); then every document embedded with
# another model is embedded anew. bor still starts if this fails.
say "importing the sample knowledge base (docs/sample-kb)"
"$BOR" import docs/sample-kb || say "the sample knowledge base could not be imported; bor starts without it"
"$BOR" reembed || say "documents embedded with another model could not be embedded anew; run \`bor reembed\` later"

first_admin
say "bor: $ADDRESS — $ADMIN_NOTE"
[ -n "$SIGN_IN_NOTE" ] && say "$SIGN_IN_NOTE"
say "in another terminal: bor import PATH… adds your documents; Ctrl-C stops bor (turns in flight get BOR_SHUTDOWN_GRACE to finish) and the local models"
"$BOR" serve
