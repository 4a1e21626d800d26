import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("mse_lower_bound")
launch_gradio_widget(module)
