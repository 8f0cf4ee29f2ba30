"""What a provider's `local` section names, checked: the GGUF model file, the
chat template, and the arguments the llama.cpp server runs with."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.lazy import lazy_module
from caretz.providers.entry import LocalModel

if TYPE_CHECKING:
    from importlib import resources
else:
    # The package's files: only to find the built-in chat template.
    resources = lazy_module("importlib.resources")

BUILTIN_TEMPLATE = "chatml-tools"  # chatTemplate value naming the template caretz ships
BUILTIN_TEMPLATE_FILE = "chatml_tools.jinja"
GGUF_MAGIC = b"GGUF"


class LocalServerError(Exception):
    """The local model server could not start; the message says what to fix."""


@dataclass(frozen=True)
class LocalServerSpec:
    """Exactly what one server runs; equal specs share one server."""

    model_path: Path
    chat_template: Path | None = None
    context_size: int | None = None
    threads: int | None = None

    def argv(self) -> list[str]:
        args = ["--model", str(self.model_path)]
        if self.chat_template is not None:
            args += ["--chat-template", str(self.chat_template)]
        if self.context_size is not None:
            args += ["--context-size", str(self.context_size)]
        if self.threads is not None:
            args += ["--threads", str(self.threads)]
        return args


def builtin_template_path() -> Path:
    return Path(str(resources.files("caretz.providers").joinpath(BUILTIN_TEMPLATE_FILE)))


def server_spec(local: LocalModel, model_id: str, cwd: Path | None = None) -> LocalServerSpec:
    """The files a `local` section names, checked; relative paths are taken from `cwd`."""
    base = cwd or Path.cwd()
    model_path = _existing_file(base, local.model or model_id, "model file")
    _check_gguf(model_path)
    template = None
    if local.chat_template == BUILTIN_TEMPLATE:
        template = builtin_template_path()
    elif local.chat_template:
        template = _existing_file(base, local.chat_template, "chat template")
    return LocalServerSpec(model_path, template, local.context_size, local.threads)


def _existing_file(base: Path, name: str, what: str) -> Path:
    path = (base / Path(name).expanduser()).resolve()
    if not path.is_file():
        raise LocalServerError(f"{what} {path} does not exist")
    return path


def _check_gguf(path: Path) -> None:
    try:
        with path.open("rb") as file:
            magic = file.read(len(GGUF_MAGIC))
    except OSError as exc:
        raise LocalServerError(f"cannot read model file {path}: {exc.strerror}") from None
    if magic != GGUF_MAGIC:
        raise LocalServerError(f"{path} is not a GGUF model file (llama.cpp runs .gguf files)")


def display_path(path: Path) -> str:
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)
