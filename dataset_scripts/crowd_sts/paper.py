"""Reference numbers of paper 002 (Solomon et al. 2021) for the measures we can compute offline.

Pearson correlation of automated measures with pair mean labels over all 13,225 pairs. The paper's
names: 1-gram_overlap = word_overlap, chrfScore = chrf, ROUGE-l = rougeL (Table 1 prints it as a
second "ROUGE-1" row, identified by Table 4). Filter numbers: [1] slow, [2] low variance,
[3] high random, [4] disagreeable, [5] sentimentally dis-aligned. Table 1's "filtered" column is
the combination of all five (its % changes equal Table 3/4 row [1, 2, 3, 4, 5]).
"""

MEASURE_NAMES = {"rouge1": "ROUGE-1", "bleu1": "BLEU-1", "rougeL": "ROUGE-L",
                 "word_overlap": "word overlap", "chrf": "chrF", "rouge2": "ROUGE-2",
                 "bleu": "BLEU", "minilm_cosine": "MiniLM cosine"}

# Table 1: measure -> (baseline r, filtered r, % change)
TABLE1 = {
    "rouge1": (0.61, 0.65, 7.6), "bleu1": (0.60, 0.65, 7.9), "rougeL": (0.60, 0.65, 8.0),
    "word_overlap": (0.59, 0.64, 8.0), "chrf": (0.58, 0.63, 7.3), "rouge2": (0.53, 0.58, 8.4),
    "bleu": (0.41, 0.45, 9.0),
}

# Table 2: measure -> (radicals baseline, radicals after filter, centrists baseline, after)
TABLE2 = {
    "rouge1": (0.70, 0.70, 0.28, 0.45), "bleu1": (0.69, 0.69, 0.28, 0.46),
    "rougeL": (0.69, 0.69, 0.28, 0.46), "word_overlap": (0.68, 0.68, 0.28, 0.45),
    "chrf": (0.67, 0.67, 0.28, 0.44), "rouge2": (0.61, 0.61, 0.26, 0.41),
    "bleu": (0.47, 0.48, 0.21, 0.32),
}

