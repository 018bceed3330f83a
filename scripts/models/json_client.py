"""The client side of the local model servers' checks (check_embedder.py, check_reranker.py)."""

import json
import urllib.error
import urllib.request


def post_raw(url: str, body: bytes) -> tuple[int, dict]:
    """The status and JSON body of a POST, whatever the status."""
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)
