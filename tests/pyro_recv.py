#!/usr/bin/env python3
"""pyro_recv.py - a stand-in for Pyroscope's ingest endpoint, for the tests.

  pyro_recv.py DIR MODE   MODE: ok (200), fail (500), slow (answers after 30 s)
Prints the port it listens on (127.0.0.1, a free one) on its first line;
saves each POST's body as DIR/N.pb.gz and its path and query as DIR/N.url.
"""
import http.server
import os
import sys
import time

DIR, MODE = sys.argv[1], sys.argv[2]
n = 0


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global n
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if MODE == "slow":
            time.sleep(30)
        n += 1
        with open(os.path.join(DIR, "%d.pb.gz" % n), "wb") as f:
            f.write(body)
        with open(os.path.join(DIR, "%d.url" % n), "w") as f:
            f.write(self.path + "\n" + self.headers.get("Content-Type", "") + "\n")
        code = 200 if MODE == "ok" else 500
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(srv.server_address[1], flush=True)
srv.serve_forever()
