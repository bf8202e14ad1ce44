// A single-page client of the headless API's `browser` client, in plain JavaScript: it
// speaks django-allauth's headless API v1 exactly as an SPA written for allauth does (the
// session cookie, and Django's CSRF token from the `csrftoken` cookie in `X-CSRFToken`).
// The demo serves it at /spa/; tests/test_browser_spa.py drives it in Chromium.
"use strict";

const API = "/_allauth/browser/v1/";

function csrfToken() {
  const cookie = document.cookie.split("; ").find((part) => part.startsWith("csrftoken="));
  return cookie ? decodeURIComponent(cookie.split("=")[1]) : "";
}

async function api(method, operation, body) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") {
    headers["X-CSRFToken"] = csrfToken();
  }
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
  }
  const response = await fetch(API + operation, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // A refusal before the API (a CSRF failure, a proxy's error page) is not JSON.
  const json = (response.headers.get("Content-Type") || "").includes("json");
  const data = json ? await response.json() : {};
  show(operation, response.status, data);
  return { status: response.status, data };
}

function element(id) {
  return document.getElementById(id);
}

// A field the page leaves out (the username, on a site without usernames) is empty.
function value(id) {
  const field = element(id);
  return field ? field.value : "";
}

// What the last answer said: its status, its errors, its pending flow, the user.
function show(operation, status, answer) {
  element("status").textContent = `${operation}: ${status}`;
  const errors = (answer.errors || []).map((error) => `${error.param || ""} ${error.code}: ${error.message}`);
  element("errors").textContent = errors.join("\n");
  const flows = (answer.data && answer.data.flows) || [];
  const pending = flows.find((flow) => flow.is_pending);
  element("pending").textContent = pending ? pending.id : "";
  const user = answer.data && answer.data.user;
  if (user) {
    element("user").textContent = user.display;
  } else if (status === 401 || status === 410) {
    element("user").textContent = "";
  }
}

function renderSessions(sessions) {
  const list = element("session-list");
  list.replaceChildren();
  for (const session of sessions) {
    const item = document.createElement("li");
    item.dataset.current = String(session.is_current);
    item.textContent = `${session.user_agent || "?"} ${session.is_current ? "(this browser)" : ""} `;
    if (!session.is_current) {
      const end = document.createElement("button");
      end.type = "button";
      end.textContent = "End";
      end.addEventListener("click", async () => {
        const answer = await api("DELETE", "auth/sessions", { sessions: [session.id] });
        if (answer.status === 200) {
          renderSessions(answer.data.data);
        }
      });
      item.append(end);
    }
    list.append(item);
  }
}

const actions = {
  signup: () =>
    api("POST", "auth/signup", {
      email: value("signup-email"),
      username: value("signup-username"),
      password: value("signup-password"),
    }),
  verify: () => api("POST", "auth/email/verify", { key: value("verify-key") }),
  login: () => {
    // A name with "@" is an address: sent as `email`, which a site logging in by email only reads.
    const name = value("login-username");
    return api("POST", "auth/login", { [name.includes("@") ? "email" : "username"]: name, password: value("login-password") });
  },
  "mfa-authenticate": () => api("POST", "auth/2fa/authenticate", { code: value("mfa-code") }),
  "totp-begin": async () => {
    const answer = await api("GET", "account/authenticators/totp");
    element("totp-secret").textContent = (answer.data.meta && answer.data.meta.secret) || "";
  },
  "totp-activate": () => api("POST", "account/authenticators/totp", { code: value("totp-code") }),
  sessions: async () => {
    const answer = await api("GET", "auth/sessions");
    if (answer.status === 200) {
      renderSessions(answer.data.data);
    }
  },
  logout: async () => {
    await api("DELETE", "auth/session");
    element("session-list").replaceChildren();
  },
};

document.addEventListener("DOMContentLoaded", async () => {
  for (const [name, action] of Object.entries(actions)) {
    element(name).addEventListener("click", (event) => {
      event.preventDefault();
      action();
    });
  }
  // The first call sets the CSRF cookie (the API's browser views ensure it) and says
  // whether this browser is already signed in.
  await api("GET", "config");
  await api("GET", "auth/session");
});
