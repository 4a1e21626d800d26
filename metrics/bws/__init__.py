"""Best-Worst Scaling: annotation readers, counting scores, tuple designs and the ``semrel bws`` commands."""
