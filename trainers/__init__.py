"""Fine-tuning sentence-pair encoders on shared-schema datasets (cross / bi / tri, MSE / quad)."""
