"""The command line: `triage [TARGET ...]` (the app) and its non-interactive faces.

This module only parses arguments and dispatches; each face lives in `commands/<name>.py`
as `run(args) -> int`. Errors the user can fix print one line and exit non-zero.
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
from collections.abc import Sequence
from typing import Optional

from . import __version__

SUBCOMMANDS = ("report", "stacks", "diagnose", "demo", "replay", "help")

USAGE = (
    "triage [-h] [-V] [OPTIONS] [TARGET ...]\n"
    "       triage {" + ",".join(SUBCOMMANDS) + "} ...   (triage help COMMAND for one of them)"
)

EXIT_CODES = (
    "exit status: 0 success; 1 runtime failure (no such process, a file or node that cannot be read); "
    "2 usage error (bad option or value, malformed target, an interactive face without a terminal); "
    "130 interrupted (Ctrl-C)."
)

TARGET_HELP = (
    "what to watch: a PID, name:REGEX (matched against the full command line) or :PORT "
    "(the process listening on it, else the one whose command line asks for it). Each selects a root; "
    "its whole subtree is watched. None: triage picks candidates and says why."
)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):  # nan and inf pass `<= 0` and then never end a watch loop
        raise argparse.ArgumentTypeError(f"must be a finite number: {text!r}")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0: {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0: {text!r}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 < value < 65536:
        raise argparse.ArgumentTypeError(f"port out of range 1-65535: {text!r}")
    return value


def _add_watch_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("targets", nargs="*", metavar="TARGET", help=TARGET_HELP)
    p.add_argument("--log", action="append", default=[], metavar="FILE", help="follow this log file (repeatable)")
    p.add_argument("--port", type=_port, metavar="N", help="check whether the server answers on this port")
    p.add_argument("--interval", type=_positive_float, default=2.0, metavar="S", help="refresh interval (default 2 s)")
    p.add_argument(
        "--smaps-budget-ms", type=_positive_float, default=100.0, metavar="MS",
        help="time per refresh allowed for smaps_rollup (PSS/USS) reads (default 100 ms)",
    )
    p.add_argument("--auto-stacks", action="store_true", default=True,
                   help="capture stacks once by itself when the whole target idles (the default)")
    p.add_argument("--no-auto-stacks", dest="auto_stacks", action="store_false",
                   help="never capture stacks unasked (py-spy pauses each process for a moment)")


def _add_record_args(p: argparse.ArgumentParser) -> None:
    from .record.retention import RETENTION_TEXT  # not the recorder: it imports the model and its codec

    p.add_argument(
        "--record", metavar="FILE|DIR/",
        help="record the incident to FILE (gzip-compressed when it ends in .gz), or to a new file inside DIR/ "
        "(an existing directory, or a name ending in /). Default: a new .jsonl.gz under the XDG state dir "
        f"($XDG_STATE_HOME/triage, else ~/.local/state/triage), where {RETENTION_TEXT}",
    )
    p.add_argument("--no-record", action="store_true", help="do not record this run")


def _add_format_arg(p: argparse.ArgumentParser, choices: tuple[str, ...], default: str, what: str = "") -> None:
    """--format on every face that prints, with --json as its short alias."""
    p.add_argument("--format", choices=choices, default=default,
                   help=f"{what}output format (default {default})")
    p.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")


def _add_theme_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--theme", choices=("dark", "light"), default="dark", help="colour theme")


def _add_ssh_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("remote node")
    g.add_argument("--ssh", dest="ssh_specs", action="append", default=[], metavar="[USER@]HOST[:PORT]",
                   help="watch a node over SSH (honours ~/.ssh/config); repeatable, and a host list or range "
                   "(n[1-3], gpu[01-16], a,b,c) watches every node of a job")
    g.add_argument("-i", dest="identity", metavar="KEY", help="private key for --ssh")
    g.add_argument("--ssh-config", metavar="FILE", help="ssh config file instead of ~/.ssh/config")
    g.add_argument("--accept-new-host-key", action="store_true", help="record an unknown host key (never a changed one)")
    g.add_argument("--agentless", action="store_true", help="run plain commands on the node instead of the agent")
    j = p.add_argument_group("a job on many nodes")
    j.add_argument("--hostfile", dest="hostfiles", action="append", default=[], metavar="FILE",
                   help="nodes from an MPI/DeepSpeed hostfile (one host per line, slots= ignored); repeatable")
    j.add_argument("--slurm", metavar="JOBID", help="the nodes and processes of a running Slurm job (scontrol)")
    j.add_argument("--srun", action="store_true",
                   help="with --slurm: start the agent on each node through `srun --overlap --jobid` instead of SSH")
    j.add_argument("--node-timeout", type=_positive_float, default=30.0, metavar="S",
                   help="a node that has not answered a refresh within S seconds is shown late (default 30)")
    j.add_argument("--concurrency", type=_positive_int, default=16, metavar="N",
                   help="nodes refreshed at once (default 16)")


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    top = argparse.ArgumentParser(
        prog="triage",
        usage=USAGE,
        description="One screen for a multi-process server that has gone silent: process tree, GPUs, true "
        "memory, log tail, stacks, and ranked hypotheses. Commands: report (watch, then print a report), "
        "stacks (every worker's stack at once), diagnose (pasted text), demo (a built-in incident), "
        "replay (a recorded incident), help [COMMAND].",
        epilog=EXIT_CODES,
    )
    top.add_argument("-V", "--version", action="version", version=f"triage {__version__}")
    _add_watch_args(top)
    _add_record_args(top)
    _add_ssh_args(top)
    _add_theme_arg(top)

    subs: dict[str, argparse.ArgumentParser] = {}

    p = argparse.ArgumentParser(prog="triage report", description="Watch the target for a while and print what was seen.",
                                epilog=EXIT_CODES)
    _add_watch_args(p)
    _add_record_args(p)
    _add_ssh_args(p)
    p.add_argument("--duration", type=_positive_float, default=15.0, metavar="S",
                   help="how long to watch (default 15 s: idle needs 10 s of watching to be judged)")
    _add_format_arg(p, ("md", "json"), "md")
    p.add_argument("--from", dest="from_file", metavar="FILE", help="report on a recorded incident instead of watching")
    p.add_argument("--no-stacks", dest="stacks", action="store_false",
                   help="take no stack capture (by default one py-spy dump of an idle or unexplained target, which "
                        "pauses each process for a moment)")
    subs["report"] = p

    p = argparse.ArgumentParser(prog="triage stacks", description="Capture every worker's stack at once, grouped.",
                                epilog=EXIT_CODES)
    p.add_argument("targets", nargs="*", metavar="TARGET", help=TARGET_HELP)
    p.add_argument("--native", action="store_true", help="include native frames (py-spy --native)")
    p.add_argument("--locals", action="store_true", help="include local variables (py-spy --locals)")
    _add_format_arg(p, ("text", "json"), "text", "text: grouped stacks; json: the whole capture; ")
    p.add_argument("--timeout", type=_positive_float, default=10.0, metavar="S", help="per-process time limit (default 10 s)")
    _add_ssh_args(p)
    subs["stacks"] = p

    p = argparse.ArgumentParser(
        prog="triage diagnose",
        description="Run the diagnosis engine on pasted text (py-spy dumps, ps, free, nvidia-smi, logs, ...).",
        epilog=EXIT_CODES,
    )
    p.add_argument("files", nargs="*", metavar="FILE", help="files to read (default: standard input)")
    _add_format_arg(p, ("md", "json"), "md")
    subs["diagnose"] = p

    p = argparse.ArgumentParser(prog="triage demo", description="Start the built-in simulated incident and attach to it.",
                                epilog=EXIT_CODES)
    p.add_argument("--workers", type=int, default=8, metavar="N", help="worker processes (default 8)")
    p.add_argument("--weights-mb", type=int, default=256, metavar="MB", help="size of the shared weights file (default 256)")
    p.add_argument("--report", action="store_true", help="print the report instead of opening the app")
    p.add_argument("--duration", type=_positive_float, default=15.0, metavar="S",
                   help="with --report: how long to watch (default 15 s)")
    _add_format_arg(p, ("md", "json"), "md", "with --report: ")
    _add_record_args(p)
    p.add_argument("--interval", type=_positive_float, default=2.0, metavar="S", help="refresh interval (default 2 s)")
    p.add_argument("--auto-stacks", action="store_true", default=True,
                   help="capture stacks once by itself when the demo idles (the default)")
    p.add_argument("--no-auto-stacks", dest="auto_stacks", action="store_false", help="never capture stacks unasked")
    _add_theme_arg(p)
    subs["demo"] = p

    p = argparse.ArgumentParser(prog="triage replay", description="Open the app on a recorded incident "
                                "(with --format, print its report instead, like `triage report --from FILE`).",
                                epilog=EXIT_CODES)
    p.add_argument("file", metavar="FILE", help="a record written by triage (JSON lines, gzip-compressed or not)")
    _add_theme_arg(p)
    p.add_argument("--format", choices=("app", "md", "json"), default="app",
                   help="app: open the app (default); md or json: print the report of the record")
    p.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")
    subs["replay"] = p

    p = argparse.ArgumentParser(prog="triage help", description="Print the help of triage or of one of its commands.")
    p.add_argument("command", nargs="?", metavar="COMMAND", help="one of: " + ", ".join(SUBCOMMANDS))
    subs["help"] = p

    return top, subs


def parse(argv: Sequence[str]) -> tuple[str, argparse.Namespace]:
    top, subs = build_parser()
    command, parser = (argv[0], subs[argv[0]]) if argv and argv[0] in subs else ("app", top)
    args = parser.parse_args(list(argv[1:] if command != "app" else argv))
    problem = _nodes(args)
    if problem is not None:
        parser.error(problem)  # a usage error like any other: one line, exit 2
    return command, args


def _nodes(args: argparse.Namespace) -> Optional[str]:
    """Expand --ssh lists and ranges into `args.nodes`; `args.ssh` stays the one destination of a
    single-node run (None for a job). Returns the problem with the list, or None."""
    if not hasattr(args, "ssh_specs"):
        return None
    if not args.ssh_specs:  # no --ssh: nothing to expand (and the node-list parser not imported before the app)
        args.nodes, args.ssh = [], None
        return None
    from .host.node_list import NodeListError, nodes_from

    try:
        args.nodes = nodes_from(args.ssh_specs)
    except NodeListError as exc:
        return str(exc)
    args.ssh = args.nodes[0] if len(args.nodes) == 1 else None
    if args.slurm and args.nodes:
        return "--slurm finds the job's nodes itself: give it without --ssh"
    return None


def help_text(command: Optional[str]) -> Optional[str]:
    """`triage help [COMMAND]`: the help of the top level or of COMMAND; None for an unknown COMMAND."""
    top, subs = build_parser()
    if not command:
        return top.format_help()
    parser = subs.get(command)
    return parser.format_help() if parser is not None else None


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command, args = parse(argv)
    if command == "help":
        text = help_text(args.command)
        if text is None:  # a usage error, said as commands.fail says it (cli imports no face statically)
            print(f"triage: error: no command {args.command!r}; the commands are: {', '.join(SUBCOMMANDS)}",
                  file=sys.stderr)
            return 2
        sys.stdout.write(text)
        return 0
    module = importlib.import_module(f".commands.{command}", __package__)
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
