"""Label Studio as the annotation tool of BWS tuples: push a project, pull its answers back.

semrel is a client of the user's Label Studio server (``url``, ``token``), over Label Studio's
documented REST API (``/api/projects``, ``/api/projects/{id}/import``, ``/api/projects/{id}/export``)
with ``httpx2``, the HTTP client that semrel already has through ``huggingface_hub``. Not
``label-studio-sdk``: it pulls opencv-python-headless, nltk and a code generator into a scientific
environment for the five calls made here.

Tokens: a personal access token (a JWT refresh token; Label Studio 1.23's default) is exchanged
at ``/api/token/refresh`` for an access token sent as ``Authorization: Bearer`` (and exchanged
again when it expires); any other token is sent as a legacy ``Authorization: Token``, which an
organisation must have switched on.

A pushed task holds one tuple: ``tuple_id`` and, for each position i, ``pair{i}_id``,
``pair{i}_sentence1``, ``pair{i}_sentence2``. The interface (:func:`label_config`) shows the guide,
the k pairs, and two single choices, ``best`` and ``worst``, of ``Pair 1`` .. ``Pair k``. A pull
reads every task and annotation and hands them, in the order made, to
:func:`semrel.annotation.answers.bws_rows`: ``skipped`` is Label Studio's Skip with nothing chosen,
``cancelled`` an annotation marked ``was_cancelled`` that holds a choice; the other rules are that
module's. Every failure is a :class:`LabelStudioError`, one line naming the server and its reply.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

from .answers import AnswerRows, RawAnswer, bws_rows
from .bws_file import read_design, write_rows

GUIDE = ("Each task shows four sentence pairs. Choose the pair that is MOST related (closest in meaning) and "
         "the pair that is LEAST related (farthest in meaning). Pairs can be related in many ways: consider the "
         "whole meaning of both sentences; pairs that share something specific are usually more related than "
         "pairs loosely about the same topic. If a sentence can be read more than one way, take the reading "
         "closest to the other sentence. If pairs tie, choose any one of them. One pair cannot be both.")
"""The default guide: the STR-2021 annotation instructions (Abdalla et al., 2023), shortened."""
BEST, WORST = "best", "worst"
PAGE = 100  # tasks per request of a pull


class LabelStudioError(ValueError):
    """The server cannot be reached, refuses, or holds what semrel did not push: one line."""


def label_config(k: int = 4, guide: str = GUIDE) -> str:
    """The labelling interface of a k-tuple: the guide, the pairs, a ``best`` and a ``worst`` choice.

    >>> "Pair 4" in label_config() and 'name="worst"' in label_config()
    True
    """
    pairs = "".join(
        f'  <View style="margin: 6px 0; padding: 6px 10px; border: 1px solid #ccc; border-radius: 6px">\n'
        f'    <Header value="Pair {i}" size="5"/>\n'
        f'    <Text name="pair{i}_sentence1" value="$pair{i}_sentence1"/>\n'
        f'    <Text name="pair{i}_sentence2" value="$pair{i}_sentence2"/>\n  </View>\n' for i in range(1, k + 1))
    choices = "".join(f'    <Choice value="Pair {i}"/>\n' for i in range(1, k + 1))
    questions = "".join(
        f'  <Header value="{title}" size="5"/>\n'
        f'  <Choices name="{name}" toName="pair1_sentence1" choice="single-radio" showInline="true" '
        f'required="true">\n{choices}  </Choices>\n'
        for name, title in ((BEST, "MOST related pair (closest in meaning)"),
                            (WORST, "LEAST related pair (farthest in meaning)")))
    return f'<View>\n  <Text name="guide" value={quoteattr(guide)}/>\n{pairs}{questions}</View>\n'


def tasks(tuples: Mapping[str, Sequence[str]], pairs: Mapping[str, Mapping[str, str]]) -> list[dict]:
    """One task per tuple: its id and each position's pair id and sentences."""
    out = []
    for tuple_id, members in tuples.items():
        data = {"tuple_id": tuple_id}
        for i, pair_id in enumerate(members, 1):
            data.update({f"pair{i}_id": pair_id, f"pair{i}_sentence1": pairs[pair_id]["sentence1"],
                         f"pair{i}_sentence2": pairs[pair_id]["sentence2"]})
        out.append({"data": data})
    return out


