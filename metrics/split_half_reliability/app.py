"""The split_half_reliability Space (BWS config): ``python app.py``, then open http://127.0.0.1:7860."""
from pathlib import Path

from semrel.metrics.space_app import launch

EXAMPLE = {"tuples": [["a", "b", "c", "d"], ["a", "b", "c", "d"], ["a", "b", "c", "d"], ["a", "b", "c", "d"],
                      ["a", "b", "c", "e"], ["a", "b", "c", "e"], ["a", "b", "c", "e"], ["a", "b", "c", "e"]],
           "best": ["a", "a", "b", "a", "a", "b", "a", "a"],
           "worst": ["d", "c", "d", "d", "e", "e", "c", "e"]}
OPTIONS = {"trials": 100, "seed": 0}

if __name__ == "__main__":
    launch(Path(__file__).with_name("split_half_reliability.py"), EXAMPLE, OPTIONS)
