"""Interop contract client built on the official Python MCP SDK (mcp 2.x).

Usage: python client.py [--mode legacy|auto] [--era handshake|stateless] [--timeout SECONDS] -- <server command> [args...]
       python client.py [--mode ...] [--era ...] [--timeout SECONDS] --url URL

Spawns the server over stdio (or, with --url, connects to a streamable HTTP
endpoint already running), runs every check of the contract and prints one
`ok: ...` / `FAIL: ...` line per check. Exit status 0 only when all checks pass.

--mode legacy (default) sends `initialize` straight away (handshake era, 2025-11-25).
--mode auto uses the SDK default: probe `server/discover` first and fall back to
`initialize` when the server rejects it (a handshake-only server answers -32601).
--era stateless negotiates 2026-07-28 (the SDK's auto mode: `server/discover`,
then stateless requests carrying `_meta`) and checks the stateless subset of the
contract: no sampling or elicitation (that era has no server-to-client requests)
and no logging/setLevel; logging is checked by opting in per request with
`io.modelcontextprotocol/logLevel` in `_meta`.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import warnings

import anyio
from mcp import Client, StdioServerParameters

sys.dont_write_bytecode = True  # no __pycache__ next to the scripts
from checks import Report, run_checks  # noqa: E402
from recorder import Recorder  # noqa: E402

# set_logging_level, logging and the sampling capability are flagged deprecated
# for 2026-07-28; the contract still exercises them.
warnings.simplefilter("ignore")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["legacy", "auto"], default="legacy")
    parser.add_argument(
        "--era",
        choices=["handshake", "stateless"],
        default="handshake",
        help="stateless: negotiate 2026-07-28 (server/discover) and run the stateless subset",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="bound for the whole run, in seconds")
    parser.add_argument("--url", help="a streamable HTTP endpoint to connect to instead of spawning a server")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- server command and arguments")
    args = parser.parse_args(argv)
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if args.url and args.command:
        parser.error("give either --url or a server command after --, not both")
    if not args.url and not args.command:
        parser.error("missing server command after -- (or --url)")
    return args


async def run(args: argparse.Namespace) -> Report:
    report = Report()
    rec = Recorder()
    server = args.url or StdioServerParameters(command=args.command[0], args=args.command[1:], env=dict(os.environ))
    client = Client(
        server,
        mode="auto" if args.era == "stateless" else args.mode,
        sampling_callback=rec.sampling,
        elicitation_callback=rec.elicitation,
        logging_callback=rec.logging,
        cache=None,  # every call must reach the server
        read_timeout_seconds=args.timeout,
    )
    try:
        with anyio.fail_after(args.timeout):
            async with client:
                report.check("initialize", True)
                await run_checks(client, rec, report, stateless=args.era == "stateless")
    except TimeoutError:
        report.check("run finished within the timeout", False, f"{args.timeout} s elapsed")
    except Exception as exc:  # boundary: a connect/transport failure is one failed check
        report.check("session", False, f"{type(exc).__name__}: {exc}")
    return report


def main() -> int:
    args = parse_args(sys.argv[1:])

    # Backstop in case teardown itself hangs past the anyio deadline.
    def give_up(signum: int, frame: object) -> None:
        print("FAIL: hard timeout (teardown hung)", flush=True)
        os._exit(3)

    signal.signal(signal.SIGALRM, give_up)
    signal.alarm(int(args.timeout) + 15)

    report = anyio.run(run, args)
    skipped = f", {report.skipped} skipped" if report.skipped else ""
    print(f"{report.passed} passed, {report.failed} failed{skipped}", flush=True)
    return 0 if report.failed == 0 and report.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
