"""The bws_scores Space: ``python app.py``, then open http://127.0.0.1:7860."""
from pathlib import Path

from semrel.metrics.space_app import launch

EXAMPLE = {"tuples": [["a", "b", "c", "d"], ["a", "b", "c", "e"], ["b", "c", "d", "e"]],
           "best": ["a", "b", "b"], "worst": ["d", "a", "e"]}
OPTIONS = {}

if __name__ == "__main__":
    launch(Path(__file__).with_name("bws_scores.py"), EXAMPLE, OPTIONS)
