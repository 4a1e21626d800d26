"""BibTeX of the references the metric cards and dataset builders share (Best-Worst Scaling, Czech News STS)."""

KIRITCHENKO_MOHAMMAD_2016 = """\
@inproceedings{kiritchenko-mohammad-2016-capturing,
  title = {Capturing Reliable Fine-Grained Sentiment Associations by Crowdsourcing and Best--Worst Scaling},
  author = {Kiritchenko, Svetlana and Mohammad, Saif M.},
  booktitle = {Proceedings of NAACL-HLT 2016}, year = {2016}, pages = {811--817}
}
"""

KIRITCHENKO_MOHAMMAD_2017 = """\
@inproceedings{kiritchenko-mohammad-2017-best,
  title = {Best-Worst Scaling More Reliable than Rating Scales: A Case Study on Sentiment Intensity Annotation},
  author = {Kiritchenko, Svetlana and Mohammad, Saif M.},
  booktitle = {Proceedings of ACL 2017 (Volume 2: Short Papers)}, year = {2017}, pages = {465--470}
}
"""

ABDALLA_2023 = """\
@inproceedings{abdalla-etal-2023-makes,
  title = {What Makes Sentences Semantically Related? A Textual Relatedness Dataset and Empirical Study},
  author = {Abdalla, Mohamed and Vishnubhotla, Krishnapriya and Mohammad, Saif M.},
  booktitle = {Proceedings of EACL 2023}, year = {2023}
}
"""

CRONBACH_1951 = """\
@article{cronbach-1951-coefficient,
  title = {Coefficient alpha and the internal structure of tests},
  author = {Cronbach, Lee J.}, journal = {Psychometrika}, volume = {16}, pages = {297--334}, year = {1951}
}
"""

SIDO_2021 = """\
@article{sido2021czech,
  title = {Czech News Dataset for Semantic Textual Similarity},
  author = {Sido, Jakub and Sej{\\'a}k, Michal and Pra{\\v{z}}{\\'a}k, Ond{\\v{r}}ej and
            Konop{\\'i}k, Miloslav and Moravec, V{\\'a}clav},
  journal = {arXiv preprint arXiv:2108.08708},
  year = {2021},
  url = {https://arxiv.org/abs/2108.08708}
}
"""
