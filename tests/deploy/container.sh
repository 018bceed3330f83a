#!/usr/bin/env bash
# The container image's runtime stage (Containerfile, `runtime-base`) with the release
# archive's binary: built, run as user bor with the database URL as a secret file,
# healthy by its HEALTHCHECK, serving the pages; no compiler inside. Needs a Docker
# daemon and the stage's base image (docker.io/library/debian:bookworm-slim) pulled or
# imported; without a daemon it says so and passes. The build stage (Rust) is the
# release build the archive already holds.
source "$(dirname "$0")/lib.sh"

if ! docker info >/dev/null 2>&1; then
    say "skipped: no Docker daemon answers"
    exit 0
fi
unpack_release
fresh_database main database
tag=bor-drill-$$
mkdir -p "$WORK/base" "$WORK/image"
sed -n '/AS runtime-base$/,/^# The image: the runtime/p' "$ROOT/Containerfile" | sed '$d' >"$WORK/base/Containerfile"
grep -q '^HEALTHCHECK' "$WORK/base/Containerfile" || fail "the Containerfile has no runtime-base stage with a HEALTHCHECK"
docker build --network host -q -t "$tag-base" -f "$WORK/base/Containerfile" "$WORK/base" >"$WORK/build.log" 2>&1 ||
    fail "building the runtime stage failed: $(tail -n 5 "$WORK/build.log")"
cp "$BOR" "$WORK/image/bor"
printf 'FROM %s\nCOPY bor /usr/local/bin/bor\n' "$tag-base" >"$WORK/image/Containerfile"
docker build -q -t "$tag" -f "$WORK/image/Containerfile" "$WORK/image" >>"$WORK/build.log" 2>&1 ||
    fail "adding the binary failed: $(tail -n 5 "$WORK/build.log")"
size=$(docker image inspect --format '{{.Size}}' "$tag")
say "built the runtime stage with the release binary: $((size / 1000000)) MB"

docker run --rm --entrypoint sh "$tag" -c 'command -v cc || command -v gcc || command -v rustc || command -v cargo' &&
    fail "the runtime stage holds a compiler"
[ "$(docker run --rm --entrypoint id "$tag" -u)" != 0 ] || fail "the image runs as root"

printf '%s\n' "$database" >"$WORK/database-url"
chmod 644 "$WORK/database-url"
port=$(free_port)
container=$(docker run -d --network host --name "$tag" \
    -e BOR_BIND="127.0.0.1:$port" -e BOR_DATABASE_URL_FILE=/run/secrets/database-url -e BOR_OCR=off \
    -v "$WORK/database-url:/run/secrets/database-url:ro" "$tag")
trap 'docker rm -f "$container" >/dev/null 2>&1; docker rmi "$tag" "$tag-base" >/dev/null 2>&1; cleanup' EXIT
tries=0
until [ "$(docker inspect --format '{{.State.Health.Status}}' "$container")" = healthy ]; do
    tries=$((tries + 1))
    [ $tries -lt 180 ] || fail "the container is not healthy after 90 s: $(docker logs --tail 20 "$container" 2>&1)"
    sleep 0.5
done
curl -fs "http://127.0.0.1:$port/login" | grep -qi '<html' || fail "the container does not serve the sign-in page"
say "the container runs as $(docker exec "$container" id -un), reads its database URL from a secret file, is healthy and serves the pages"
say "passed"
