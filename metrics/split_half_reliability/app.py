"""The split_half_reliability Space, a tab per config ("bws", "ratings"): ``pip install -r
requirements.txt && python app.py``, then open http://127.0.0.1:7860."""
from pathlib import Path

from semrel.metrics.space_app import launch

# per config (the first is the module's default): the inputs the form is prefilled with, and options
EXAMPLES = {
    "bws": {
        "inputs": {"tuples": [["a", "b", "c", "d"], ["a", "b", "c", "d"], ["a", "b", "c", "d"], ["a", "b", "c", "d"],
                              ["a", "b", "c", "e"], ["a", "b", "c", "e"], ["a", "b", "c", "e"], ["a", "b", "c", "e"]],
                   "best": ["a", "a", "b", "a", "a", "b", "a", "a"],
                   "worst": ["d", "c", "d", "d", "e", "e", "c", "e"]},
        "options": {"trials": 100, "seed": 0}},
    "ratings": {
        "inputs": {"items": ["x", "x", "x", "y", "y", "y", "z", "z", "z", "w", "w", "w"],
                   "ratings": [1, 2, 1, 3, 4, 3, 5, 5, 4, 2, 3, 2]},
        "options": {"trials": 100, "seed": 0}}}

if __name__ == "__main__":
    launch(Path(__file__).with_name("split_half_reliability.py"), EXAMPLES)
