"""Language codes of a dataset card: what the Hub's ``language`` metadata takes, an ISO 639 code.

:func:`language_problem` accepts an ISO 639-1 code (``de``), an ISO 639-2 code, terminological or
bibliographic (``deu``, ``ger``), or an ISO 639-3 code (``gsw``, ``arq``), in lower case as the
Hub's language filter spells them, by the ISO 639 tables of ``pycountry``. A code in upper case or
a language's name is refused with the code to give instead, never changed quietly.
:func:`mteb_language` writes a tag the way MTEB's task metadata takes it.
"""

from __future__ import annotations

EXAMPLES = "e.g. en, deu, gsw"
# ISO 639-3 code -> the ISO 15924 script the suite's rows of that language are written in
SCRIPTS = {"afr": "Latn", "amh": "Ethi", "arb": "Arab", "arq": "Arab", "ary": "Arab", "ces": "Latn",
           "eng": "Latn", "hau": "Latn", "hin": "Deva", "ind": "Latn", "kin": "Latn", "mar": "Deva",
           "pan": "Guru", "spa": "Latn", "tel": "Telu"}


def _known(code: str) -> bool:
    """Whether ``code`` (as given) is an ISO 639-1, 639-2 (T or B) or 639-3 code."""
    import pycountry

    if len(code) == 2 and code.isalpha():
        return pycountry.languages.get(alpha_2=code) is not None
    if len(code) == 3 and code.isalpha():
        return (pycountry.languages.get(alpha_3=code) or pycountry.languages.get(bibliographic=code)) is not None
    return False


def language_problem(code: str) -> str | None:
    """Why ``code`` is no language code of a dataset card (module docstring), or None.

    >>> language_problem("gsw") is None
    True
    >>> language_problem("EN")
    "is not lower case: the ISO 639 code is 'en'"
    >>> language_problem("English")
    "is a language's name: its ISO 639 code is 'en'"
    >>> language_problem("xx")
    'is not an ISO 639-1, 639-2 or 639-3 language code (e.g. en, deu, gsw)'
    """
    import pycountry

    code = str(code)
    if code == code.lower() and _known(code):
        return None
    if _known(code.lower()):
        return f"is not lower case: the ISO 639 code is {code.lower()!r}"
    try:
        language = pycountry.languages.lookup(code)
    except LookupError:
        return f"is not an ISO 639-1, 639-2 or 639-3 language code ({EXAMPLES})"
    return f"is a language's name: its ISO 639 code is {getattr(language, 'alpha_2', language.alpha_3)!r}"


def mteb_language(tag: str, iso639_3: str | None = None) -> str:
    """MTEB's ``xxx-Scrp`` of a card's language ``tag``: its ISO 639-3 code (``iso639_3``, else the
    tag's by pycountry) and that language's script in :data:`SCRIPTS`; a ValueError where either is unknown.

    >>> mteb_language("cs"), mteb_language("arq"), mteb_language("ar", "arb")
    ('ces-Latn', 'arq-Arab', 'arb-Arab')
    """
    import pycountry

    if iso639_3 is None:
        language = pycountry.languages.get(**{"alpha_2" if len(tag) == 2 else "alpha_3": tag})
        if language is None:
            raise ValueError(f"language {tag!r}: is no ISO 639-1 or 639-3 code ({EXAMPLES})")
        iso639_3 = language.alpha_3
    if iso639_3 not in SCRIPTS:
        raise ValueError(f"language {tag!r} ({iso639_3}): no script for MTEB in semrel.dataset_scripts.languages"
                         ".SCRIPTS (add it; a macrolanguage's tag names its member in MtebFacts.iso639_3)")
    return f"{iso639_3}-{SCRIPTS[iso639_3]}"
