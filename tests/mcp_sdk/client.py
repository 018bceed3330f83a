"""bor's /mcp through the official MCP Python SDK, one scenario per run.

Usage: client.py BASE_URL SCENARIO [KEY]. Prints one JSON object: what the SDK made of
bor's answers (the Rust side, tests/mcp_sdk/main.rs, checks it).
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


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


async def main():
    base, scenario = sys.argv[1], sys.argv[2]
    key = sys.argv[3] if len(sys.argv) > 3 else ""
    url = f"{base}/mcp"
    scenarios = {"tools": connect_and_call, "refused": refused}
    print(json.dumps(await scenarios[scenario](url, key)))


asyncio.run(main())
