#!/usr/bin/env bash
# Builds the release archive: dist/bor-VERSION-ARCH-linux-gnu.tar.gz with the release
# `bor` binary (stripped; pages and migrations inside it), the systemd unit, the
# configuration template and INSTALL.md from deploy/, and its .sha256 beside it.
# VERSION is the workspace's version in Cargo.toml. Prints the archive's path.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
[ -n "$version" ] || { echo "dist: no version in Cargo.toml" >&2; exit 1; }
name="bor-$version-$(uname -m)-linux-gnu"

cargo build --release --locked --bin bor >&2

stage=target/dist/$name
rm -rf "$stage"
mkdir -p "$stage" dist
install -m 755 target/release/bor "$stage/bor"
strip "$stage/bor"
install -m 644 deploy/bor.service deploy/bor.env deploy/INSTALL.md "$stage/"
archive=dist/$name.tar.gz
# Owned by root, in name order, dated by the last commit: the same sources make the
# same archive.
tar -C target/dist --owner=0 --group=0 --numeric-owner --sort=name \
    --mtime="@$(git log -1 --format=%ct 2>/dev/null || echo 0)" \
    -czf "$archive" "$name"
(cd dist && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "$archive"
