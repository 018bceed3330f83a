// bor's /mcp through the official MCP TypeScript SDK (@modelcontextprotocol/sdk), one
// scenario per run, as client.py does with the Python SDK and printing the same JSON.
//
// Usage: node client.mjs BASE_URL SCENARIO [KEY]. In the `oauth` scenario KEY is
// `USERNAME:PASSWORD` of the person who signs in on bor's page and allows the client.

import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const REDIRECT_URI = "http://127.0.0.1:33418/callback";

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

/** The person at the browser, headless: signs in on bor, reads the consent page and
 *  allows the client; the code is what the client's callback would get. */
async function allowAsPerson(authorizationUrl, username, password) {
  const login = await fetch(authorizationUrl, { redirect: "manual" });
  if (login.status !== 302) throw new Error(`not sent to sign in: ${login.status}`);
  const signedIn = await fetch(`${base}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username, password }),
  });
  if (signedIn.status !== 200) throw new Error(`sign-in: ${signedIn.status}`);
  const cookie = signedIn.headers.get("set-cookie").split(";")[0];
  const page = await fetch(authorizationUrl, { headers: { cookie }, redirect: "manual" });
  const html = await page.text();
  const unescape = (text) =>
    text.replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");
  const form = new URLSearchParams();
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    form.append(unescape(name), unescape(value));
  }
  form.append("decision", "allow");
  const allowed = await fetch(`${base}/oauth/authorize`, {
    method: "POST",
    headers: { cookie, origin: base },
    body: form,
    redirect: "manual",
  });
  const location = new URL(allowed.headers.get("location"));
  return { consentPage: html, code: location.searchParams.get("code") };
}

/** The whole OAuth flow the SDK runs after bor's 401 (discovery, registration, the
 *  consent, the code exchange), then a refresh when bor refuses a stale access token,
 *  then the spent refresh token tried again. */
async function oauth() {
  const [username, password] = key.split(/:(.*)/s);
  const stored = { tokens: undefined, client: undefined, verifier: undefined };
  let person;
  const provider = {
    get redirectUrl() {
      return REDIRECT_URI;
    },
    get clientMetadata() {
      return {
        client_name: "SDK test client",
        redirect_uris: [REDIRECT_URI],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      };
    },
    clientInformation: () => stored.client,
    saveClientInformation: (client) => {
      stored.client = client;
    },
    tokens: () => stored.tokens,
    saveTokens: (tokens) => {
      stored.tokens = tokens;
    },
    redirectToAuthorization: async (url) => {
      person = await allowAsPerson(url.toString(), username, password);
    },
    saveCodeVerifier: (verifier) => {
      stored.verifier = verifier;
    },
    codeVerifier: () => stored.verifier,
  };
  const url = new URL(`${base}/mcp`);
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  try {
    await new Client({ name: "bor-tests", version: "1.0.0" }).connect(first);
    throw new Error("connected without OAuth");
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
  }
  await first.finishAuth(person.code);
  const firstTokens = stored.tokens;
  const client = new Client({ name: "bor-tests", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  const listed = await client.callTool({ name: "list_collections", arguments: {} });
  await client.close();
  // An access token bor no longer takes: the SDK refreshes on the 401 and goes on.
  stored.tokens = { ...firstTokens, access_token: "bor_oat_stale" };
  const again = new Client({ name: "bor-tests", version: "1.0.0" });
  await again.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  const search = await again.callTool({
    name: "search",
    arguments: { query: "salary band", top_k: 5 },
  });
  await again.close();
  const secondTokens = stored.tokens;
  const replayed = await fetch(`${base}/oauth/token`, {
    method: "POST",
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: firstTokens.refresh_token,
      client_id: stored.client.client_id,
    }),
  });
  const after = await fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${secondTokens.access_token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  return {
    consent_page: person.consentPage,
    client_id: stored.client.client_id,
    first_access: firstTokens.access_token,
    second_access: secondTokens.access_token,
    refreshed:
      firstTokens.access_token !== secondTokens.access_token &&
      firstTokens.refresh_token !== secondTokens.refresh_token,
    list_collections: listed,
    search,
    replayed: { status: replayed.status, body: await replayed.json() },
    after_replay: after.status,
  };
}

const scenarios = { tools: connectAndCall, refused, oauth };
console.log(JSON.stringify(await scenarios[scenario]()));
