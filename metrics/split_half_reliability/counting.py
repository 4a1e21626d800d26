from metrics.bws_scores.counting import Annotations, Choice, OnInvalid, as_annotations, check_on_invalid, encode_annotations, is_empty, tally
