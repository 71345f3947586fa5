#!/usr/bin/env python3
"""A scripted stand-in for an LLM endpoint on loopback, speaking OpenAI chat completions (/v1/chat/completions)
and Anthropic messages (/v1/messages).

usage: mock_llm.py SCRIPT.json PORT_FILE REQUEST_LOG

SCRIPT is a list of replies served in order (the last one repeats). A reply is an object with
  "status" (default 200), "text" (the model's text, wrapped in the API's response format), "headers",
  "delay" (seconds before answering), "raw" (a literal body instead), "size" (a body of that many bytes).
The server binds 127.0.0.1 on a free port and writes the port to PORT_FILE; every request is appended to
REQUEST_LOG as one JSON line (path, headers, body), so a test can see what the client sent.
"""
import http.server
import json
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
        anthropic = self.path.endswith("/messages")
        if "raw" in reply:
            payload = reply["raw"].encode()
        elif "size" in reply:
            payload = b"x" * reply["size"]
        elif anthropic:
            payload = json.dumps({"content": [{"type": "text", "text": reply.get("text", "")}],
                                  "usage": {"input_tokens": 1000, "output_tokens": 100}}).encode()
        else:
            payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": reply.get("text", "")}}],
                                  "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}).encode()
        try:
            self.send_response(reply.get("status", 200))
            for key, value in reply.get("headers", {}).items():
                self.send_header(key, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.replace(port_file + ".tmp", port_file)
server.serve_forever()
