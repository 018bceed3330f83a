#!/usr/bin/env bash
# Builds the previous release's `bor` for the upgrade drill (tests/deploy/upgrade.sh)
# and prints its path. The previous release is main as it was just before the newest
# change to migrations/: the first parent of the newest commit on the first-parent line
# that changed the folder (PREVIOUS_RELEASE=<commit> names another). Its source is
# exported (git archive) to target/previous-release/src and built there
# with the dev profile into target/previous-release/target: the first build takes as
# long as a first `cargo build`, later ones only rebuild what changed. Never into the
# project's own target folder: the two builds of the package `bor` share their
# artifacts' names there, and cargo would then take the previous release's for this
# one's. Prints the binary's path, then the commit, on two lines.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

fail() {
    echo "previous-release: $*" >&2
    exit 1
}

git rev-parse --git-dir >/dev/null 2>&1 || fail "needs the git history (this is no git checkout)"
commit=${PREVIOUS_RELEASE:-}
if [ -z "$commit" ]; then
    changed=$(git log -1 --first-parent --format=%H -- migrations/)
    [ -n "$changed" ] || fail "no commit changed migrations/"
    git rev-parse -q --verify "$changed^1" >/dev/null ||
        fail "the newest change to migrations/ ($changed) has no parent: a shallow clone? (git fetch --unshallow)"
    commit=$(git rev-parse "$changed^1")
fi
commit=$(git rev-parse --verify "$commit^{commit}") || fail "no such commit: $PREVIOUS_RELEASE"

folder=$root/target/previous-release
source=$folder/src
mkdir -p "$folder"
if [ "$(cat "$folder/src.commit" 2>/dev/null)" != "$commit" ]; then
    rm -rf "$source" "$folder/src.commit"
    mkdir -p "$source"
    git archive "$commit" | tar -x -C "$source"
    echo "$commit" >"$folder/src.commit"
fi
export CARGO_TARGET_DIR=$folder/target
(cd "$source" && cargo build -q --bin bor -p bor >&2) || fail "building $commit failed"
binary=$folder/bor-$(git rev-parse --short "$commit")
cp "$CARGO_TARGET_DIR/debug/bor" "$binary"
echo "$binary"
echo "$commit"
