"""``harness serve``'s command line: see :mod:`harness.online.serve` (issue 28).

Its top level imports only ``argparse``: the parser of every command loads it.
"""

from __future__ import annotations

import argparse
import signal
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["add_parser", "serve_command"]


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def _grace(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535, got {value}")
    return value


def add_parser(commands: Any) -> None:
    """``harness serve``'s arguments."""
    serve: argparse.ArgumentParser = commands.add_parser(
        "serve",
        help="check live traces against policies: an OTLP/HTTP receiver beside your backend",
        description="Receive OTLP/HTTP traces (/v1/traces, protobuf or JSON, gzip; content "
        "written as log events on /v1/logs, joined to its spans), evaluate "
        "every policy that selects each finished trace, and export one "
        "gen_ai.evaluation.result event per rule result and the harness.rule.* counters over "
        "OTLP/HTTP. GET /healthz answers ok.",
    )
    serve.add_argument(
        "--rules",
        nargs="+",
        required=True,
        metavar="POLICY.yaml",
        help="policy files (the format of `harness eval-traces --rules`)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument("--port", type=_port, default=4318, help="port (4318; 0: any free one)")
    serve.add_argument(
        "--trace-timeout",
        type=_seconds,
        default=30.0,
        metavar="S",
        help="evaluate a trace whose root span has not arrived S seconds after its latest span "
        "(default 30)",
    )
    serve.add_argument(
        "--root-grace",
        type=_grace,
        default=5.0,
        metavar="S",
        help="evaluate a trace S seconds after its root span arrives, taking the spans other "
        "services send later (default 5; 0: at once)",
    )
    serve.add_argument(
        "--otlp-endpoint",
        default=None,
        metavar="URL",
        help="where events and metrics go (base URL, e.g. http://collector:4318); default: "
        "the OTEL_EXPORTER_OTLP_* variables",
    )
    serve.add_argument(
        "--metric-interval",
        type=_seconds,
        default=10.0,
        metavar="S",
        help="export the counters every S seconds (default 10)",
    )


def _load(paths: list[str]) -> list[Any]:
    """The policies of ``paths``; ImportError while ``harness.policies`` is not there."""
    from harness.policies import load_policies  # type: ignore[import-not-found,unused-ignore]

    return list(load_policies(paths))


def serve_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Serve until interrupted (SIGINT / SIGTERM); exit 2 on a bad policy or address."""
    from harness.cli.exit_codes import EXIT_CONFIG, EXIT_OK
    from harness.errors import HarnessError

    try:
        import opentelemetry.exporter.otlp.proto.http  # noqa: F401
    except ImportError:
        err.print(
            "harness serve needs the OTLP exporters: pip install 'toolcall-harness[otlp]'",
            markup=False,
        )
        return EXIT_CONFIG
    try:
        policies = _load(args.rules)
    except ModuleNotFoundError as exc:
        if exc.name != "harness.policies":
            raise
        err.print(
            "harness serve: this version cannot load policy files yet (no harness.policies); "
            "run a RuleProcessor in the app instead (harness.online)"
        )
        return EXIT_CONFIG
    except HarnessError as exc:
        err.print(str(exc), markup=False, highlight=False)
        return EXIT_CONFIG
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())

    def ready(url: str) -> None:
        out.file.write(f"listening on {url}\n")
        out.file.flush()

    from harness.online.serve import serve

    try:
        spans = serve(
            policies,
            stop,
            host=args.host,
            port=args.port,
            trace_timeout=args.trace_timeout,
            root_grace=args.root_grace,
            otlp_endpoint=args.otlp_endpoint,
            metric_interval=args.metric_interval,
            ready=ready,
        )
    except OSError as exc:
        err.print(
            f"harness serve: cannot listen on {args.host}:{args.port}: {exc.strerror}",
            markup=False,
        )
        return EXIT_CONFIG
    out.file.write(f"received {spans} spans\n")
    return EXIT_OK
