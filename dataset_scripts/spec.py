"""What semrel declares about a dataset, in one typed place: :class:`DatasetSpec`.

Each dataset package declares ``SPEC`` in its ``spec.py`` beside ``builder.py``; the registry finds
it there (:func:`semrel.dataset_scripts.registry.discover`). Export, cards, staging, the report and
the trainers read a dataset's metadata from its spec and from nothing else.

The card body, report section and overview are drawn by ``semrel.publishing`` (they need
matplotlib), so a spec names them as ``"module:function"`` strings that publishing resolves
(:func:`pkgutil.resolve_name`); this package never imports publishing. The human ceiling hook is
named the same way and resolved by :mod:`.ceilings` (it reads the raw annotations only when asked).
What the ``datasets`` builder itself carries (its ``DatasetInfo``: citation, homepage, licence terms; the native score
range it validates against) the spec reads from the builder class, so each value is written once.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import SemrelBuilder

# The Hub's vocabulary for a continuous similarity/relatedness score (see publishing.hub_vocabulary)
SIMILARITY_TASK_CATEGORIES = ("sentence-similarity", "text-classification")
SIMILARITY_TASK_IDS = ("semantic-similarity-scoring", "text-scoring")
REFERENCE = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")  # "module:function"


@dataclass(frozen=True)
class Licence:
    """A dataset's licence on its card: ``hub_id`` is the Hub's ``license`` value (an SPDX-like id
    such as ``cc0-1.0``, or ``"other"``/``"unknown"``); ``"other"`` needs the ``name`` and
    ``link`` the card gives as ``license_name``/``license_link``. Whether the rows may be
    redistributed is a property of the upstream files (:attr:`DatasetSpec.redistributable`)."""

    hub_id: str
    name: str | None = None
    link: str | None = None

    def __post_init__(self):
        if self.hub_id == "other" and not (self.name and self.link):
            raise ValueError(f"licence 'other' needs a name and a link (got {self.name!r}, {self.link!r})")


@dataclass(frozen=True)
class MtebFacts:
    """What an MTEB task's metadata asks of a dataset beyond its spec, in MTEB's vocabulary, from its
    paper: ``domains``, ``sample_creation`` (how the texts came to be), ``annotations_creators`` (who
    scored the pairs), and ``iso639_3``: ``(tag, code)`` for a language tag whose rows are one language
    of a macrolanguage (``ar`` rows in Modern Standard Arabic: ``arb``). MTEB's licence is the spec's."""

    domains: tuple[str, ...]
    sample_creation: str
    annotations_creators: str = "human-annotated"
    iso639_3: tuple[tuple[str, str], ...] = ()

    def eval_langs(self, tags) -> list[str]:
        """MTEB's ``xxx-Scrp`` of each language tag (:func:`~semrel.dataset_scripts.languages.mteb_language`)."""
        from .languages import mteb_language

        codes = dict(self.iso639_3)
        return [mteb_language(tag, codes.get(tag)) for tag in tags]


