"""Training the models the project builds itself (`rag train-verifier`). Nothing at run time imports this package;
the CLI dispatches to it."""


def built_with(*packages: str) -> dict[str, str]:
    """The installed versions of the packages a model was built with, for its record: the same command, code and
    data give other bytes with other versions (the int8 embedder is quantised on each machine; a solver's last
    digits move), so a rebuild is byte for byte only with these: pinned in pyproject.toml (torch by the setup step,
    onnx-ir by onnxscript's pin)."""
    from importlib.metadata import version

    return {name: version(name) for name in packages}
