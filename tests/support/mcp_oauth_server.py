"""An OAuth-protected MCP server for pi's tests, with its own authorization server (stdlib only).

Usage: python3 mcp_oauth_server.py <port> [<options as JSON>]

It serves, on one origin:
  * /mcp: a Streamable HTTP MCP endpoint (JSON answers) that answers 401 with a
    `WWW-Authenticate: Bearer resource_metadata=...` challenge unless it gets a valid access token,
    and 403 `insufficient_scope` for the `admin_report` tool without the `admin` scope;
  * RFC 9728 protected-resource metadata at /.well-known/oauth-protected-resource/mcp;
  * RFC 8414 metadata at /.well-known/oauth-authorization-server (issuer = the origin);
  * /register (RFC 7591), /authorize (redirects to the client's loopback redirect URI with the code,
    the state and, unless disabled, `iss`), /token (authorization_code with PKCE S256 verification,
    refresh_token with rotation: a used refresh token fails with invalid_grant);
  * /stats (counters and the last requests) and /control (change options, expire tokens).

Options: expires_in (seconds, default 3600), iss (send and advertise iss, default true),
cimd (accept pi's Client ID Metadata Document URLs as client ids, default false),
refresh_delay (seconds to wait before answering a refresh, default 0), wrong_issuer (default false),
static_token (a token /mcp also accepts, as a provider's /login token would be).
"""
import base64
import hashlib
import json
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

PORT = int(sys.argv[1])
OPTIONS = {"expires_in": 3600, "iss": True, "cimd": False, "refresh_delay": 0, "wrong_issuer": False}
if len(sys.argv) > 2:
    OPTIONS.update(json.loads(sys.argv[2]))
ORIGIN = f"http://127.0.0.1:{PORT}"
RESOURCE = f"{ORIGIN}/mcp"
LOCK = threading.Lock()
CLIENTS = {}
CODES = {}
ACCESS = {}
REFRESH = {}
STATS = {
    "registrations": 0,
    "authorizations": 0,
    "code_exchanges": 0,
    "refreshes": 0,
    "refresh_failures": 0,
    "unauthorized": 0,
    "insufficient_scope": 0,
    "last_authorize": None,
    "last_registration": None,
    "last_token_request": None,
}


def metadata():
    meta = {
        "issuer": "https://elsewhere.example" if OPTIONS["wrong_issuer"] else ORIGIN,
        "authorization_endpoint": f"{ORIGIN}/authorize",
        "token_endpoint": f"{ORIGIN}/token",
        "registration_endpoint": f"{ORIGIN}/register",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
        "scopes_supported": ["mcp", "admin"],
    }
    if OPTIONS["iss"]:
        meta["authorization_response_iss_parameter_supported"] = True
    if OPTIONS["cimd"]:
        meta["client_id_metadata_document_supported"] = True
    return meta


def known_client(client_id, redirect_uri):
    if client_id in CLIENTS:
        return redirect_uri in CLIENTS[client_id]["redirect_uris"]
    if OPTIONS["cimd"] and client_id.startswith("https://pi.dev/oauth/"):
        # A real server would fetch the document; pi's documents list loopback /callback URIs.
        parsed = urlparse(redirect_uri)
        return parsed.hostname in ("127.0.0.1", "localhost") and parsed.path.startswith("/callback")
    return False