@dataclass(frozen=True)
class Benchmarked:
    """What a dataset offers ``semrel benchmark`` and MTEB:

    * ``sets``: its labelled ``(config, split)``, each the set ``<id>/<config>/<split>``, in the order
      the benchmark lists them (a config of the builder's ``user_data_configs`` is scored where the user
      gives its data); each set's human ceiling is the spec's ``ceiling`` hook's (None: none);
    * ``mteb``: its :class:`MtebFacts`;
    * ``subset_column``, ``subsets``: a column whose values are scored apart too, each value the set
      ``<id>/<config>/<split>/<value>`` beside all rows;
    * ``conditional``: its pairs carry a ``condition`` (an MTEB STS task has none to give a model);
    * ``unlabelled``: ``(config, split, why)`` of a set known to hold no gold scores;
    * ``order``: where its sets come among the datasets' (lower first, then by dataset id).
    """

    sets: tuple[tuple[str, str], ...]
    mteb: MtebFacts
    subset_column: str | None = None
    subsets: tuple[str, ...] = ()
    conditional: bool = False
    unlabelled: tuple[tuple[str, str, str], ...] = ()
    order: int = 100

    def why_unlabelled(self, config: str, split: str) -> str | None:
        return next((why for c, s, why in self.unlabelled if (c, s) == (config, split)), None)

    def problem(self, configs: list[str]) -> str | None:
        """What is wrong with this declaration for a builder of ``configs``, or None."""
        if not self.sets or len(set(self.sets)) != len(self.sets):
            return f"benchmark sets must be distinct (config, split) pairs, got {self.sets!r}"
        if unknown := [config for config, _ in self.sets if config not in configs]:
            return f"benchmark sets name configs the builder lacks: {', '.join(unknown)}"
        if bool(self.subsets) != bool(self.subset_column):
            return "benchmark subsets need their subset_column and a subset_column its subsets"
        if stray := [(c, s) for c, s, _ in self.unlabelled if (c, s) not in self.sets]:
            return f"benchmark unlabelled names no set of its own: {stray!r}"
        return None


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset of the suite.

    * ``builder_class``: its :class:`~semrel.dataset_scripts.base.SemrelBuilder`;
    * ``pretty_name``, ``licence``, ``languages`` (the card's language tags), ``task_categories``
      and ``task_ids`` (the Hub's vocabulary): the card's metadata;
    * ``card_body`` (``"module:function"``: ``card_body(built, image_dir) -> str``) and, optionally,
      ``report_section`` (``(built, image_dir, *, mirror=None, cache_dir=None) -> str``) and
      ``overview`` (``(built, *, mirror=None, cache_dir=None) -> Overview``), resolved by publishing;
    * ``hub_id``: its Hub dataset id where it has one (None: no semrel dataset is on the Hub yet);
    * ``size_category``: the Hub size category a card states when built without the user's files;
    * ``extras``: the pip extras its build needs beyond the plots' (the card's build recipe);
    * ``ceiling`` (``"module:function"``: ``(config, split, *, subset=None, mirror=None) ->
      HumanCeiling``): the human ceiling of a split from the dataset's raw annotations, resolved by
      :func:`semrel.dataset_scripts.ceilings.human_ceiling` (None: the dataset holds no individual
      judgements, so none is available);
    * ``config_languages``: ``(config, tags)`` for each config whose rows are in fewer languages
      than ``languages`` (:meth:`languages_of`).
    * ``benchmark``: what it offers ``semrel benchmark`` and MTEB (:class:`Benchmarked`; None: nothing).

    Read from the builder: ``dataset_id``, ``score_range`` (native scale), ``citation``,
    ``homepage``, ``terms`` (the licence in words), ``configs``, ``user_data_configs``,
    ``local_configs`` (rows kept in the local cache: the build writes their card, no data files),
    ``redistributable``, ``takes_password``.
    """

    builder_class: type[SemrelBuilder]
    pretty_name: str
    licence: Licence
    languages: tuple[str, ...]
    card_body: str
    report_section: str | None = None
    overview: str | None = None
    task_categories: tuple[str, ...] = SIMILARITY_TASK_CATEGORIES
    task_ids: tuple[str, ...] = SIMILARITY_TASK_IDS
    hub_id: str | None = None
    size_category: str | None = None
    extras: tuple[str, ...] = ()
    ceiling: str | None = None
    config_languages: tuple[tuple[str, tuple[str, ...]], ...] = ()
    benchmark: Benchmarked | None = None

    def __post_init__(self):
        if not self.builder_class.DATASET_ID:
            raise ValueError(f"{self.builder_class.__name__} has no DATASET_ID")
        if not self.languages:
            raise ValueError(f"{self.dataset_id}: languages is empty")
        for config, tags in self.config_languages:
            if config not in self.configs or not tags or not set(tags) <= set(self.languages):
                raise ValueError(f"{self.dataset_id}: config_languages of {config!r} must name a "
                                 f"config and some of its languages, got {tags!r}")
        if self.benchmark is not None and (problem := self.benchmark.problem(self.configs)):
            raise ValueError(f"{self.dataset_id}: {problem}")
        hooks = {"card_body": self.card_body, "report_section": self.report_section, "overview": self.overview,
                 "ceiling": self.ceiling}
        for name, value in hooks.items():
            if value is not None and not REFERENCE.fullmatch(value):
                raise ValueError(f"{self.dataset_id}: {name} must be 'module:function', got {value!r}")

    @property
    def dataset_id(self) -> str:
        return self.builder_class.DATASET_ID

    def languages_of(self, config: str) -> tuple[str, ...]:
        """The language tags of ``config``'s rows (a model trained on it, a benchmark cell)."""
        return dict(self.config_languages).get(config, self.languages)

    @property
    def score_range(self) -> tuple[float, float]:
        return self.builder_class.SCORE_RANGE

    @property
    def citation(self) -> str:
        return self.builder_class.CITATION

    @property
    def homepage(self) -> str:
        return self.builder_class.HOMEPAGE

    @property
    def terms(self) -> str:
        return self.builder_class.LICENSE

    @property
    def configs(self) -> list[str]:
        return [c.name for c in self.builder_class.BUILDER_CONFIGS]

    @property
    def user_data_configs(self) -> list[str]:
        return [c.name for c in self.builder_class.BUILDER_CONFIGS if c.needs_user_data]

    @property
    def local_configs(self) -> list[str]:
        return [c.name for c in self.builder_class.BUILDER_CONFIGS if c.local_only]

    @property
    def redistributable(self) -> bool:
        return self.builder_class.redistributable()

    @property
    def takes_password(self) -> bool:
        """Whether its builder takes a ``password`` (for encrypted user-supplied data)."""
        return "password" in inspect.signature(self.builder_class.__init__).parameters
