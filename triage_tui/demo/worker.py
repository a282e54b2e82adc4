"""One demo worker: renamed, maps the shared weights, then waits on a barrier (or, for one rank, elsewhere).

Started by the launcher with argv[0] replaced (`demo::scheduler_TP3 -m triage_tui.demo.worker ...`) and
/proc/self/comm set, as the incident's workers renamed themselves with setproctitle: a `grep python`
does not find them. The function names below are what a py-spy dump shows, so they tell the story:
N-1 ranks sit in capture_cuda_graphs → all_reduce → barrier → _recv_from_peers, and the odd rank in
capture_cuda_graphs → init_drafter → _wait_for_draft_model, never reaching the barrier. Nothing here
touches or imitates a GPU; the names only mirror the incident's phases.
"""

from __future__ import annotations

import argparse
import mmap
import os
import signal
import socket
import sys
import threading
import time

from .linux_prctl import die_with_parent, set_comm

PAGE = mmap.PAGESIZE
SHARDS = 64


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="demo worker")
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--tp-size", type=int, required=True)
    p.add_argument("--weights", required=True)
    p.add_argument("--ready-fd", type=int, required=True)
    p.add_argument("--odd-rank", type=int, required=True)
    p.add_argument("--launcher-pid", type=int, required=True)
    return p.parse_args(argv)


def _progress_bar(done: int, total: int, started: float) -> str:
    elapsed = max(time.monotonic() - started, 1e-6)
    percent = 100 * done // total
    filled = "█" * (percent // 10) + " " * (10 - percent // 10)
    return (
        f"\rLoading safetensors checkpoint shards: {percent:3d}% Completed | {filled}| {done}/{total} "
        f"[{elapsed:05.2f}s, {done / elapsed:.2f}it/s]"
    )


def load_weights(args: argparse.Namespace) -> mmap.mmap:
    """Map the shared weights file and touch every page, so each worker's RSS counts all of it."""
    with open(args.weights, "rb") as f:
        weights = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
    size = len(weights)
    shard = max(size // SHARDS, PAGE)
    started = time.monotonic()
    checksum = 0
    for index in range(SHARDS):
        for offset in range(index * shard, min((index + 1) * shard, size), PAGE):
            checksum ^= weights[offset]
        if args.rank == 0:  # like tqdm in TP0: one bar, redrawn with \r, on stderr
            sys.stderr.write(_progress_bar(index + 1, SHARDS, started))
            sys.stderr.flush()
    if args.rank == 0:
        sys.stderr.write("\n")
        sys.stderr.flush()
    return weights


def announce_ready(args: argparse.Namespace) -> None:
    """Tell the launcher this rank has loaded and is about to block (the demo's READY handshake)."""
    os.write(args.ready_fd, f"{args.rank} {os.getpid()}\n".encode())
    os.close(args.ready_fd)


def _recv_from_peers(sock: socket.socket) -> bytes:
    return sock.recv(1)  # no peer ever sends: this is the hang


def barrier(args: argparse.Namespace) -> bytes:
    peers, _held_open = socket.socketpair()  # the other end stays open, so recv never sees EOF
    announce_ready(args)
    return _recv_from_peers(peers)


def all_reduce(args: argparse.Namespace) -> bytes:
    return barrier(args)


def _wait_for_draft_model(args: argparse.Namespace) -> None:
    draft_loaded = threading.Event()
    announce_ready(args)
    draft_loaded.wait()  # nobody sets it: this rank never reaches the barrier the others wait in


def init_drafter(args: argparse.Namespace) -> None:
    _wait_for_draft_model(args)


def capture_cuda_graphs(args: argparse.Namespace) -> None:
    if args.rank == args.odd_rank:
        init_drafter(args)
    all_reduce(args)


def init_model_worker(args: argparse.Namespace, weights: mmap.mmap) -> None:
    capture_cuda_graphs(args)


def run_scheduler_process(args: argparse.Namespace) -> None:
    weights = load_weights(args)
    init_model_worker(args, weights)


def main(argv: list[str]) -> int:
    args = _parse(argv)
    die_with_parent(signal.SIGKILL)
    if os.getppid() != args.launcher_pid:  # the launcher died before prctl took effect
        return 1
    set_comm(f"scheduler_TP{args.rank}")
    run_scheduler_process(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