class Server:
    """A Label Studio server at ``url`` reached with ``token`` (module docstring)."""

    def __init__(self, url: str, token: str, *, timeout: float = 60.0, transport=None):
        import httpx2

        if not url or not token:
            raise LabelStudioError("no Label Studio server: give --url and --token (or set LABEL_STUDIO_URL "
                                   "and LABEL_STUDIO_API_KEY)")
        self.url, self.token = url.rstrip("/"), token
        self.client = httpx2.Client(base_url=self.url, timeout=timeout, transport=transport)
        self.personal = token.count(".") == 2  # a JWT: a personal access token
        self.access = None

    def close(self) -> None:
        self.client.close()

    def request(self, method: str, path: str, *, what: str, **kwargs):
        """The JSON reply of ``method path``; a :class:`LabelStudioError` naming ``what`` otherwise."""
        reply = self._send(method, path, what, **kwargs)
        if reply.status_code == 401 and self.personal:  # the access token expired: once more with a new one
            self.access = None
            reply = self._send(method, path, what, **kwargs)
        if reply.status_code == 401:
            raise LabelStudioError(f"Label Studio at {self.url} refused the token (--token or "
                                   f"LABEL_STUDIO_API_KEY), {what}: {_said(reply)}")
        if reply.status_code >= 400:
            raise LabelStudioError(f"Label Studio at {self.url}, {what}: {_said(reply)}")
        try:
            return reply.json() if reply.content else None
        except ValueError:
            raise LabelStudioError(f"Label Studio at {self.url}, {what}: the reply is not JSON "
                                   f"({reply.text[:80]!r}); is {self.url} a Label Studio server?") from None

    def _send(self, method: str, path: str, what: str, **kwargs):
        import httpx2

        try:
            return self.client.request(method, path, headers=self._authorization(what), **kwargs)
        except httpx2.TransportError as exc:
            raise LabelStudioError(f"Label Studio at {self.url}, {what}: {_broken(exc)}") from None

    def _authorization(self, what: str) -> dict:
        import httpx2

        if not self.personal:
            return {"Authorization": f"Token {self.token}"}
        if self.access is None:
            try:
                reply = self.client.post("/api/token/refresh/", json={"refresh": self.token})
            except httpx2.TransportError as exc:
                raise LabelStudioError(f"Label Studio at {self.url}, {what}: {_broken(exc)}") from None
            if reply.status_code != 200 or "access" not in _json(reply):
                raise LabelStudioError(f"Label Studio at {self.url} refused the personal access token (--token "
                                       f"or LABEL_STUDIO_API_KEY): {_said(reply)}")
            self.access = _json(reply)["access"]
        return {"Authorization": f"Bearer {self.access}"}

    def project(self, project_id: int) -> dict:
        """The project ``project_id`` (its settings, ``label_config`` included)."""
        try:
            return self.request("GET", f"/api/projects/{project_id}/", what=f"project {project_id}")
        except LabelStudioError as exc:
            if " 404 " not in str(exc):
                raise
            raise LabelStudioError(f"{exc} (no project {project_id} on this server: deleted, or another "
                                   "server's id?)") from None


def _json(reply) -> dict:
    try:
        value = reply.json()
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _said(reply) -> str:
    """The status and the server's own words (its ``detail``), on one line."""
    body = _json(reply)
    words = body.get("detail") or body.get("validation_errors") or reply.reason_phrase
    return f"{reply.status_code} {' '.join(str(words).split())[:200]}"


def _broken(exc) -> str:
    import httpx2

    kind = ("no answer in time" if isinstance(exc, httpx2.TimeoutException) else
            "cannot connect" if isinstance(exc, httpx2.ConnectError) else "the connection broke off")
    return f"{kind} ({' '.join(str(exc).split()) or type(exc).__name__})"


