"""A Streamable HTTP MCP server built with the official Python `mcp` package, for pi's tests.
Usage: python mcp_http_server.py <port>"""
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("pi-test-http", instructions="Arithmetic and echo tools for tests.")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Return the text in upper case."""
    return text.upper()


@server.resource("note://hello")
def hello() -> str:
    """A greeting."""
    return "hello from a resource"


server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
