#!/usr/bin/env python3
"""A stub Kubernetes API server for tests/image (deviation 2 of the image test): HTTPS with the
certificate the service-account ca.crt names, the pods of one node from the demo's pods file.

GET /api/v1/pods?fieldSelector=spec.nodeName=N           -> the pods file's items on node N
GET /api/v1/pods?...&watch=true&timeoutSeconds=T         -> no events, ends after min(T, 20) s
Any request without `Authorization: Bearer <token>` gets 401; anything else 404. Each request is
logged as one JSON line (path, whether the token matched) for the test to check.
Usage: stub_apiserver.py CERT KEY TOKEN_FILE PODS_FILE LOG PORT_FILE
"""
import json
import os
import ssl
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

cert, key, token_file, pods_file, log_file, port_file = sys.argv[1:7]
with open(token_file) as f:
    token = f.read().strip()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # the JSON log below replaces the default stderr lines
        pass

    def send(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        query = urllib.parse.parse_qs(url.query)
        authorized = self.headers.get("Authorization") == f"Bearer {token}"
        with open(log_file, "a") as f:
            f.write(json.dumps({"path": url.path, "query": query, "authorized": authorized}) + "\n")
        if not authorized:
            return self.send(401, {"kind": "Status", "code": 401, "reason": "Unauthorized"})
        if url.path != "/api/v1/pods":
            return self.send(404, {"kind": "Status", "code": 404, "reason": "NotFound"})
        if query.get("watch") == ["true"]:
            # A quiet watch: chunked, no events, closed at the timeout (the agent watches again).
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            time.sleep(min(int(query.get("timeoutSeconds", ["20"])[0]), 20))
            self.wfile.write(b"0\r\n\r\n")
            return None
        node = None
        for sel in query.get("fieldSelector", []):
            if sel.startswith("spec.nodeName="):
                node = sel[len("spec.nodeName="):]
        with open(pods_file) as f:
            pods = json.load(f)
        items = [p for p in pods.get("items", []) if p.get("spec", {}).get("nodeName") == node]
        meta = dict(pods.get("metadata", {}))
        meta.setdefault("resourceVersion", "1")
        return self.send(200, {"kind": "PodList", "apiVersion": "v1", "metadata": meta, "items": items})


server = ThreadingHTTPServer(("0.0.0.0", 0), Handler)
server.daemon_threads = True
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
server.socket = ctx.wrap_socket(server.socket, server_side=True)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
# Renamed into place, so the test never reads a half-written port.
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
