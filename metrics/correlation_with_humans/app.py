"""The correlation_with_humans Space: ``pip install -r requirements.txt && python app.py``,
then open http://127.0.0.1:7860."""
from pathlib import Path

from semrel.metrics.space_app import launch

# per config (the first is the module's default): the inputs the form is prefilled with, and options
EXAMPLES = {"default": {
    "inputs": {"predictions": [0.1, 0.4, 0.2, 0.8, 0.5, 0.9, 0.3, 0.7, 0.6, 0.05],
               "references": [[0, 1], [2, 2], [1, 0], [4, 5], [3, 2], [5, 5], [1, 2], [4, 3], [3, 4], [0, 0]]},
    "options": {"aggregation": "mean", "seed": 0}}}

if __name__ == "__main__":
    launch(Path(__file__).with_name("correlation_with_humans.py"), EXAMPLES)
