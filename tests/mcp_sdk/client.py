"""bor's /mcp through the official MCP Python SDK, one scenario per run.

Usage: client.py BASE_URL SCENARIO [KEY]. Prints one JSON object: what the SDK made of
bor's answers (the Rust side, tests/mcp_sdk/main.rs, checks it). In the `oauth`
scenario KEY is `USERNAME:PASSWORD` of the person who signs in on bor's page and allows
the client.
"""

import asyncio
import html
import json
import re
import sys
import time
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

REDIRECT_URI = "http://127.0.0.1:33418/callback"


def dumped(model):
    """A result as it came over the wire (camelCase keys)."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def connect_and_call(url, key):
    """Connects (the SDK's own negotiation), lists the tools and calls each one."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            tools = await client.list_tools()
            searched = await client.call_tool(
                "search", {"query": "When is the salary band review?", "top_k": 5}
            )
            results = (searched.structured_content or {}).get("results", [])
            fetched = None
            if results:
                fetched = await client.call_tool("fetch", {"id": results[0]["id"]})
            listed = await client.call_tool("list_collections", {})
            in_hr = await client.call_tool(
                "search", {"query": "salary", "collections": ["hr"]}
            )
            return {
                "protocol_version": client.protocol_version,
                "server": dumped(client.server_info) if client.server_info else None,
                "tools": [dumped(tool) for tool in tools.tools],
                "search": dumped(searched),
                "fetch": dumped(fetched) if fetched else None,
                "list_collections": dumped(listed),
                "search_in_hr": dumped(in_hr),
            }


async def refused(url, key):
    """Connects with a wrong key or none: what the SDK raises."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                await client.list_tools()
    except BaseException as error:  # an ExceptionGroup from the transport's task group
        return {"refused": True, "error": repr(error)}
    return {"refused": False}


class MemoryStorage:
    """The SDK's token storage, in memory."""

    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


class Person:
    """The person at the browser, headless: signs in on bor, reads the consent page and
    allows the client, then hands the code to the SDK as its callback would."""

    def __init__(self, base, username, password):
        self.base = base
        self.username = username
        self.password = password
        self.consent_page = None
        self.result = None

    async def open(self, authorization_url):
        async with httpx2.AsyncClient(timeout=30, follow_redirects=False) as browser:
            login = await browser.get(authorization_url)
            assert login.status_code == 302, login.text
            signed_in = await browser.post(
                f"{self.base}/api/auth/login",
                json={"username": self.username, "password": self.password},
            )
            assert signed_in.status_code == 200, signed_in.text
            page = await browser.get(authorization_url)
            assert page.status_code == 200, page.text
            self.consent_page = page.text
            fields = {
                html.unescape(name): html.unescape(value)
                for name, value in re.findall(
                    r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page.text
                )
            }
            fields["decision"] = "allow"
            allowed = await browser.post(
                f"{self.base}/oauth/authorize",
                data=fields,
                headers={"Origin": self.base},
            )
            assert allowed.status_code == 302, allowed.text
            location = allowed.headers["location"]
            assert location.startswith(REDIRECT_URI), location
            query = parse_qs(urlparse(location).query)
            self.result = AuthorizationCodeResult(
                code=query["code"][0], state=query.get("state", [None])[0]
            )

    async def callback(self):
        return self.result


async def oauth(url, credentials):
    """The whole OAuth flow the SDK runs by itself after bor's 401: discovery,
    registration, the consent (a person signed in), the code exchange; then a refresh,
    and the spent refresh token tried again."""
    base = url.removesuffix("/mcp")
    username, password = credentials.split(":", 1)
    person = Person(base, username, password)
    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="SDK test client",
            redirect_uris=[REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=person.open,
        callback_handler=person.callback,
    )
    async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            listed = await client.call_tool("list_collections", {})
            first = storage.tokens
            # The access token's hour, passed: the SDK refreshes before its next call.
            provider.context.token_expiry_time = time.time() - 1
            searched = await client.call_tool("search", {"query": "salary band", "top_k": 5})
            second = storage.tokens
    async with httpx2.AsyncClient(timeout=30) as raw:
        replayed = await raw.post(
            f"{base}/oauth/token",
            data={
                "grant_type": "refresh_token",
                "refresh_token": first.refresh_token,
                "client_id": storage.client_info.client_id,
            },
        )
        after = await raw.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"Authorization": f"Bearer {second.access_token}"},
        )
    return {
        "consent_page": person.consent_page,
        "client_id": storage.client_info.client_id,
        "first_access": first.access_token,
        "second_access": second.access_token,
        "refreshed": first.access_token != second.access_token
        and first.refresh_token != second.refresh_token,
        "list_collections": dumped(listed),
        "search": dumped(searched),
        "replayed": {"status": replayed.status_code, "body": replayed.json()},
        "after_replay": after.status_code,
    }


async def main():
    base, scenario = sys.argv[1], sys.argv[2]
    key = sys.argv[3] if len(sys.argv) > 3 else ""
    url = f"{base}/mcp"
    scenarios = {"tools": connect_and_call, "refused": refused, "oauth": oauth}
    print(json.dumps(await scenarios[scenario](url, key)))


asyncio.run(main())
