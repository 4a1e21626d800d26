from .builder import SOURCE, CSts, read_split, sentence_pair_groups, user_files
from .crypto import openssl_decrypt, read_tar_members
from .reannotated import LabelAgreement, join_original, label_agreement

__all__ = ["SOURCE", "CSts", "read_split", "sentence_pair_groups", "user_files",
           "openssl_decrypt", "read_tar_members", "LabelAgreement", "join_original", "label_agreement"]
