from metrics.bws_scores.citations import ABDALLA_2023, CRONBACH_1951, KIRITCHENKO_MOHAMMAD_2017
