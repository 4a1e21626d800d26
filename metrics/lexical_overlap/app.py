"""The lexical_overlap Space: ``pip install -r requirements.txt && python app.py``,
then open http://127.0.0.1:7860."""
from pathlib import Path

from semrel.metrics.space_app import launch

# per config (the first is the module's default): the inputs the form is prefilled with, and options
EXAMPLES = {"default": {
    "inputs": {"sentence1": ["a cat sat", "dogs bark", "a b"], "sentence2": ["a cat ran", "birds sing", "a b"],
               "references": [0.6, 0.1, 1.0]},
    "options": {}}}

if __name__ == "__main__":
    launch(Path(__file__).with_name("lexical_overlap.py"), EXAMPLES)
