"""A small lighteval output folder for the tests: the committed results file plus the details
parquet files lighteval 0.13.0 writes beside it (``details/<model>/<date>/details_<task>_<date>.parquet``,
columns ``doc``, ``metric``, ``model_response``, as ``Dataset.from_list(asdict(detail))``
gives them). The details are written here, not committed: their names hold ``|``."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from conftest import EXAMPLES

SOURCE = EXAMPLES / "harness" / "lighteval"
STAMP = "2025-06-03T12-34-56.789012"
MODEL = "acme/tiny-lm"
RESULTS = SOURCE / "results" / MODEL / f"results_{STAMP}.json"


def _doc(i: int, query: str, choices: list[str], gold: int, task: str) -> dict[str, Any]:
    return {
        "query": query,
        "choices": choices,
        "gold_index": gold,
        "instruction": "",
        "specific": None,
        "unconditioned_query": None,
        "original_query": None,
        "id": str(i),
        "task_name": task,
        "fewshot_samples": [],
        "generation_size": None,
        "stop_sequences": None,
        "use_logits": False,
        "num_samples": 1,
    }


def _response(text: list[str], logprobs: list[float], prompt: str) -> dict[str, Any]:
    return {
        "input": prompt,
        "input_tokens": [1, 2, 3],
        "text": text,
        "output_tokens": [[4, 5]] if text else [],
        "text_post_processed": None,
        "reasonings": [],
        "logprobs": logprobs,
        "argmax_logits_eq_gold": [],
        "logits": None,
        "unconditioned_logprobs": None,
        "truncated_tokens_count": 0,
        "padded_tokens_count": 0,
    }


DETAILS: dict[str, list[dict[str, Any]]] = {
    "gsm8k|5": [
        {
            "doc": _doc(
                0,
                "Question: Tom has 3 apples and buys 2 more. How many apples does he have?\nAnswer:",
                ["5"],
                0,
                "gsm8k|5",
            ),
            "metric": {"extractive_match": 1.0},
            "model_response": _response(
                ["He has 3 + 2 = 5 apples. The answer is 5."], [], "Question: ... Tom has 3 apples"
            ),
        },
        {
            "doc": _doc(1, "Question: A box holds 4 rows of 6 eggs. How many eggs?\nAnswer:", ["24"], 0, "gsm8k|5"),
            "metric": {"extractive_match": 0.0},
            "model_response": _response(["4 + 6 = 10 eggs. The answer is 10."], [], "Question: ... A box holds"),
        },
    ],
    "arc:easy|0": [
        {
            "doc": _doc(
                7,
                "Question: Which gas do plants take in?\nAnswer:",
                [" oxygen", " carbon dioxide", " helium"],
                1,
                "arc:easy|0",
            ),
            "metric": {"acc": 1.0},
            "model_response": _response([], [-2.1, -0.4, -5.0], "Question: Which gas do plants take in?\nAnswer:"),
        },
        {
            "doc": _doc(8, "Question: What melts ice fastest?\nAnswer:", [" salt", " sand"], 0, "arc:easy|0"),
            "metric": {"acc": 0.0},
            "model_response": _response([], [-1.5, -0.9], "Question: What melts ice fastest?\nAnswer:"),
        },
        {
            "doc": _doc(9, "Question: Which is a mammal?\nAnswer:", [" shark", " whale"], 1, "arc:easy|0"),
            "metric": {"acc": 1.0},
            "model_response": _response([], [-3.0, -0.2], "Question: Which is a mammal?\nAnswer:"),
        },
    ],
}


def write_output(folder: Path, details: dict[str, list[dict[str, Any]]] | None = None) -> Path:
    """lighteval's output folder in ``folder`` (results, and details for gsm8k and arc:easy;
    none for mmlu:anatomy); returns the results file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    shutil.copytree(SOURCE, folder, dirs_exist_ok=True)
    target = folder / "details" / MODEL / STAMP
    target.mkdir(parents=True, exist_ok=True)
    for task, rows in (DETAILS if details is None else details).items():
        columns = sorted(rows[0]) if rows else ["doc", "metric", "model_response"]
        table = pa.Table.from_pylist([{c: row.get(c) for c in columns} for row in rows])
        pq.write_table(table, target / f"details_{task}_{STAMP}.parquet")
    return folder / "results" / MODEL / f"results_{STAMP}.json"
