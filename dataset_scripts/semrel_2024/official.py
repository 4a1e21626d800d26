"""The figures SemEval-2024 Task 1 published on its test splits (Ousidhoum et al. 2024, "SemEval-2024
Task 1: Semantic Textual Relatedness for African and Asian Languages"), Spearman per language:

- :data:`LABSE`: Track A's official baseline (LaBSE);
- :data:`BEST`: the best Track A submission per language;
- :data:`LABSE_CROSS`: Track C's official baseline (LaBSE-Cross: no labelled data of the target
  language).

Spanish test labels were never published, so its two Track A figures cannot be checked here.
"""

from __future__ import annotations

LABSE = {"amh": 0.85, "arq": 0.60, "ary": 0.77, "eng": 0.83, "esp": 0.70, "hau": 0.69, "kin": 0.72,
         "mar": 0.88, "tel": 0.82}
BEST = {"amh": 0.889, "arq": 0.682, "ary": 0.863, "eng": 0.860, "esp": 0.740, "hau": 0.764,
        "kin": 0.817, "mar": 0.911, "tel": 0.873}
LABSE_CROSS = {"afr": 0.79, "amh": 0.84, "arb": 0.61, "arq": 0.46, "ary": 0.40, "eng": 0.80,
               "esp": 0.62, "hau": 0.62, "hin": 0.76, "ind": 0.47, "kin": 0.57}
