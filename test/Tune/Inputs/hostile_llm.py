#!/usr/bin/env python3
"""A hostile stand-in for an LLM endpoint on loopback (OpenAI chat completions), for test/Tune/llm-hostile.test.

usage: hostile_llm.py SCRIPT.json PORT_FILE REQUEST_LOG

SCRIPT is a list of replies served in order (the last one repeats). A reply is an object with
  "status" (default 200);
  "echo_headers": answer with a body that echoes the request's headers, Authorization included (as a JSON
      object and as a header line), like a misconfigured proxy's error page;
  "text" (the model's text), or "deep": N (the model's text is N '[' and N ']');
  "usage" (the usage object reported; default 1000 prompt and 100 completion tokens);
  "raw" (a literal body instead);
  "drip": S (send the headers, then the body one byte every S seconds; how long the client stayed is appended
      to REQUEST_LOG.drip when it hangs up);
  "delay" (seconds before answering).
The port goes to PORT_FILE; every request is appended to REQUEST_LOG as one JSON line.
"""
import http.server
import json
import select
import os
import sys
import threading
import time

script = json.load(open(sys.argv[1]))
port_file, request_log = sys.argv[2], sys.argv[3]
lock = threading.Lock()
served = [0]


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        with lock:
            index = min(served[0], len(script) - 1)
            served[0] += 1
            with open(request_log, "a") as log:
                log.write(json.dumps({"path": self.path, "headers": dict(self.headers), "body": body}) + "\n")
        reply = script[index]
        time.sleep(reply.get("delay", 0))
        if reply.get("echo_headers"):
            payload = (json.dumps({"error": {"message": "invalid API key"}, "your_request_headers": dict(self.headers)})
                       + "\nAuthorization: " + self.headers.get("Authorization", "") + "\n").encode()
        elif "raw" in reply:
            payload = reply["raw"].encode()
        else:
            text = "[" * reply["deep"] + "]" * reply["deep"] if "deep" in reply else reply.get("text", "")
            usage = reply.get("usage", {"prompt_tokens": 1000, "completion_tokens": 100})
            payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}],
                                  "usage": usage}).encode()
        try:
            self.send_response(reply.get("status", 200))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if "drip" not in reply:
                self.wfile.write(payload)
                return
            start = time.time()
            try:
                for i in range(len(payload)):
                    self.wfile.write(payload[i:i + 1])
                    self.wfile.flush()
                    # Wait for the next byte's turn, or notice at once that the client hung up.
                    if select.select([self.connection], [], [], reply["drip"])[0] and not self.connection.recv(1):
                        break
            finally:
                with open(request_log + ".drip", "a") as log:
                    log.write("client stayed %.1f s\n" % (time.time() - start))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.replace(port_file + ".tmp", port_file)
server.serve_forever()
