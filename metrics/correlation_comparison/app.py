"""The correlation_comparison Space: ``pip install -r requirements.txt && python app.py``,
then open http://127.0.0.1:7860."""
from pathlib import Path

from semrel.metrics.space_app import launch

# per config (the first is the module's default): the inputs the form is prefilled with, and options
EXAMPLES = {"default": {
    "inputs": {"predictions1": [1, 2, 3, 4, 5, 6, 7, 8, 10, 9], "predictions2": [2, 1, 4, 3, 6, 5, 8, 7, 10, 9],
               "references": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]},
    "options": {"seed": 0}}}

if __name__ == "__main__":
    launch(Path(__file__).with_name("correlation_comparison.py"), EXAMPLES)
