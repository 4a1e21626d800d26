import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("lexical_overlap")
launch_gradio_widget(module)
