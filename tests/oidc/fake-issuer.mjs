// A stand-in OpenID Connect issuer for the refusals a real provider never produces: an
// ID token for another audience, an expired one, a bad signature, an unknown key, a
// different issuer, a wrong nonce. It serves discovery, its keys, an authorization
// endpoint and a token endpoint on 127.0.0.1 and a free port, and prints one JSON line
// {"issuer","port"} on stdout once it listens.
//
// `GET /authorize?…&case=<case>` answers at once with a redirect to `redirect_uri`
// carrying `state` and a code that holds the case and the nonce; `POST /token` turns
// that code into an ID token made as the case says:
//   good          a valid token (subject `fake-user`)
//   audience      `aud` is another application
//   expired       `exp` an hour ago
//   signature     signed by an unpublished key under the published key's `kid`
//   unknown-kid   signed by an unpublished key under its own `kid`
//   issuer        `iss` another issuer
//   nonce         another nonce
//   rotated       signed by a new key that the keys document publishes from now on
// `&claims=<JSON object>` replaces or adds claims of the token (a username, a name, the
// groups, the subject bor is asked to take).

import { createServer } from "node:http";
import { generateKeyPairSync, sign } from "node:crypto";

const keys = Object.fromEntries(
  ["published", "rotated", "unpublished"].map((name) => [
    name,
    { kid: `kid-${name}`, ...generateKeyPairSync("rsa", { modulusLength: 2048 }) },
  ]),
);
const published = [keys.published];

const base64url = (data) => Buffer.from(data).toString("base64url");
const jwk = (key) => ({ ...key.publicKey.export({ format: "jwk" }), kid: key.kid, alg: "RS256", use: "sig" });

function idToken(issuer, testCase, nonce, extra) {
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: testCase === "issuer" ? "http://127.0.0.1:9/another-issuer" : issuer,
    sub: "fake-user",
    aud: testCase === "audience" ? "another-app" : "bor",
    iat: testCase === "expired" ? now - 7200 : now,
    exp: testCase === "expired" ? now - 3600 : now + 300,
    nonce: testCase === "nonce" ? "not-the-nonce-of-this-sign-in" : nonce,
    preferred_username: "fake-user",
    groups: ["staff"],
    ...extra,
  };
  const signer = { signature: keys.unpublished, "unknown-kid": keys.unpublished, rotated: keys.rotated }[testCase] ?? keys.published;
  const kid = testCase === "signature" ? keys.published.kid : signer.kid;
  const input = `${base64url(JSON.stringify({ alg: "RS256", typ: "JWT", kid }))}.${base64url(JSON.stringify(claims))}`;
  return `${input}.${base64url(sign("sha256", Buffer.from(input), signer.privateKey))}`;
}

function json(response, status, body) {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

const server = createServer((request, response) => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const url = new URL(request.url, issuer);
  if (url.pathname === "/.well-known/openid-configuration") {
    return json(response, 200, {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      response_types_supported: ["code"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["RS256"],
    });
  }
  if (url.pathname === "/jwks") return json(response, 200, { keys: published.map(jwk) });
  if (url.pathname === "/authorize") {
    const testCase = url.searchParams.get("case") ?? "good";
    if (testCase === "rotated" && !published.includes(keys.rotated)) published.push(keys.rotated);
    const extra = JSON.parse(url.searchParams.get("claims") ?? "{}");
    const code = base64url(JSON.stringify({ testCase, nonce: url.searchParams.get("nonce"), extra }));
    const back = new URL(url.searchParams.get("redirect_uri"));
    back.searchParams.set("code", code);
    back.searchParams.set("state", url.searchParams.get("state"));
    response.writeHead(302, { location: back.toString() });
    return response.end();
  }
  if (url.pathname === "/token" && request.method === "POST") {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      const code = new URLSearchParams(body).get("code") ?? "";
      const { testCase, nonce, extra } = JSON.parse(Buffer.from(code, "base64url").toString() || "{}");
      json(response, 200, {
        access_token: "fake-access-token",
        token_type: "Bearer",
        expires_in: 300,
        id_token: idToken(issuer, testCase, nonce, extra ?? {}),
      });
    });
    return undefined;
  }
  return json(response, 404, { error: "not_found" });
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ issuer: `http://127.0.0.1:${port}`, port })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
