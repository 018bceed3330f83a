#!/usr/bin/env python3
"""Reads one chat turn's event stream as a browser would, through the proxy.

Usage: stream.py BASE CAFILE COOKIE MESSAGE [COMMAND]

POSTs MESSAGE to BASE/api/chat with the session cookie and the public origin, reads the
stream line by line as it arrives, and prints one JSON summary: the status, the turn id,
the instance that served it (the proxy's X-Bor-Upstream), the events in order, the
keep-alive comments, and whether the stream ended with a terminal frame or was cut.
COMMAND, when given, runs (sh -c) as soon as the first `delta` frame has been read, the
stream still open, with TURN_ID and UPSTREAM in its environment.
"""

import http.client
import json
import os
import ssl
import subprocess
import sys
import urllib.parse


def main():
    base, cafile, cookie, message = sys.argv[1:5]
    command = sys.argv[5] if len(sys.argv) > 5 else None
    url = urllib.parse.urlsplit(base)
    context = ssl.create_default_context(cafile=cafile)
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=120)
    body = json.dumps({"message": message})
    conn.request(
        "POST",
        "/api/chat",
        body=body,
        headers={
            "Content-Type": "application/json",
            "Cookie": cookie,
            "Origin": base,
        },
    )
    response = conn.getresponse()
    summary = {
        "status": response.status,
        "turn_id": response.getheader("X-Turn-Id"),
        "upstream": response.getheader("X-Bor-Upstream"),
        "events": [],
        "keepalives": 0,
        "keepalives_between_deltas": 0,
        "terminal": None,
        "stopped": False,
        "command_ran": False,
        "cut": False,
        "text": "",
    }
    event = None
    try:
        while True:
            line = response.readline()
            if not line:
                break
            line = line.decode("utf-8").rstrip("\r\n")
            if line.startswith(": keep-alive"):
                summary["keepalives"] += 1
                if "delta" in summary["events"]:
                    summary["keepalives_between_deltas"] += 1
            elif line.startswith("event: "):
                event = line[len("event: "):]
            elif line.startswith("data: ") and event:
                data = json.loads(line[len("data: "):])
                summary["events"].append(event)
                if event == "delta":
                    summary["text"] += data.get("text", "")
                    if command and not summary["command_ran"]:
                        summary["command_ran"] = True
                        env = dict(os.environ, TURN_ID=summary["turn_id"] or "",
                                   UPSTREAM=summary["upstream"] or "")
                        subprocess.run(["sh", "-c", command], env=env, check=True)
                if event in ("done", "error"):
                    summary["terminal"] = event
                    summary["stopped"] = bool(data.get("stopped"))
                    if event == "error":
                        summary["error"] = data.get("code")
                    break
                event = None
    except (http.client.IncompleteRead, ConnectionError, ssl.SSLError) as error:
        summary["cut"] = True
        summary["cut_by"] = type(error).__name__
    if summary["terminal"] is None:
        summary["cut"] = True
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
