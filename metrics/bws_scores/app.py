"""The bws_scores Space: ``pip install -r requirements.txt && python app.py``,
then open http://127.0.0.1:7860."""
from pathlib import Path

from semrel.metrics.space_app import launch

# per config (the first is the module's default): the inputs the form is prefilled with, and options
EXAMPLES = {"default": {
    "inputs": {"tuples": [["a", "b", "c", "d"], ["a", "b", "c", "e"], ["b", "c", "d", "e"]],
               "best": ["a", "b", "b"], "worst": ["d", "a", "e"]},
    "options": {}}}

if __name__ == "__main__":
    launch(Path(__file__).with_name("bws_scores.py"), EXAMPLES)
