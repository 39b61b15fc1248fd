#!/usr/bin/env python3
"""Instructions per `tools/call` of an echo server under callgrind: the
callgrind tables of docs/benchmarks.md. Needs valgrind (callgrind_control).

Usage:
  calls.py http BINARY session|stateless|raw|raw-stateless [ARGS...]
      16 keep-alive HTTP connections called round robin; BINARY prints its
      address first on stdout. 2,000 calls counted after 320. `raw` sends
      the session era's body (without the session's headers), and
      `raw-stateless` the stateless era's call as `stateless` sends it (its
      routing headers and `_meta`): the baseline of each era.
  calls.py stdio BINARY [ARGS...]
      newline-delimited JSON on the child's stdin/stdout, 64 requests in
      flight, after initialize. 5,000 calls counted after 640.

For example, after
  CARGO_PROFILE_PRODUCTION_DEBUG=line-tables-only cargo build --profile production \\
      -p mcp-examples --bin mcp-bench-echo-server -p xtask --bin raw-http-echo
run
  calls.py http target/production/mcp-bench-echo-server session --http
  calls.py http target/production/raw-http-echo raw
  calls.py http target/production/raw-http-echo raw-stateless
  calls.py stdio target/production/mcp-bench-echo-server

Only the counted calls are instrumented (callgrind_control -i on/off); the
profile is left in /tmp for callgrind_annotate. N overrides the count.
"""
import glob
import http.client
import json
import os
import re
import subprocess
import sys

MESSAGE = "x" * 64
STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "xtask-bench", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
INITIALIZE = {
    "jsonrpc": "2.0", "id": 0, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "xtask-callgrind", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(request_id, meta=None):
    params = {"name": "echo", "arguments": {"message": MESSAGE}}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def start(binary, args, out, **pipes):
    command = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
               f"--callgrind-out-file={out}", binary, *args]
    return subprocess.Popen(command, stderr=subprocess.DEVNULL, **pipes)


def instrument(child, on):
    subprocess.run(["callgrind_control", "-i", "on" if on else "off", str(child.pid)],
                   check=True, stdout=subprocess.DEVNULL)


def measure(child, run, warm_up, count):
    """Runs `warm_up` calls, then `count` with callgrind instrumenting."""
    run(warm_up, 1)
    instrument(child, True)
    run(count, 1_000_000)
    instrument(child, False)


def per_call(out, count):
    total = 0
    for path in glob.glob(out + "*"):
        with open(path) as profile:
            for line in profile:
                found = re.match(r"totals: (\d+)", line)
                if found:
                    total += int(found.group(1))
                    break
    return total / count


def http_calls(binary, era, args):
    out = f"/tmp/callgrind.http-{era}.{os.getpid()}.out"
    count = int(os.environ.get("N", "2000"))
    child = start(binary, args, out, stdout=subprocess.PIPE, text=True)
    address = child.stdout.readline().strip()
    host, port = address.rsplit(":", 1)
    base = {"Content-Type": "application/json",
            "Accept": "application/json, text/event-stream", "Host": address}
    connections = []
    for _ in range(16):
        connection = http.client.HTTPConnection(host, int(port))
        headers = dict(base)
        if era == "session":
            connection.request("POST", "/mcp", json.dumps(INITIALIZE), headers)
            response = connection.getresponse()
            response.read()
            headers["Mcp-Session-Id"] = response.getheader("mcp-session-id")
            headers["MCP-Protocol-Version"] = "2025-11-25"
            connection.request("POST", "/mcp", json.dumps(INITIALIZED), headers)
            connection.getresponse().read()
        elif era in ("stateless", "raw-stateless"):
            headers.update({"MCP-Protocol-Version": "2026-07-28",
                            "Mcp-Method": "tools/call", "Mcp-Name": "echo"})
        connections.append((connection, headers))
    meta = STATELESS_META if era in ("stateless", "raw-stateless") else None

    def run(n, first_id):
        for i in range(n):
            connection, headers = connections[i % len(connections)]
            connection.request("POST", "/mcp", json.dumps(call(first_id + i, meta)), headers)
            response = connection.getresponse()
            data = response.read()
            assert response.status == 200 and (era.startswith("raw") or b'"result"' in data), data

    measure(child, run, 320, count)
    child.terminate()
    child.wait()
    return out, per_call(out, count)


def stdio_calls(binary, args):
    out = f"/tmp/callgrind.stdio.{os.getpid()}.out"
    count = int(os.environ.get("N", "5000"))
    child = start(binary, args, out, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    pending = b""

    def send(*messages):
        child.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())

    def read_line():
        nonlocal pending
        while b"\n" not in pending:
            chunk = os.read(child.stdout.fileno(), 65536)
            if not chunk:
                raise SystemExit("the server closed its stdout")
            pending += chunk
        line, pending = pending.split(b"\n", 1)
        return line

    send(INITIALIZE)
    read_line()
    send(INITIALIZED)

    def run(n, first_id):
        sent = answered = 0
        while answered < n:
            batch = []
            while sent - answered < 64 and sent < n:
                batch.append(call(first_id + sent))
                sent += 1
            if batch:
                send(*batch)
            line = read_line()
            assert b'"result"' in line, line
            answered += 1

    measure(child, run, 640, count)
    child.stdin.close()
    child.wait()
    return out, per_call(out, count)


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "http":
        out, instructions = http_calls(sys.argv[2], sys.argv[3], sys.argv[4:])
        label = f"http {sys.argv[3]}"
    elif len(sys.argv) >= 3 and sys.argv[1] == "stdio":
        out, instructions = stdio_calls(sys.argv[2], sys.argv[3:])
        label = "stdio"
    else:
        sys.exit(__doc__)
    print(f"{label}: {instructions / 1000:.1f}k instructions per call ({out})")


if __name__ == "__main__":
    main()