# Tables 3 and 4: filter combination -> measure -> % change of r against the baseline
TABLE3 = {
    (1,): {"bleu": -4.34, "bleu1": -3.54, "chrf": -3.56, "rouge1": -3.51, "rouge2": -3.87, "rougeL": -3.56, "word_overlap": -3.69},
    (2,): {"bleu": 7.31, "bleu1": 7.47, "chrf": 7.21, "rouge1": 7.54, "rouge2": 7.25, "rougeL": 7.52, "word_overlap": 7.59},
    (3,): {"bleu": 4.09, "bleu1": 4.12, "chrf": 3.84, "rouge1": 4.05, "rouge2": 3.91, "rougeL": 4.05, "word_overlap": 4.01},
    (4,): {"bleu": 0.01, "bleu1": 0.01, "chrf": 0.0, "rouge1": 0.01, "rouge2": 0.0, "rougeL": 0.01, "word_overlap": 0.01},
    (5,): {"bleu": -8.53, "bleu1": -9.77, "chrf": -9.45, "rouge1": -9.97, "rouge2": -8.85, "rougeL": -9.58, "word_overlap": -9.67},
    (1, 2): {"bleu": 4.76, "bleu1": 5.81, "chrf": 5.38, "rouge1": 5.87, "rouge2": 5.24, "rougeL": 5.82, "word_overlap": 5.76},
    (1, 3): {"bleu": 0.38, "bleu1": 1.24, "chrf": 0.93, "rouge1": 1.17, "rouge2": 0.65, "rougeL": 1.12, "word_overlap": 0.96},
    (1, 4): {"bleu": -4.33, "bleu1": -3.52, "chrf": -3.55, "rouge1": -3.49, "rouge2": -3.86, "rougeL": -3.54, "word_overlap": -3.68},
    (1, 5): {"bleu": -11.5, "bleu1": -12.04, "chrf": -11.79, "rouge1": -12.23, "rouge2": -11.5, "rougeL": -11.86, "word_overlap": -12.07},
    (2, 3): {"bleu": 10.6, "bleu1": 10.69, "chrf": 10.34, "rouge1": 10.76, "rouge2": 10.41, "rougeL": 10.65, "word_overlap": 10.78},
    (2, 4): {"bleu": 7.31, "bleu1": 7.49, "chrf": 7.22, "rouge1": 7.56, "rouge2": 7.25, "rougeL": 7.54, "word_overlap": 7.61},
    (2, 5): {"bleu": 7.5, "bleu1": 5.73, "chrf": 5.46, "rouge1": 5.44, "rouge2": 6.58, "rougeL": 5.88, "word_overlap": 5.95},
    (3, 4): {"bleu": 4.09, "bleu1": 4.13, "chrf": 3.84, "rouge1": 4.06, "rouge2": 3.91, "rougeL": 4.06, "word_overlap": 4.01},
    (3, 5): {"bleu": -2.88, "bleu1": -4.38, "chrf": -4.51, "rouge1": -4.72, "rouge2": -3.67, "rougeL": -4.28, "word_overlap": -4.39},
    (4, 5): {"bleu": -8.5, "bleu1": -9.75, "chrf": -9.43, "rouge1": -9.95, "rouge2": -8.83, "rougeL": -9.55, "word_overlap": -9.65},
    (1, 2, 3): {"bleu": 8.89, "bleu1": 9.65, "chrf": 9.11, "rouge1": 9.67, "rouge2": 9.09, "rougeL": 9.54, "word_overlap": 9.55},
    (1, 2, 4): {"bleu": 4.76, "bleu1": 5.83, "chrf": 5.39, "rouge1": 5.89, "rouge2": 5.24, "rougeL": 5.83, "word_overlap": 5.77},
    (1, 2, 5): {"bleu": 6.95, "bleu1": 5.55, "chrf": 5.14, "rouge1": 5.22, "rouge2": 6.14, "rougeL": 5.67, "word_overlap": 5.66},
    (1, 3, 4): {"bleu": 0.37, "bleu1": 1.25, "chrf": 0.94, "rouge1": 1.19, "rouge2": 0.65, "rougeL": 1.13, "word_overlap": 0.96},
    (1, 3, 5): {"bleu": -5.25, "bleu1": -5.95, "chrf": -6.18, "rouge1": -6.29, "rouge2": -5.72, "rougeL": -5.88, "word_overlap": -6.11},
    (1, 4, 5): {"bleu": -11.47, "bleu1": -12.01, "chrf": -11.77, "rouge1": -12.21, "rouge2": -11.48, "rougeL": -11.84, "word_overlap": -12.05},
    (2, 3, 4): {"bleu": 10.6, "bleu1": 10.71, "chrf": 10.36, "rouge1": 10.78, "rouge2": 10.41, "rougeL": 10.66, "word_overlap": 10.79},
    (2, 3, 5): {"bleu": 9.31, "bleu1": 7.79, "chrf": 7.36, "rouge1": 7.52, "rouge2": 8.55, "rougeL": 7.89, "word_overlap": 7.97},
    (2, 4, 5): {"bleu": 7.51, "bleu1": 5.76, "chrf": 5.48, "rouge1": 5.47, "rouge2": 6.59, "rougeL": 5.9, "word_overlap": 5.97},
    (3, 4, 5): {"bleu": -2.85, "bleu1": -4.35, "chrf": -4.49, "rouge1": -4.7, "rouge2": -3.65, "rougeL": -4.26, "word_overlap": -4.38},
    (1, 2, 3, 4): {"bleu": 8.89, "bleu1": 9.66, "chrf": 9.12, "rouge1": 9.69, "rouge2": 9.09, "rougeL": 9.56, "word_overlap": 9.56},
    (1, 2, 3, 5): {"bleu": 9.03, "bleu1": 7.85, "chrf": 7.25, "rouge1": 7.55, "rouge2": 8.38, "rougeL": 7.93, "word_overlap": 7.93},
    (1, 2, 4, 5): {"bleu": 6.95, "bleu1": 5.57, "chrf": 5.16, "rouge1": 5.25, "rouge2": 6.15, "rougeL": 5.69, "word_overlap": 5.69},
    (1, 3, 4, 5): {"bleu": -5.23, "bleu1": -5.92, "chrf": -6.16, "rouge1": -6.26, "rouge2": -5.71, "rougeL": -5.85, "word_overlap": -6.09},
    (2, 3, 4, 5): {"bleu": 9.32, "bleu1": 7.82, "chrf": 7.38, "rouge1": 7.55, "rouge2": 8.56, "rougeL": 7.91, "word_overlap": 8.0},
    (1, 2, 3, 4, 5): {"bleu": 9.04, "bleu1": 7.88, "chrf": 7.27, "rouge1": 7.58, "rouge2": 8.39, "rougeL": 7.95, "word_overlap": 7.96},
}
