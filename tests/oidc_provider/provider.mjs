// The OpenID provider the tests sign in at: oidc-provider (the certified Node implementation)
// on 127.0.0.1, at the library's own defaults. It sets only what a deployment must: its one
// client, the claims of the scopes, and who each login is (findAccount); the development
// login pages are the library's own (any password is accepted; the login name is the
// subject). Started by tests/oidc.py, which reads the line it prints.
//
// argv: <node_modules directory> <port>; the environment: OIDC_CLIENT (JSON: client_id,
// client_secret, redirect_uris), OIDC_USERS (JSON: {login: {email, email_verified,
// preferred_username}}), OIDC_LOG (a file: one line per request, "METHOD path status", so a
// test can count the calls the site made), and OIDC_ID_TOKEN_CLAIMS=1 for the one run that
// puts the scopes' claims in the ID token too (conformIdTokenClaims: false), as Google and
// Keycloak do.
import { appendFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [modules, port] = process.argv.slice(2);
const { default: Provider } = await import(pathToFileURL(join(modules, "oidc-provider", "lib", "index.js")).href);
const client = JSON.parse(process.env.OIDC_CLIENT);
const users = JSON.parse(process.env.OIDC_USERS || "{}");
const log = process.env.OIDC_LOG;
const issuer = `http://127.0.0.1:${port}`;

const configuration = {
  clients: [
    {
      client_id: client.client_id,
      client_secret: client.client_secret,
      redirect_uris: client.redirect_uris,
    },
  ],
  claims: { email: ["email", "email_verified"], profile: ["preferred_username"] },
  // Every login is one person: the login name is the subject, its claims from OIDC_USERS.
  async findAccount(ctx, sub) {
    const known = users[sub] || { email: `${sub}@provider.example`, email_verified: false };
    return {
      accountId: sub,
      async claims() {
        return { sub, ...known };
      },
    };
  },
};
if (process.env.OIDC_ID_TOKEN_CLAIMS === "1") {
  configuration.conformIdTokenClaims = false;
}

const provider = new Provider(issuer, configuration);
if (log) {
  provider.use(async (ctx, next) => {
    await next();
    appendFileSync(log, `${ctx.method} ${ctx.path} ${ctx.status}\n`);
  });
}
provider.listen(Number(port), "127.0.0.1", () => {
  process.stdout.write(`listening ${issuer}\n`);
});
