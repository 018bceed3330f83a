#!/usr/bin/env bash
# Two instances of the release binary on one database behind nginx with TLS (the site
# file of deploy/nginx.conf, a certificate made here): a session made on one instance
# used on the other, an upload through the proxy, a turn's frames passed on while it
# runs, keep-alives through a proxy read timeout shorter than the model's silences, the
# client's address (not the proxy's, not one the client wrote) in the audit trail, and
# one instance killed mid-turn with the other serving on.
source "$(dirname "$0")/lib.sh"

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || fail "nginx is not installed (scripts/ensure-nginx.sh installs it)"

unpack_release
fresh_database main database
start_mock_llm 0
password=$(make_admin "$database")
port_a=$(free_port)
port_b=$(free_port)
proxy_port=$(free_port)
base=https://localhost:$proxy_port

# A self-signed certificate for localhost, trusted by this drill's clients only.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$WORK/privkey.pem" -out "$WORK/fullchain.pem" >"$WORK/openssl.log" 2>&1 ||
    fail "openssl could not make a certificate"

# The documented site file with this drill's addresses, the instance that answered named
# in a header for the drill.
sed -e "s|127.0.0.1:8001|127.0.0.1:$port_a|; s|127.0.0.1:8002|127.0.0.1:$port_b|" \
    -e "s|listen 443 ssl http2;|listen 127.0.0.1:$proxy_port ssl http2;|" \
    -e "s|listen 80;|listen 127.0.0.1:$(free_port);|" \
    -e "s|bor.example.org|localhost|g" \
    -e "s|/etc/ssl/bor/|$WORK/|" \
    -e "s|proxy_read_timeout 60s;|proxy_read_timeout 60s; add_header X-Bor-Upstream \$upstream_addr always;|" \
    "$ROOT/deploy/nginx.conf" >"$WORK/bor-site.conf"
grep -q "X-Bor-Upstream" "$WORK/bor-site.conf" || fail "deploy/nginx.conf no longer has the lines this drill adapts"
mkdir -p "$WORK/nginx"
cat >"$WORK/nginx.conf" <<CONF
$([ "$(id -u)" -eq 0 ] && echo "user root;")
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log notice;
daemon off;
events { worker_connections 256; }
http {
    access_log $WORK/nginx-access.log;
    client_body_temp_path $WORK/nginx/body;
    proxy_temp_path $WORK/nginx/proxy;
    fastcgi_temp_path $WORK/nginx/fastcgi;
    uwsgi_temp_path $WORK/nginx/uwsgi;
    scgi_temp_path $WORK/nginx/scgi;
    include $WORK/bor-site.conf;
}
CONF
"$NGINX" -t -p "$WORK/nginx" -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log" >"$WORK/nginx-test.log" 2>&1 ||
    fail "nginx -t: $(cat "$WORK/nginx-test.log")"
"$NGINX" -p "$WORK/nginx" -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log" &
STARTED+=($!)
nginx_pid=$!

instance_vars=(BOR_PUBLIC_URL="$base" BOR_SSE_KEEPALIVE=1 BOR_LLM_RETRIES=0 BOR_TRUSTED_PROXIES=127.0.0.1/32)
start_instance a "$port_a" "$database" "${instance_vars[@]}" BOR_INSTANCE_URL="http://127.0.0.1:$port_a"
start_instance b "$port_b" "$database" "${instance_vars[@]}" BOR_INSTANCE_URL="http://127.0.0.1:$port_b"
wait_for "$base/api/health" 2>/dev/null || true
curl -fs --cacert "$WORK/fullchain.pem" "$base/api/health" | grep -q '"status":"ok"' ||
    fail "/api/health is not served through the proxy"
say "nginx on $base in front of instances a (:$port_a) and b (:$port_b), one database"

# Signed in on a, used on b: the session is the database's, not an instance's.
session=$(curl -fs -D - -o /dev/null -H 'Content-Type: application/json' -H "Origin: $base" \
    -d "{\"username\":\"admin\",\"password\":\"$password\"}" "http://127.0.0.1:$port_a/api/auth/login" |
    sed -n 's/^[Ss]et-[Cc]ookie: \(bor_session=[^;]*\).*/\1/p' | tr -d '\r')
[ -n "$session" ] || fail "signing in on a gave no session cookie"
curl -fs -H "Cookie: $session" "http://127.0.0.1:$port_b/api/auth/me" | grep -q '"role":"admin"' ||
    fail "the session made on a is not known on b"
say "signed in on a, the session works on b"

proxied() { curl -fsS --cacert "$WORK/fullchain.pem" -H "Cookie: $session" -H "Origin: $base" "$@"; }

# The client's address: the client connects to nginx from 127.0.0.2 and writes an
# X-Forwarded-For of its own; nginx (from 127.0.0.1, in BOR_TRUSTED_PROXIES) appends the
# address it saw. The failed sign-in is audited, and logged, from 127.0.0.2.
status=$(curl -sS -4 --interface 127.0.0.2 --cacert "$WORK/fullchain.pem" -o /dev/null -w '%{http_code}' \
    -H 'X-Forwarded-For: 192.0.2.66' -H 'Content-Type: application/json' -H "Origin: $base" \
    -d '{"username":"admin","password":"not the password at all"}' "$base/api/auth/login")
