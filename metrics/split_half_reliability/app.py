from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(str(Path(__file__).with_name("split_half_reliability.py")))
launch_gradio_widget(module)
