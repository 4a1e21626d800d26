import functools
import hashlib
import http.server
import os
import threading
from dataclasses import replace

import pytest
from datasets import DownloadConfig, DownloadManager

from semrel.dataset_scripts.errors import SourceError
from semrel.dataset_scripts.sources import Source, fetch, mirror_dirs
from semrel.dataset_scripts.str_2021 import SOURCE


def test_fetch_from_mirror_verifies_sha256(mirror):
    path = fetch(SOURCE, mirror=mirror)
    assert path == str(mirror / "str-2021" / "sem_text_rel_ranked.csv")


def test_mirror_from_environment(mirror, monkeypatch):
    monkeypatch.setenv("SEMREL_MIRROR", f"/nonexistent{os.pathsep}{mirror}")
    assert mirror_dirs() == [mirror_dirs("/nonexistent")[0], mirror.resolve()]
    assert fetch(SOURCE).endswith("sem_text_rel_ranked.csv")


def test_checksum_mismatch_names_file_and_both_hashes(tmp_path):
    (tmp_path / "str-2021").mkdir()
    bad = tmp_path / "str-2021" / SOURCE.file_name
    bad.write_text("Index,SourceID\n")
    with pytest.raises(SourceError) as err:
        fetch(SOURCE, mirror=tmp_path)
    message = str(err.value)
    assert SOURCE.file_name in message and SOURCE.sha256 in message
    assert hashlib.sha256(bad.read_bytes()).hexdigest() in message
    assert str(bad) in message


def test_missing_file_lists_every_place_looked(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    with pytest.raises(SourceError) as err:
        fetch(SOURCE, mirror=f"{first}{os.pathsep}{second}")
    message = str(err.value)
    assert str(first / "str-2021" / SOURCE.file_name) in message
    assert str(second / "str-2021" / SOURCE.file_name) in message
    assert SOURCE.url in message


@pytest.fixture
def local_server(tmp_path):
    """A static file server on 127.0.0.1 that counts the requests it answers."""
    served = tmp_path / "served"
    served.mkdir()
    hits = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            super().do_GET()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(served)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{server.server_port}", hits
    server.shutdown()


def test_download_goes_through_download_manager_and_is_cached(local_server, tmp_path, monkeypatch):
    monkeypatch.delenv("SEMREL_MIRROR", raising=False)
    monkeypatch.chdir(tmp_path)  # no ../shared/upstream beside it: no mirror, so it downloads
    monkeypatch.setattr("datasets.config.HF_HUB_OFFLINE", False)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)  # loopback only
    served, base, hits = local_server
    payload = b"a,b\n1,2\n"
    (served / "f.csv").write_bytes(payload)
    source = Source("demo", "f.csv", f"{base}/f.csv", hashlib.sha256(payload).hexdigest(),
                    "test", "", True)
    manager = DownloadManager(download_config=DownloadConfig(cache_dir=tmp_path / "dl"))
    first = fetch(source, dl_manager=manager)
    second = fetch(source, dl_manager=manager)
    assert open(first, "rb").read() == payload and first == second
    assert len([h for h in hits if h.endswith("f.csv")]) == 1  # the second fetch came from cache
    with pytest.raises(SourceError, match="sha256 mismatch"):
        fetch(replace(source, sha256="0" * 64), dl_manager=manager)


def test_every_command_finds_the_mirror_the_same_way(tmp_path, monkeypatch, mirror):
    """--mirror, else $SEMREL_MIRROR, else ../shared/upstream beside the working directory, else none."""
    from semrel.dataset_scripts.sources import mirror_dirs

    checkout = tmp_path / "checkout"
    (tmp_path / "shared" / "upstream").mkdir(parents=True)
    checkout.mkdir()
    monkeypatch.chdir(checkout)
    monkeypatch.delenv("SEMREL_MIRROR", raising=False)
    assert mirror_dirs() == [(tmp_path / "shared" / "upstream").resolve()]
    monkeypatch.setenv("SEMREL_MIRROR", str(mirror))
    assert mirror_dirs() == [mirror.resolve()]
    assert mirror_dirs(tmp_path) == [tmp_path.resolve()]
    monkeypatch.delenv("SEMREL_MIRROR")
    monkeypatch.chdir(tmp_path)
    assert mirror_dirs() == []