def issue_tokens(client_id, scope):
    access = "at-" + secrets.token_hex(8)
    refresh = "rt-" + secrets.token_hex(8)
    ACCESS[access] = {"scope": scope, "expires_at": time.time() + OPTIONS["expires_in"]}
    REFRESH[refresh] = {"client_id": client_id, "scope": scope}
    return {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": OPTIONS["expires_in"],
        "refresh_token": refresh,
        "scope": scope,
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=None, headers=None, content_type="application/json"):
        data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if body is not None:
            self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self):
        url = urlparse(self.path)
        if url.path == "/.well-known/oauth-protected-resource/mcp":
            return self.reply(200, {"resource": RESOURCE, "authorization_servers": [ORIGIN], "scopes_supported": ["mcp"]})
        if url.path == "/.well-known/oauth-authorization-server":
            return self.reply(200, metadata())
        if url.path == "/authorize":
            return self.authorize(parse_qs(url.query))
        if url.path == "/stats":
            with LOCK:
                return self.reply(200, STATS)
        if url.path == "/mcp":
            return self.reply(405)
        return self.reply(404, {"error": "not_found"})

    def do_DELETE(self):
        return self.reply(200 if self.path == "/mcp" else 404)

    def authorize(self, q):
        one = lambda k: q.get(k, [None])[0]
        with LOCK:
            STATS["authorizations"] += 1
            STATS["last_authorize"] = {k: v[0] for k, v in q.items()}
            client_id, redirect_uri = one("client_id"), one("redirect_uri")
            if one("response_type") != "code" or one("code_challenge_method") != "S256" or not one("code_challenge"):
                return self.reply(400, {"error": "invalid_request"})
            if not client_id or not redirect_uri or not known_client(client_id, redirect_uri):
                return self.reply(400, {"error": "invalid_client"})
            code = "code-" + secrets.token_hex(8)
            CODES[code] = {
                "client_id": client_id,
                "redirect_uri": redirect_uri,
                "challenge": one("code_challenge"),
                "scope": one("scope") or "mcp",
            }
        params = {"code": code, "state": one("state")}
        if OPTIONS["iss"]:
            params["iss"] = ORIGIN
        self.reply(302, None, {"location": f"{redirect_uri}?{urlencode(params)}"})

    def do_POST(self):
        url = urlparse(self.path)
        raw = self.body()
        if url.path == "/register":
            info = json.loads(raw or b"{}")
            with LOCK:
                STATS["registrations"] += 1
                STATS["last_registration"] = info
                client_id = "client-" + secrets.token_hex(6)
                CLIENTS[client_id] = {"redirect_uris": info.get("redirect_uris", [])}
            return self.reply(201, {"client_id": client_id, **info})
        if url.path == "/token":
            return self.token({k: v[0] for k, v in parse_qs(raw.decode()).items()})
        if url.path == "/control":
            change = json.loads(raw or b"{}")
            with LOCK:
                if change.pop("expire_all", False):
                    for t in ACCESS.values():
                        t["expires_at"] = 0
                OPTIONS.update(change)
            return self.reply(200, OPTIONS)
        if url.path == "/mcp":
            return self.mcp(raw)
        return self.reply(404, {"error": "not_found"})

    def token(self, form):
        grant = form.get("grant_type")
        with LOCK:
            STATS["last_token_request"] = form
        if grant == "authorization_code":
            with LOCK:
                STATS["code_exchanges"] += 1
                entry = CODES.pop(form.get("code", ""), None)
                if not entry:
                    return self.reply(400, {"error": "invalid_grant", "error_description": "unknown code"})
                digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
                challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
                if challenge != entry["challenge"]:
                    return self.reply(400, {"error": "invalid_grant", "error_description": "PKCE verification failed"})
                if form.get("redirect_uri") != entry["redirect_uri"] or form.get("client_id") != entry["client_id"]:
                    return self.reply(400, {"error": "invalid_grant", "error_description": "redirect_uri or client mismatch"})
                if form.get("resource") != RESOURCE:
                    return self.reply(400, {"error": "invalid_target"})
                return self.reply(200, issue_tokens(entry["client_id"], entry["scope"]))
        if grant == "refresh_token":
            time.sleep(OPTIONS["refresh_delay"])
            with LOCK:
                STATS["refreshes"] += 1
                entry = REFRESH.pop(form.get("refresh_token", ""), None)
                if not entry or entry["client_id"] != form.get("client_id"):
                    STATS["refresh_failures"] += 1
                    return self.reply(400, {"error": "invalid_grant", "error_description": "refresh token reused or unknown"})
                return self.reply(200, issue_tokens(entry["client_id"], entry["scope"]))
        return self.reply(400, {"error": "unsupported_grant_type"})

    def mcp(self, raw):
        auth = self.headers.get("authorization", "")
        token = auth[7:] if auth.lower().startswith("bearer ") else None
        with LOCK:
            grant = ACCESS.get(token)
            if token and token == OPTIONS.get("static_token"):
                grant = {"scope": "mcp", "expires_at": time.time() + 3600}
            valid = grant is not None and grant["expires_at"] > time.time()
            if not valid:
                STATS["unauthorized"] += 1
        if not valid:
            challenge = f'Bearer resource_metadata="{ORIGIN}/.well-known/oauth-protected-resource/mcp"'
            return self.reply(401, {"error": "invalid_token"}, {"www-authenticate": challenge})
        msg = json.loads(raw)
        method, mid = msg.get("method"), msg.get("id")
        if mid is None:
            return self.reply(202)
        if method == "initialize":
            result = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "oauth-test", "version": "1"},
            }
            return self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": result}, {"mcp-session-id": "s-1"})
        if method == "tools/list":
            tools = [
                {"name": "whoami", "description": "The scopes of the caller.", "inputSchema": {"type": "object"}},
                {"name": "admin_report", "description": "Needs the admin scope.", "inputSchema": {"type": "object"}},
            ]
            return self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": {"tools": tools}})
        if method == "tools/call":
            name = msg["params"]["name"]
            scopes = grant["scope"].split()
            if name == "admin_report" and "admin" not in scopes:
                with LOCK:
                    STATS["insufficient_scope"] += 1
                challenge = (
                    f'Bearer error="insufficient_scope", scope="mcp admin", '
                    f'resource_metadata="{ORIGIN}/.well-known/oauth-protected-resource/mcp"'
                )
                return self.reply(403, {"error": "insufficient_scope"}, {"www-authenticate": challenge})
            text = f"scopes: {grant['scope']}" if name == "whoami" else "admin report: all good"
            result = {"content": [{"type": "text", "text": text}]}
            return self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": result})
        if method == "ping":
            return self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": {}})
        return self.reply(200, {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
