// bor's /mcp through the official MCP TypeScript SDK (@modelcontextprotocol/sdk), one
// scenario per run, as client.py does with the Python SDK and printing the same JSON.
//
// Usage: node client.mjs BASE_URL SCENARIO [KEY].

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [base, scenario, key] = process.argv.slice(2);

/** A client connected to bor's /mcp with `key` (none when empty). */
async function connected() {
  const headers = key ? { Authorization: `Bearer ${key}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers },
  });
  const client = new Client({ name: "bor-tests", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** Connects, lists the tools and calls each one. */
async function connectAndCall() {
  const { client, transport } = await connected();
  const tools = await client.listTools();
  const search = await client.callTool({
    name: "search",
    arguments: { query: "When is the salary band review?", top_k: 5 },
  });
  const results = search.structuredContent?.results ?? [];
  const fetched = results.length
    ? await client.callTool({ name: "fetch", arguments: { id: results[0].id } })
    : null;
  const listed = await client.callTool({ name: "list_collections", arguments: {} });
  const inHr = await client.callTool({
    name: "search",
    arguments: { query: "salary", collections: ["hr"] },
  });
  const seen = {
    protocol_version: transport.protocolVersion,
    server: client.getServerVersion(),
    tools: tools.tools,
    search,
    fetch: fetched,
    list_collections: listed,
    search_in_hr: inHr,
  };
  await client.close();
  return seen;
}

/** Connects with a wrong key or none: what the SDK throws. */
async function refused() {
  try {
    const { client } = await connected();
    await client.listTools();
    await client.close();
  } catch (error) {
    return { refused: true, error: `${error.name}: ${error.message}` };
  }
  return { refused: false };
}

const scenarios = { tools: connectAndCall, refused };
console.log(JSON.stringify(await scenarios[scenario]()));
