from metrics.arrow_columns import chunks, numbers, sorted_codes
