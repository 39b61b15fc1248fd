#!/usr/bin/env python3
"""Instructions per tools/call under callgrind over stdio, 64 in flight
(docs/benchmarks.md, the callgrind tables). Needs valgrind.
Usage: stdio_calls.py BINARY [ARGS...], e.g.
  stdio_calls.py target/production/mcp-bench-echo-server
  stdio_calls.py target/production/mcp-transport-test-peer --raw
"""
import glob
import json
import os
import re
import subprocess
import sys
binary = sys.argv[1]; extra = sys.argv[2:]
out = f"/tmp/cgs.{os.getpid()}.out"
p = subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", binary] + extra,
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
w = p.stdin; r = p.stdout
def send(o): w.write((json.dumps(o) + "\n").encode())
buf = b""
def read_line():
    global buf
    while b"\n" not in buf:
        chunk = os.read(r.fileno(), 65536)
        if not chunk: raise SystemExit("eof")
        buf += chunk
    line, buf = buf.split(b"\n", 1)
    return line
send({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cg","version":"0"}}})
read_line()
send({"jsonrpc":"2.0","method":"notifications/initialized"})
msg = "x" * 64
def run(n, start):
    sent = got = 0
    nid = start
    while got < n:
        batch = []
        while sent - got < 64 and sent < n:
            batch.append(json.dumps({"jsonrpc":"2.0","id":nid,"method":"tools/call","params":{"name":"echo","arguments":{"message":msg}}}) + "\n")
            nid += 1; sent += 1
        if batch: w.write("".join(batch).encode())
        line = read_line(); assert b'"result"' in line, line; got += 1
run(640, 1)
subprocess.run(["callgrind_control", "-i", "on", str(p.pid)], check=True, stdout=subprocess.DEVNULL)
N = int(os.environ.get("N", "5000"))
run(N, 100000)
subprocess.run(["callgrind_control", "-i", "off", str(p.pid)], check=True, stdout=subprocess.DEVNULL)
w.close(); p.wait()
total = 0
for f in glob.glob(out + "*"):
    for line in open(f):
        m = re.match(r"totals: (\d+)", line)
        if m: total += int(m.group(1)); break
print(f"stdio: {total/N/1000:.1f}k instructions per call ({out})")
