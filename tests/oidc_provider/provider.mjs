// The OpenID provider the tests sign in at: oidc-provider (the certified Node implementation)
// on 127.0.0.1, with one client and its development login pages (any password is accepted;
// the login name is the subject). Started by tests/oidc.py, which reads the line it prints.
//
// argv: <node_modules directory> <port>; the environment: OIDC_CLIENT (JSON: client_id,
// client_secret, redirect_uris) and OIDC_USERS (JSON: {login: {email, email_verified}}).
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [modules, port] = process.argv.slice(2);
const { default: Provider } = await import(pathToFileURL(join(modules, "oidc-provider", "lib", "index.js")).href);
const client = JSON.parse(process.env.OIDC_CLIENT);
const users = JSON.parse(process.env.OIDC_USERS || "{}");
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: client.client_id,
      client_secret: client.client_secret,
      redirect_uris: client.redirect_uris,
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    },
  ],
  pkce: { required: () => true },
  // The scopes' claims (email, email_verified) in the ID token, as Google's and Keycloak's:
  // the site reads the address from the token it verified.
  conformIdTokenClaims: false,
  claims: { openid: ["sub"], email: ["email", "email_verified"] },
  // Every login is one person: the login name is the subject, its mail from OIDC_USERS.
  async findAccount(ctx, sub) {
    const known = users[sub] || { email: `${sub}@provider.example`, email_verified: false };
    return {
      accountId: sub,
      async claims() {
        return { sub, email: known.email, email_verified: known.email_verified };
      },
    };
  },
});
provider.listen(Number(port), "127.0.0.1", () => {
  process.stdout.write(`listening ${issuer}\n`);
});
