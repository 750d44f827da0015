"""Generate the pydantic models from the current schema version (``python tools/dev.py models``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from eee.store.schemas import Registry, schemas_dir

OPTIONS = [
    "--input-file-type", "jsonschema",
    "--output-model-type", "pydantic_v2.BaseModel",
    "--disable-timestamp",
    "--target-python-version", "3.11",
    "--use-standard-collections",
    "--use-union-operator",
    "--use-schema-description",
    "--field-constraints",
    "--formatters", "builtin",
    "--ignore-pyproject",
]  # fmt: skip

CLASS_NAMES = {"eval": "EvaluationRecord", "instance_level_eval": "InstanceLevelRow"}
MODELS_DIR = Path(__file__).resolve().parent


def module_name(kind: str, version: str) -> str:
    return f"{kind}_v{version.replace('.', '_')}.py"


def generate(out_dir: Path = MODELS_DIR) -> list[Path]:
    """Generate into a scratch folder (so no project settings leak into the formatting), then copy."""

    version = Registry.load().current
    written = []
    scratch = Path(tempfile.mkdtemp(prefix="eee-models-"))
    for kind, class_name in CLASS_NAMES.items():
        target = scratch / module_name(kind, version)
        cmd = [
            sys.executable, "-m", "datamodel_code_generator",
            "--input", str(schemas_dir() / version / f"{kind}.schema.json"),
            "--output", str(target),
            "--class-name", class_name,
            *OPTIONS,
        ]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        # the generator writes the input path it was given; keep the file independent of the checkout
        text = target.read_text(encoding="utf-8")
        text = text.replace(str(schemas_dir()), "schemas")
        final = out_dir / target.name
        final.write_text(text, encoding="utf-8")
        written.append(final)
    shutil.rmtree(scratch, ignore_errors=True)
    return written


if __name__ == "__main__":  # pragma: no cover
    for path in generate():
        print(path)
