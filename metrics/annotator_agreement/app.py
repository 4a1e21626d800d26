"""The annotator_agreement Space: ``pip install -r requirements.txt && python app.py``,
then open http://127.0.0.1:7860."""
from pathlib import Path

from semrel.metrics.space_app import launch

# per config (the first is the module's default): the inputs the form is prefilled with, and options
EXAMPLES = {"default": {
    "inputs": {"items": ["a", "a", "b", "b", "c", "c"], "annotators": ["x", "y", "x", "y", "x", "y"],
               "ratings": [1, 2, 4, 4, 5, 6]},
    "options": {}}}

if __name__ == "__main__":
    launch(Path(__file__).with_name("annotator_agreement.py"), EXAMPLES)