def check_interface(config: str, where: str) -> int:
    """k, the tuple size of a labelling interface that :func:`label_config` made; a
    :class:`LabelStudioError` naming ``where`` for any other interface."""
    try:
        root = ElementTree.fromstring(config)
    except ElementTree.ParseError:
        root = ElementTree.Element("View")
    values = {name: [c.get("value") for c in root.iter("Choice") if c in list(choices)]
              for choices in root.iter("Choices") if (name := choices.get("name")) in (BEST, WORST)}
    k = len(values.get(BEST, []))
    if k < 2 or values.get(WORST) != [f"Pair {i}" for i in range(1, k + 1)] or values[BEST] != values[WORST]:
        raise LabelStudioError(f"{where} is not a semrel BWS project: its labelling interface lacks the "
                               f"'{BEST}' and '{WORST}' choices of Pair 1..Pair k (semrel annotate push makes them)")
    return k


@dataclass(frozen=True)
class Pushed:
    """A project made by :func:`push`: its id, title, tasks imported and the page to label at."""

    id: int
    title: str
    n_tasks: int
    page: str


def push(server: Server, tuples: Mapping[str, Sequence[str]], pairs: Mapping[str, Mapping[str, str]], *,
         title: str, guide: str = GUIDE) -> Pushed:
    """A new project ``title`` with :func:`label_config` and one task per tuple. A title that a
    project on the server already has is refused (a second push would split the answers)."""
    ks = {len(members) for members in tuples.values()}
    if len(ks) != 1:
        raise LabelStudioError(f"the tuples are of {len(ks)} sizes ({sorted(ks)}); one size per project")
    found = server.request("GET", "/api/projects/", params={"title": title, "page_size": 1000},
                           what="listing its projects")
    for project in found.get("results", found) if isinstance(found, dict) else found:
        if project.get("title") == title:
            raise LabelStudioError(f"Label Studio at {server.url} has a project titled {title!r} already "
                                   f"(id {project['id']}, {project.get('task_number', '?')} tasks): give another "
                                   "--project name, or pull that one")
    project = server.request("POST", "/api/projects/", what=f"creating project {title!r}",
                             json={"title": title, "label_config": label_config(ks.pop(), guide),
                                   "description": "Best-Worst Scaling of sentence pairs (semrel annotate push)"})
    made = tasks(tuples, pairs)
    for start in range(0, len(made), 1000):
        server.request("POST", f"/api/projects/{project['id']}/import", json=made[start:start + 1000],
                       what=f"importing tasks into project {project['id']}")
    return Pushed(project["id"], title, len(made), f"{server.url}/projects/{project['id']}/data")


@dataclass(frozen=True)
class Pulled:
    """The answers of a project as BWS rows, with the tasks read and those nobody answered."""

    rows: AnswerRows
    n_tasks: int
    unanswered: int

    def summary(self) -> str:
        return f"{self.n_tasks} tasks ({self.unanswered} without an answer); {self.rows.summary()}"


def pull(server: Server, project_id: int, tuples: Mapping[str, Sequence[str]],
         pairs: Mapping[str, Mapping[str, str]], *, salt: str) -> Pulled:
    """Every annotation of project ``project_id`` as BWS rows (module docstring), each task checked
    against the design: its tuple one of ``tuples``, its pair ids that tuple's, its texts ``pairs``'."""
    k = check_interface(server.project(project_id)["label_config"],
                        f"Label Studio at {server.url}: project {project_id}")
    source = f"Label Studio at {server.url}: project {project_id}"
    answers, n_tasks, unanswered, seen = [], 0, 0, set()
    for task in _tasks(server, project_id):
        n_tasks += 1
        if task.get("id") in seen:
            raise LabelStudioError(f"{source}: task {task.get('id')} was listed twice (tasks added or removed "
                                   "during the pull?); run the pull again")
        seen.add(task.get("id"))
        positions = _check_task(task, k, tuples, pairs, source)
        annotations = sorted(task.get("annotations") or [], key=lambda a: (a.get("created_at") or "", a["id"]))
        unanswered += not annotations
        answers += [_answer(a, task, positions, source) for a in annotations]
    return Pulled(bws_rows(answers, tuples, salt=salt, source=source), n_tasks, unanswered)


def _tasks(server: Server, project_id: int):
    """Every task of the project with its annotations, a page at a time."""
    page = 1
    while True:
        reply = server.request("GET", "/api/tasks/", what=f"listing the tasks of project {project_id}",
                               params={"project": project_id, "page": page, "page_size": PAGE, "fields": "all"})
        batch = reply.get("tasks", []) if isinstance(reply, dict) else reply
        yield from batch
        if len(batch) < PAGE:
            return
        page += 1


