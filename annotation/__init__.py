"""semrel.annotation: making the next dataset.

Pairs from a corpus (:mod:`.pairs`), annotation-tool adapters and the way back to scores. Imports
``semrel.metrics`` and ``semrel.dataset_scripts``; ``semrel.trainers`` only through its scorer
interface, inside the function that scores pairs with a model. Importing has no side effects.
"""
