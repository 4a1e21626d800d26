from metrics.bws_scores.counting import Annotations, Choice, OnInvalid, as_annotations, check_on_invalid, is_empty, tally
