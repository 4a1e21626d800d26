from .builder import SOURCE, CSts, read_split, sentence_pair_groups, user_files
from .crypto import openssl_decrypt, read_tar_members

__all__ = ["SOURCE", "CSts", "read_split", "sentence_pair_groups", "user_files",
           "openssl_decrypt", "read_tar_members"]
