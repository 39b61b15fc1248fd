#!/usr/bin/env python3
"""Instructions per tools/call under callgrind, over 16 keep-alive HTTP connections
(docs/benchmarks.md, the callgrind tables). Needs valgrind.
Usage: http_calls.py BINARY session|stateless|raw [ARGS...], e.g.
  http_calls.py target/production/mcp-bench-echo-server session --http
  http_calls.py target/production/raw-http-echo raw
The binary prints its address first on stdout; calls are counted between
callgrind_control -i on/off, and the profile is left in /tmp for
callgrind_annotate."""
import glob
import http.client
import json
import os
import re
import subprocess
import sys

binary, era = sys.argv[1], sys.argv[2]
extra = sys.argv[3:]
out = f"/tmp/cg.{era}.{os.getpid()}.out"
args = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", binary] + extra
p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
addr = p.stdout.readline().strip()
host, port = addr.rsplit(":", 1)
conns = [http.client.HTTPConnection(host, int(port)) for _ in range(16)]
msg = "x" * 64
base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Host": addr}
heads = []
for c in conns:
    h = dict(base)
    if era == "session":
        c.request("POST", "/mcp", json.dumps({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cg","version":"0"}}}), h)
        r = c.getresponse(); r.read(); sid = r.getheader("mcp-session-id")
        h["Mcp-Session-Id"] = sid; h["MCP-Protocol-Version"] = "2025-11-25"
        c.request("POST", "/mcp", json.dumps({"jsonrpc":"2.0","method":"notifications/initialized"}), h)
        r = c.getresponse(); r.read()
    elif era == "stateless":
        h["MCP-Protocol-Version"] = "2026-07-28"; h["Mcp-Method"] = "tools/call"; h["Mcp-Name"] = "echo"
    heads.append(h)

def body(i):
    params = {"name": "echo", "arguments": {"message": msg}}
    if era == "stateless":
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                           "io.modelcontextprotocol/clientInfo": {"name": "xtask-bench", "version": "0"},
                           "io.modelcontextprotocol/clientCapabilities": {}}
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})

def run(n, start):
    for i in range(n):
        c = conns[i % 16]
        c.request("POST", "/mcp", body(start + i), heads[i % 16])
        r = c.getresponse(); data = r.read()
        assert r.status == 200 and (b'"result"' in data or era == "raw"), data

run(320, 1)
subprocess.run(["callgrind_control", "-i", "on", str(p.pid)], check=True, stdout=subprocess.DEVNULL)
N = int(os.environ.get("N", "2000"))
run(N, 1000)
subprocess.run(["callgrind_control", "-i", "off", str(p.pid)], check=True, stdout=subprocess.DEVNULL)
p.terminate(); p.wait()
total = 0
for f in glob.glob(out + "*"):
    for line in open(f):
        m = re.match(r"totals: (\d+)", line)
        if m: total += int(m.group(1)); break
print(f"{era}: {total/N/1000:.1f}k instructions per call ({out})")
