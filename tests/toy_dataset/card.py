from semrel.publishing.cards import histograms, split_statistics


def card_body(built, image_dir):
    histograms({"all": built["default"]["train"]["score"]}, image_dir / "scores.png",
               xlabel="score", title="toy-sts scores", value_range=(0, 5))
    return f"# Toy STS\n\nTest fixture.\n\n{split_statistics(built)}\n\n![scores](images/scores.png)\n"
