// The whole OAuth flow and the first MCP calls, from a page on another origin than the server.
// Start: client.html?mcp=<server>/mcp. The page saves what it needs in sessionStorage, sends the
// person to the authorization page, and is loaded again as the callback with ?code=...
// The outcome lands in window.anchorResult: {ok: true, ...} or {ok: false, step, error}.
"use strict";

const STATE_KEY = "anchor-oauth";
const PROTOCOL_VERSION = "2025-06-18";
const JSON_RPC_ACCEPT = "application/json, text/event-stream";

function log(line) {
  document.getElementById("log").textContent += line + "\n";
}

function base64url(bytes) {
  let text = "";
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function randomString(length) {
  return base64url(crypto.getRandomValues(new Uint8Array(length)));
}

async function pkceChallenge(verifier) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64url(digest);
}

// Runs one named step; a failure (a browser-blocked fetch is a TypeError) names the step.
async function step(name, work) {
  try {
    const value = await work();
    log(`ok   ${name}`);
    return value;
  } catch (error) {
    log(`FAIL ${name}: ${error}`);
    throw Object.assign(new Error(String(error)), { step: name });
  }
}

async function readJson(response, expected) {
  if (response.status !== expected) {
    throw new Error(`HTTP ${response.status}, expected ${expected}: ${await response.text()}`);
  }
  return response.json();
}

function mcpRequest(mcpUrl, token, message, sessionId) {
  const headers = {
    "Content-Type": "application/json",
    Accept: JSON_RPC_ACCEPT,
    "MCP-Protocol-Version": PROTOCOL_VERSION,
  };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (sessionId) headers["Mcp-Session-Id"] = sessionId;
  return fetch(mcpUrl, { method: "POST", headers, body: JSON.stringify(message) });
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: "anchor-browser-client", version: "1" },
  },
};

async function startAuthorization(mcpUrl) {
  const challenge = await step("401 from /mcp names the resource metadata", async () => {
    const response = await mcpRequest(mcpUrl, null, INITIALIZE);
    if (response.status !== 401) throw new Error(`HTTP ${response.status}, expected 401`);
    const header = response.headers.get("WWW-Authenticate");
    const found = /resource_metadata="([^"]+)"/.exec(header || "");
    if (!found) throw new Error(`no resource_metadata in WWW-Authenticate: ${header}`);
    return found[1];
  });
  const resource = await step("protected-resource metadata", async () =>
    readJson(await fetch(challenge, { headers: { "MCP-Protocol-Version": PROTOCOL_VERSION } }), 200)
  );
  const issuer = resource.authorization_servers[0];
  const server = await step("authorization-server metadata", async () =>
    readJson(await fetch(`${issuer}/.well-known/oauth-authorization-server`), 200)
  );
  const redirectUri = location.origin + location.pathname;
  const client = await step("dynamic registration", async () =>
    readJson(
      await fetch(server.registration_endpoint, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          client_name: "Anchor browser client",
          redirect_uris: [redirectUri],
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          token_endpoint_auth_method: "none",
        }),
      }),
      201
    )
  );
  const verifier = randomString(48);
  const state = randomString(16);
  const saved = {
    mcpUrl,
    resource: resource.resource,
    issuer: server.issuer,
    tokenEndpoint: server.token_endpoint,
    clientId: client.client_id,
    redirectUri,
    verifier,
    state,
  };
  sessionStorage.setItem(STATE_KEY, JSON.stringify(saved));
  const authorize = new URL(server.authorization_endpoint);
  authorize.search = new URLSearchParams({
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: redirectUri,
    code_challenge: await pkceChallenge(verifier),
    code_challenge_method: "S256",
    scope: "mcp",
    state,
    resource: resource.resource,
  }).toString();
  log("to the authorization page");
  location.assign(authorize.toString());
}

async function finishAuthorization(query) {
  const saved = JSON.parse(sessionStorage.getItem(STATE_KEY));
  sessionStorage.removeItem(STATE_KEY);
  if (!saved || query.get("state") !== saved.state) throw new Error("state does not match");
  if (query.get("iss") !== saved.issuer) throw new Error(`iss ${query.get("iss")} (RFC 9207)`);
  const tokens = await step("code exchanged at the token endpoint", async () =>
    readJson(
      await fetch(saved.tokenEndpoint, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: query.get("code"),
          redirect_uri: saved.redirectUri,
          client_id: saved.clientId,
          code_verifier: saved.verifier,
          resource: saved.resource,
        }),
      }),
      200
    )
  );
  const token = tokens.access_token;
  const session = await step("initialize with the bearer token", async () => {
    const response = await mcpRequest(saved.mcpUrl, token, INITIALIZE);
    const body = await readJson(response, 200);
    const sessionId = response.headers.get("Mcp-Session-Id");
    if (!sessionId) throw new Error("Mcp-Session-Id is not readable");
    return { sessionId, serverName: body.result.serverInfo.name };
  });
  await step("notifications/initialized", async () => {
    const message = { jsonrpc: "2.0", method: "notifications/initialized" };
    const response = await mcpRequest(saved.mcpUrl, token, message, session.sessionId);
    if (response.status !== 202) throw new Error(`HTTP ${response.status}, expected 202`);
  });
  const tools = await step("tools/list", async () => {
    const message = { jsonrpc: "2.0", id: 2, method: "tools/list" };
    const response = await mcpRequest(saved.mcpUrl, token, message, session.sessionId);
    return (await readJson(response, 200)).result.tools.map((tool) => tool.name);
  });
  await step("session ended with DELETE", async () => {
    const response = await fetch(saved.mcpUrl, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${token}`, "Mcp-Session-Id": session.sessionId },
    });
    if (response.status !== 204) throw new Error(`HTTP ${response.status}, expected 204`);
  });
  return { ok: true, ...session, tools, clientId: saved.clientId };
}

async function main() {
  const query = new URLSearchParams(location.search);
  try {
    if (query.has("code") || query.has("error")) {
      if (query.has("error")) throw new Error(`authorization refused: ${query.get("error")}`);
      window.anchorResult = await finishAuthorization(query);
    } else if (query.has("mcp")) {
      await startAuthorization(query.get("mcp"));
    }
  } catch (error) {
    window.anchorResult = { ok: false, step: error.step || "callback", error: error.message };
  }
}

main();
