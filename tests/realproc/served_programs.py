"""A real http.server and real clients of it, for the served-bytes tests (`python served_programs.py NAME ...`).

server: ThreadingHTTPServer on 127.0.0.1:0 (HTTP/1.1 keep-alive unless the client says close, no log line per
request); prints `ready PORT` on stdout. keepalive PORT: one http.client connection, a request every 0.2 s.
per-request PORT: urllib, a new connection per request (the server closes each: TIME_WAIT on its side).
"""

from __future__ import annotations

import http.client
import http.server
import sys
import time
import urllib.request


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        body = b"ok"  # small: the probe reads the whole reply, so the server closes first (TIME_WAIT on its side)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    name, *args = sys.argv[1:]
    if name == "server":
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print("ready", server.server_address[1], flush=True)
        server.serve_forever()
    elif name == "keepalive":
        conn = http.client.HTTPConnection("127.0.0.1", int(args[0]), timeout=10)
        while True:
            conn.request("GET", "/")
            conn.getresponse().read()
            print("ok", flush=True)
            time.sleep(0.2)
    elif name == "per-request":
        while True:
            request = urllib.request.Request(f"http://127.0.0.1:{args[0]}/", headers={"Connection": "close"})
            with urllib.request.urlopen(request, timeout=10) as resp:
                resp.read()
            print("ok", flush=True)
            time.sleep(0.2)


if __name__ == "__main__":
    main()
