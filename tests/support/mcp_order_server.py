"""A Streamable HTTP MCP server that, like the reference `server-everything`, registers a tool
when the client says `notifications/initialized` and announces it with `list_changed` on the
GET notification stream (lost when that stream is not open yet). It takes a moment to do so,
so a client that lists tools before its `initialized` is acknowledged sees the list without
it. A second tool appears the moment the GET stream opens, announced on that stream, and a
third while the first `tools/list` is answered (with the list as it was before). Every
message the server sees is logged in order; `GET /log` answers the log as JSON.
Standard library only. Usage: python3 mcp_order_server.py <port>"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
log = []
tools = {
    "add": "Add two integers.",
    "shout": "Return the text in upper case.",
}
streams = []  # open GET streams: (handler, event)


def tool_list():
    return [
        {"name": n, "description": d, "inputSchema": {"type": "object", "properties": {}}}
        for n, d in tools.items()
    ]


def announce():
    """`list_changed` on every open GET stream; lost when none is open, as in the SDK."""
    message = json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    for handler in list(streams):
        try:
            handler.wfile.write(f"event: message\ndata: {message}\n\n".encode())
            handler.wfile.flush()
        except OSError:
            streams.remove(handler)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=None, headers=()):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        if body is not None:
            self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("mcp-session-id", "order-session")
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/log":
            with lock:
                return self.reply(200, list(log))
        # Under the lock from the log to the announcement: a tools/list that follows the GET
        # is answered after the new tool is in.
        with lock:
            log.append("GET")
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("mcp-session-id", "order-session")
            self.end_headers()
            self.wfile.flush()
            streams.append(self)
            tools["from_stream"] = "Appears when the notification stream opens."
            announce()
        # Held open until the client goes away.
        while True:
            time.sleep(0.2)
            try:
                self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
            except OSError:
                with lock:
                    if self in streams:
                        streams.remove(self)
                return

    def do_DELETE(self):
        with lock:
            log.append("DELETE")
        self.reply(200)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        method = body.get("method")
        with lock:
            log.append(method)
        if method == "notifications/initialized":
            # The work the server does on initialized: a new tool, announced on the stream.
            time.sleep(0.3)
            with lock:
                tools["after_initialized"] = "Registered on notifications/initialized."
                announce()
            return self.reply(202)
        if "id" not in body:
            return self.reply(202)
        if method == "initialize":
            result = {
                "protocolVersion": body["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "order", "version": "1"},
            }
        elif method == "tools/list":
            with lock:
                result = {"tools": tool_list()}
                first = log.count("tools/list") == 1
                if first:
                    # A tool registered while the first listing is under way: announced
                    # now, missing from the answer, which was taken before.
                    tools["during_list"] = "Registered while the first tools/list ran."
                    announce()
            if first:
                time.sleep(0.2)
        elif method == "ping":
            result = {}
        else:
            return self.reply(200, {"jsonrpc": "2.0", "id": body["id"],
                                    "error": {"code": -32601, "message": "no such method"}})
        self.reply(200, {"jsonrpc": "2.0", "id": body["id"], "result": result})


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
