import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("annotator_agreement")
launch_gradio_widget(module)