def _check_task(task: dict, k: int, tuples, pairs, source: str) -> list[str]:
    """The pair ids of a task's positions, checked against the design (an unknown tuple, pair id or
    text is a :class:`LabelStudioError` naming the task)."""
    data, where = task.get("data") or {}, f"{source}, task {task.get('id')}"
    tuple_id = data.get("tuple_id")
    if tuple_id not in tuples:
        raise LabelStudioError(f"{where}: tuple {tuple_id!r} is not in the tuples file")
    ids = [data.get(f"pair{i}_id") for i in range(1, k + 1)]
    if ids != list(tuples[tuple_id]):
        raise LabelStudioError(f"{where}: pair ids {ids} are not tuple {tuple_id!r}'s in the tuples file "
                               f"({', '.join(tuples[tuple_id])})")
    for i, pair_id in enumerate(ids, 1):
        for column in ("sentence1", "sentence2"):
            text = data.get(f"pair{i}_{column}")
            if " ".join(str(text).split()) != " ".join(pairs[pair_id][column].split()):
                raise LabelStudioError(f"{where}: {column} of pair {pair_id!r} is not the pairs file's "
                                       f"({str(text)[:60]!r})")
    return ids


def _answer(annotation: dict, task: dict, positions: list[str], source: str) -> RawAnswer:
    """One annotation as a :class:`RawAnswer` (choices ``Pair i`` -> the pair id at position i)."""
    where = f"task {task.get('id')}, annotation {annotation.get('id')}"
    annotator = annotation.get("completed_by")
    annotator = annotator.get("id") if isinstance(annotator, dict) else annotator
    chosen = {}
    for region in annotation.get("result") or []:
        if region.get("from_name") in (BEST, WORST):
            values = (region.get("value") or {}).get("choices") or []
            labels = [f"Pair {i}" for i in range(1, len(positions) + 1)]
            if len(values) != 1 or values[0] not in labels:
                raise LabelStudioError(f"{source}, {where}: {region['from_name']} is {json.dumps(values)}, "
                                       f"not one of {', '.join(labels)}")
            chosen[region["from_name"]] = positions[labels.index(values[0])]
    status = "answered"
    if annotation.get("was_cancelled"):
        status = "cancelled" if chosen else "skipped"
    return RawAnswer(str(annotator), task["data"]["tuple_id"], chosen.get(BEST), chosen.get(WORST), status, where)


def connect(url: str | None = None, token: str | None = None, **kwargs) -> Server:
    """The server at ``url`` (else ``$LABEL_STUDIO_URL``) with ``token`` (else ``$LABEL_STUDIO_API_KEY``)."""
    import os

    return Server(url or os.environ.get("LABEL_STUDIO_URL", ""), token or os.environ.get("LABEL_STUDIO_API_KEY", ""),
                  **kwargs)


def push_files(tuples_file, pairs_file, *, title: str, guide: str | None = None, url: str | None = None,
               token: str | None = None) -> Pushed:
    """:func:`push` of the tuples of ``tuples_file`` (pair ids of ``pairs_file``)."""
    tuples, pairs = read_design(tuples_file, pairs_file)
    server = connect(url, token)
    try:
        return push(server, tuples, pairs, title=title, guide=GUIDE if guide is None else guide)
    finally:
        server.close()


def pull_files(project_id: int, tuples_file, pairs_file, *, url: str | None = None, token: str | None = None,
               key: str = "") -> Pulled:
    """:func:`pull` of the project pushed from ``tuples_file`` (pair ids of ``pairs_file``), in memory."""
    tuples, pairs = read_design(tuples_file, pairs_file)
    server = connect(url, token)
    try:
        return pull(server, project_id, tuples, pairs, salt=key)
    finally:
        server.close()


def pull_file(project_id: int, tuples_file, pairs_file, output, *, url: str | None = None, token: str | None = None,
              key: str = "") -> Pulled:
    """:func:`pull_files` written whole to ``output`` (NRC layout with annotator and tuple id columns):
    an interrupted pull writes nothing and leaves a previous file as it was."""
    pulled = pull_files(project_id, tuples_file, pairs_file, url=url, token=token, key=key)
    write_rows(output, pulled.rows)
    return pulled