[ "$status" = 401 ] || fail "a wrong password through the proxy answered $status, not 401"
audited=$(proxied "$base/api/admin/audit?action=sign_in_failed" | jq -r '.entries[0].address')
[ "$audited" = 127.0.0.2 ] ||
    fail "the failed sign-in through the proxy is audited from $audited, not the client's 127.0.0.2"
grep -q 'client=127.0.0.2' "$WORK/a.log" "$WORK/b.log" || fail "the request log does not name the client 127.0.0.2"
say "a failed sign-in through the proxy is audited and logged from the client's address ($audited), not the proxy's or the one the client wrote"

# An upload larger than nginx's default body limit (1 MiB), through the proxy.
python3 - "$WORK/handbook.md" <<'PY'
import sys
lines = ["# Lighthouse handbook", ""]
paragraph = ("The keeper lights the lamp at dusk and trims the wick at midnight; "
             "the lighthouse log records every ship that passes the northern reef. ")
section = 0
while sum(len(line) + 1 for line in lines) < 1_300_000:
    section += 1
    lines += [f"## Watch {section}", "", paragraph * 12, ""]
open(sys.argv[1], "w").write("\n".join(lines))
PY
upload=$(proxied -F "file=@$WORK/handbook.md;type=text/markdown" "$base/api/admin/documents") ||
    fail "the upload through the proxy failed"
grep -q '"status":"imported"' <<<"$upload" || fail "the upload was not imported: $upload"
say "uploaded $(($(stat -c %s "$WORK/handbook.md") / 1024)) KiB through the proxy: imported"

# Frames pass through while the turn runs: the first delta is read, then the turn is
# stopped (through the proxy, whichever instance takes the stop); its done says stopped.
stream() { python3 "$ROOT/tests/deploy/stream.py" "$base" "$WORK/fullchain.pem" "$session" "$@"; }
question='What does the keeper do at dusk in the lighthouse?'
slow=$'\nMOCK {"reply":"The keeper lights the lamp at dusk and trims the wick at midnight, and records every ship in the log.","token_delay_ms":300}'
stop="curl -fsS --cacert '$WORK/fullchain.pem' -H 'Cookie: $session' -H 'Origin: $base' -X POST \"$base/api/turns/\$TURN_ID/stop\" >/dev/null"
summary=$(stream "$question$slow" "$stop")
jq -e '.status == 200 and .terminal == "done" and .stopped and .command_ran' <<<"$summary" >/dev/null ||
    fail "the first frame did not come through before the turn ended: $summary"
say "streamed: the first delta came through the proxy while the turn ran (stopped then): $(jq -c '{upstream, events: (.events | length), text}' <<<"$summary")"

# Silences of 2.5 s from the model, the proxy's read timeout cut to 2 s (nginx reloaded):
# bor's keep-alives (1 s) hold the stream, which ends with its done frame.
sed -i 's|proxy_read_timeout 60s;|proxy_read_timeout 2s;|' "$WORK/bor-site.conf"
kill -HUP "$nginx_pid"
until grep -q "start worker process" <(sed -n "/reconfiguring/,\$p" "$WORK/nginx-error.log"); do sleep 0.2; done
silent=$'\nMOCK {"reply":"Dusk, midnight, dawn.","token_delay_ms":2500}'
summary=$(stream "$question$silent")
jq -e '.terminal == "done" and (.stopped | not) and .keepalives_between_deltas >= 2 and .text == "Dusk, midnight, dawn."' <<<"$summary" >/dev/null ||
    fail "the stream did not outlast the proxy's read timeout: $summary"
say "keep-alives: $(jq .keepalives <<<"$summary") comments held a stream with 2.5 s silences through a 2 s proxy read timeout"

# One instance killed (SIGKILL) mid-turn: the client's stream is cut without a terminal
# frame; the other instance serves the turn's record and new turns.
kill_upstream="case \"\$UPSTREAM\" in *:$port_a) kill -9 $PID_a ;; *:$port_b) kill -9 $PID_b ;; esac"
summary=$(stream "$question$slow" "$kill_upstream")
jq -e '.status == 200 and .command_ran and .terminal == null and .cut' <<<"$summary" >/dev/null ||
    fail "the stream of the killed instance did not end as cut: $summary"
turn_id=$(jq -r .turn_id <<<"$summary")
killed=$(jq -r .upstream <<<"$summary")
say "killed the instance at $killed mid-turn: the client's stream was cut without a terminal frame ($(jq -r '.cut_by // "end of body"' <<<"$summary"))"
followed=$(curl -sS --cacert "$WORK/fullchain.pem" -H "Cookie: $session" --max-time 30 \
    -w '\nstatus %{http_code}' "$base/api/turns/$turn_id/events" || true)
say "reading that turn again through the proxy: $(tr '\n' ' ' <<<"$followed" | cut -c1-300)"
for attempt in 1 2 3; do
    summary=$(stream "$question"$'\nMOCK {"reply":"Still here."}')
    jq -e '.terminal == "done" and .text == "Still here."' <<<"$summary" >/dev/null ||
        fail "a turn after the kill failed: $summary"
    [ "$(jq -r .upstream <<<"$summary")" != "$killed" ] || fail "a turn went to the dead instance: $summary"
done
proxied "$base/api/conversations" | jq -e 'length >= 3' >/dev/null || fail "the conversations are not listed after the kill"
say "after the kill, three new turns answered by the other instance; conversations listed"
say "passed"
