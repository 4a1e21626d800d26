import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("mse_lower_bound.py")
launch_gradio_widget(module)
