from .builder import SOURCE, CSts, condition_groups, read_split, user_files
from .crypto import openssl_decrypt, read_tar_members

__all__ = ["SOURCE", "CSts", "condition_groups", "read_split", "user_files", "openssl_decrypt", "read_tar_members"]
