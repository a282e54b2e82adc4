"""What a refresh of a job costs per node: 1, 4 and 16 "nodes", each a real sshd on loopback in its own PID
and mount namespace running a piece of the job (a launcher and 3 ranks), watched in agent mode.

Not a test. Run as root from the repository root:

    python bench/bench_job.py [--nodes 1 4 16] [--refreshes 10]

Per size it prints: the first refresh (connect, upload and start the agent on every node, in parallel), the
median wall time of a later refresh of all nodes, triage's own CPU per refresh (all threads of this process:
the paramiko transports, the per-node engines, the job engine) and per node, the bytes per node per refresh
on the SSH channel, and the node side's CPU per refresh (the agents' processes, summed over nodes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine_line  # noqa: E402
from tests.ssh.conftest import SshEnv, _keygen, host_block  # noqa: E402  (the same sshd the tests start)
from triage_tui.fleet import Fleet, NodeWatch  # noqa: E402
from triage_tui.host.base import CollectOptions  # noqa: E402
from triage_tui.host.ssh import SshHost  # noqa: E402
from triage_tui.host.ssh_connect import SshOptions  # noqa: E402

PROGRAM = Path(__file__).resolve().parents[1] / "tests" / "ssh" / "job_programs.py"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def _agent_cpu_s() -> float:
    """CPU seconds of every running triage agent (the node side), read from /proc."""
    total = 0
    for name in os.listdir("/proc"):
        if not name.isdecimal():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if b"triage-agent" not in f.read():
                    continue
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            continue
    return total / CLK_TCK


def measure(count: int, refreshes: int, interval: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="triage-bench-job-") as tmp:
        d = Path(tmp)
        user_key = d / "id_user"
        _keygen(user_key)
        (d / "authorized_keys").write_text(Path(str(user_key) + ".pub").read_text())
        env = SshEnv(d, user_key, d / "known_hosts", d / "ssh_config")
        env.known_hosts.write_text("")
        os.makedirs("/run/sshd", exist_ok=True)
        blocks = []
        try:
            for i in range(1, count + 1):
                ready = d / f"ready-{i}"
                piece = f"{sys.executable} {PROGRAM} wait 3 {ready} job_launcher >/dev/null 2>&1 &"
                server = env.sshd(command_prefix=("unshare", "--pid", "--fork", "--mount-proc", "--kill-child",
                                                  "sh", "-c", piece + ' exec "$@"', "sh"))
                env.trust(server)
                blocks.append(host_block(f"b{i}", server, user_key, f"  UserKnownHostsFile {env.known_hosts}\n"))
            env.write_config("".join(blocks))
            while not all((d / f"ready-{i}").exists() for i in range(1, count + 1)):
                time.sleep(0.1)
            hosts: list[SshHost] = []

            def factory(name: str):
                def make() -> SshHost:
                    host = SshHost(SshOptions(destination=name, config_file=str(env.config), interactive=False))
                    hosts.append(host)
                    return host
                return make

            watches = [NodeWatch(f"b{i}", factory(f"b{i}"), ["name:job_launcher"], None,
                                 CollectOptions(interval_s=interval)) for i in range(1, count + 1)]
            fleet = Fleet(watches, concurrency=16)
            try:
                t0 = time.monotonic()
                first = fleet.tick()
                first_s = time.monotonic() - t0
                assert all(e.reachable for e in first.evidence), [e.reason for e in first.evidence]
                walls, cpus, agent_cpus, rx, tx = [], [], [], [], []
                for _ in range(refreshes):
                    time.sleep(interval)
                    sent = sum(h.bytes_sent for h in hosts)
                    received = sum(h.bytes_received for h in hosts)
                    cpu, agents, t = time.process_time(), _agent_cpu_s(), time.monotonic()
                    fleet.tick()
                    walls.append((time.monotonic() - t) * 1000)
                    cpus.append((time.process_time() - cpu) * 1000)
                    agent_cpus.append((_agent_cpu_s() - agents) * 1000)
                    tx.append((sum(h.bytes_sent for h in hosts) - sent) / count)
                    rx.append((sum(h.bytes_received for h in hosts) - received) / count)
            finally:
                fleet.close()
        finally:
            for server in env.servers:
                server.stop()
    cpu = statistics.median(cpus)
    return {"nodes": count, "first_s": first_s, "wall_ms": statistics.median(walls), "cpu_ms": cpu,
            "cpu_per_node_ms": cpu / count, "agent_cpu_ms": statistics.median(agent_cpus) / count,
            "up_b": statistics.median(tx), "down_b": statistics.median(rx)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--nodes", type=int, nargs="+", default=[1, 4, 16])
    p.add_argument("--refreshes", type=int, default=10)
    p.add_argument("--interval", type=float, default=1.0)
    args = p.parse_args()
    print(machine_line())
    print("| nodes | first refresh (connect + agent, parallel) | refresh of all nodes, wall | triage CPU per refresh "
          "| per node | agent CPU per node | bytes per node up / down |")
    print("|---|---|---|---|---|---|---|")
    for n in args.nodes:
        r = measure(n, args.refreshes, args.interval)
        print(f"| {n} | {r['first_s']:.2f} s | {r['wall_ms']:.0f} ms | {r['cpu_ms']:.1f} ms | {r['cpu_per_node_ms']:.1f} ms "
              f"| {r['agent_cpu_ms']:.1f} ms | {r['up_b']:.0f} B / {r['down_b'] / 1024:.1f} KiB |", flush=True)


if __name__ == "__main__":
    main()
