// A real OpenID Connect provider for the tests (npm `oidc-provider`, certified by the
// OpenID Foundation), on 127.0.0.1 and a free port. Prints one JSON line
// {"issuer","port"} on stdout once it listens, then serves until killed.
//
// Clients: `bor` (secret `bor-test-secret`) and `another-app`, both native apps, so
// any port of 127.0.0.1 is a valid redirect (RFC 8252). The provider's own login form
// (devInteractions) takes any login and password; the login becomes the subject and
// `preferred_username`. BOR_TEST_OIDC_GROUPS (JSON: login → group names) gives each
// login its `groups` claim (none listed: `["staff"]`). Consent is granted at once.

import { createServer } from "node:http";
import Provider from "oidc-provider";

const groupsOf = JSON.parse(process.env.BOR_TEST_OIDC_GROUPS ?? "{}");
const client = (id, secret) => ({
  client_id: id,
  client_secret: secret,
  application_type: "native",
  redirect_uris: ["http://127.0.0.1/api/auth/oidc/callback"],
  response_types: ["code"],
  grant_types: ["authorization_code"],
});

const server = createServer();
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [client("bor", "bor-test-secret"), client("another-app", "another-secret")],
    claims: {
      openid: ["sub"],
      profile: ["name", "preferred_username"],
      email: ["email"],
      groups: ["groups"],
    },
    scopes: ["openid", "profile", "email", "groups"],
    // The claims go in the ID token (bor reads them there), not only in userinfo.
    conformIdTokenClaims: false,
    cookies: { keys: ["bor-test-cookie-key"] },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, sub) {
      return {
        accountId: sub,
        async claims() {
          return {
            sub,
            preferred_username: sub,
            name: `${sub} (test)`,
            email: `${sub}@example.test`,
            groups: groupsOf[sub] ?? ["staff"],
          };
        },
      };
    },
    async loadExistingGrant(ctx) {
      const grantId =
        ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope([...ctx.oidc.requestParamScopes].join(" "));
      await grant.save();
      return grant;
    },
  });
  server.on("request", provider.callback());
  process.stdout.write(`${JSON.stringify({ issuer, port })}\n`);
});

process.on("SIGTERM", () => server.close(() => process.exit(0)));
