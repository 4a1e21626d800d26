"""The mse_lower_bound Space: ``pip install -r requirements.txt && python app.py``,
then open http://127.0.0.1:7860."""
from pathlib import Path

from semrel.metrics.space_app import launch

# per config (the first is the module's default): the inputs the form is prefilled with, and options
EXAMPLES = {"default": {
    "inputs": {"annotations": [[1, 2, 2, 3], [0, 0, 1, 1], [4, 5, 5, 5]], "predictions": [2.0, 0.5, 4.5]},
    "options": {"model": "t"}}}

if __name__ == "__main__":
    launch(Path(__file__).with_name("mse_lower_bound.py"), EXAMPLES)
