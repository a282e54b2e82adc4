"""One refresh of the demo incident: locally, over loopback SSH in agent mode, and agentless.

Not a test. Run as root from the repository root (it starts a throwaway sshd on 127.0.0.1, as the tests do):

    python bench/bench_ssh.py [--refreshes 20] [--workers 4]

Prints, per mode: setup time (connect + agent start), median and p90 refresh time, and the bytes the
refresh puts on the SSH channel each way (counted at the channel: request/script out, JSON/text back).
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

from tests.ssh.conftest import SshEnv, _keygen, host_block  # noqa: E402  (the same sshd the tests start)
from triage_tui.demo.incident import DemoIncident  # noqa: E402
from triage_tui.host.base import CollectOptions  # noqa: E402
from triage_tui.host.select import local_host  # noqa: E402
from triage_tui.host.ssh import SshHost  # noqa: E402
from triage_tui.host.ssh_agent_bundle import build_zip  # noqa: E402
from triage_tui.host.ssh_connect import SshOptions  # noqa: E402


def measure(host, spec: str, refreshes: int) -> dict[str, float]:
    started = time.perf_counter()
    target = host.resolve([spec])
    setup_s = time.perf_counter() - started
    host.collect(target, CollectOptions())  # first refresh: deltas and log followers start
    sent0, received0 = getattr(host, "bytes_sent", 0), getattr(host, "bytes_received", 0)
    times = []
    for _ in range(refreshes):
        t0 = time.perf_counter()
        host.collect(target, CollectOptions())
        times.append(time.perf_counter() - t0)
    times.sort()
    return {
        "setup_ms": setup_s * 1000,
        "median_ms": statistics.median(times) * 1000,
        "p90_ms": times[int(0.9 * (len(times) - 1))] * 1000,
        "sent_per_refresh": (getattr(host, "bytes_sent", 0) - sent0) / refreshes,
        "received_per_refresh": (getattr(host, "bytes_received", 0) - received0) / refreshes,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refreshes", type=int, default=20)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    os.makedirs("/run/sshd", exist_ok=True)
    directory = Path(tempfile.mkdtemp(prefix="triage-bench-ssh-"))
    key = directory / "id_user"
    _keygen(key)
    (directory / "authorized_keys").write_text(Path(str(key) + ".pub").read_text())
    env = SshEnv(directory, key, directory / "known_hosts", directory / "ssh_config")
    env.known_hosts.write_text("")
    demo = DemoIncident(workers=args.workers, weights_mb=64)
    try:
        info = demo.start()
        server = env.sshd()
        env.trust(server)
        env.write_config(host_block("node", server, key))
        options = SshOptions("node", config_file=str(env.config), known_hosts=str(env.known_hosts), interactive=False)
        spec = str(info.launcher_pid)
        rows = []
        for label, make in (("local", local_host), ("ssh agent", lambda: SshHost(options)),
                            ("ssh agentless", lambda: SshHost(options, agentless=True))):
            host = make()
            try:
                rows.append((label, measure(host, spec, args.refreshes)))
            finally:
                host.close()
    finally:
        for server in env.servers:
            server.stop()
        demo.stop()
    print(f"demo incident: launcher + {args.workers} workers; {args.refreshes} refreshes each; "
          f"agent bundle {len(build_zip()) / 1024:.0f} KiB (sent once per connection)")
    print(f"{'mode':<15}{'setup ms':>10}{'median ms':>11}{'p90 ms':>9}{'sent B':>9}{'received B':>12}")
    for label, r in rows:
        print(f"{label:<15}{r['setup_ms']:>10.0f}{r['median_ms']:>11.1f}{r['p90_ms']:>9.1f}"
              f"{r['sent_per_refresh']:>9.0f}{r['received_per_refresh']:>12.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
