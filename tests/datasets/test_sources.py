import functools
import hashlib
import http.server
import json
import os
import shutil
import threading
from dataclasses import asdict, replace
from pathlib import Path

import pytest
from datasets import DownloadConfig, DownloadManager

from project import FIXTURES, fixture_copy
from semrel.dataset_scripts.errors import SourceError, SourceNotFound
from semrel.dataset_scripts.sources import Source, fetch, mirror_dirs
from semrel.dataset_scripts.str_2021 import SOURCE


def test_fetch_from_mirror_verifies_sha256(mirror):
    path = fetch(SOURCE, mirror=mirror)
    assert path == str(mirror / "str-2021" / "sem_text_rel_ranked.csv")


def test_mirror_from_environment(upstream, monkeypatch):
    monkeypatch.setenv("SEMREL_MIRROR", f"/nonexistent{os.pathsep}{upstream}")
    assert mirror_dirs() == [mirror_dirs("/nonexistent")[0], upstream.resolve()]
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


def test_every_command_finds_the_mirror_the_same_way(tmp_path, monkeypatch, upstream):
    """--mirror, else $SEMREL_MIRROR, else ../shared/upstream beside the working directory, else none."""
    from semrel.dataset_scripts.sources import mirror_dirs

    checkout = tmp_path / "checkout"
    (tmp_path / "shared" / "upstream").mkdir(parents=True)
    checkout.mkdir()
    monkeypatch.chdir(checkout)
    monkeypatch.delenv("SEMREL_MIRROR", raising=False)
    assert mirror_dirs() == [(tmp_path / "shared" / "upstream").resolve()]
    monkeypatch.setenv("SEMREL_MIRROR", str(upstream))
    assert mirror_dirs() == [upstream.resolve()]
    assert mirror_dirs(tmp_path) == [tmp_path.resolve()]
    monkeypatch.delenv("SEMREL_MIRROR")
    monkeypatch.chdir(tmp_path)
    assert mirror_dirs() == []


# ---- the fixture mirror: checked against its own SHA256SUMS, and only where it is named ----

def _copy(folder, to):
    shutil.copytree(folder, to)
    return to


def test_a_changed_byte_in_the_real_mirror_is_still_a_checksum_error(mirror, tmp_path):
    """A copy of the real file with one byte changed fails the upstream digest, even beside a
    SHA256SUMS that lists it and with $SEMREL_FIXTURE_MIRROR set (the suite sets it)."""
    copy = _copy(mirror / "str-2021", tmp_path / "m" / "str-2021")
    path = copy / SOURCE.file_name
    data = bytearray(path.read_bytes())
    data[100] ^= 1
    path.write_bytes(bytes(data))
    (copy / "SHA256SUMS").write_text(f"{hashlib.sha256(data).hexdigest()}  {SOURCE.file_name}\n")
    assert os.environ["SEMREL_FIXTURE_MIRROR"]
    with pytest.raises(SourceError, match=f"sha256 mismatch at {path}: expected {SOURCE.sha256}"):
        fetch(SOURCE, mirror=tmp_path / "m")


def test_fixture_files_pass_only_in_the_folder_named_for_them(fixture_mirror, tmp_path, monkeypatch):
    assert fetch(SOURCE, mirror=fixture_mirror) == str(fixture_mirror / "str-2021" / SOURCE.file_name)
    copy = _copy(fixture_mirror / "str-2021", tmp_path / "m" / "str-2021")
    with pytest.raises(SourceError, match=f"expected {SOURCE.sha256}"):
        fetch(SOURCE, mirror=tmp_path / "m")  # a copy elsewhere: the upstream digest
    monkeypatch.delenv("SEMREL_FIXTURE_MIRROR")
    with pytest.raises(SourceError, match=f"expected {SOURCE.sha256}"):
        fetch(SOURCE, mirror=fixture_mirror)  # not named: the upstream digest
    monkeypatch.setenv("SEMREL_FIXTURE_MIRROR", str(tmp_path / "m"))
    assert fetch(SOURCE, mirror=tmp_path / "m") == str(copy / SOURCE.file_name)


def test_a_fixture_file_is_checked_against_its_sha256sums(tmp_path, fixture_mirror, monkeypatch):
    copy = _copy(fixture_mirror / "str-2021", tmp_path / "m" / "str-2021")
    monkeypatch.setenv("SEMREL_FIXTURE_MIRROR", str(tmp_path / "m"))
    path = copy / SOURCE.file_name
    listed = (copy / "SHA256SUMS").read_text().split()[0]
    path.write_bytes(path.read_bytes() + b"\n")
    with pytest.raises(SourceError, match=f"sha256 mismatch at {path}: expected {listed} "
                                          r"\(test fixture, .*SHA256SUMS\)"):
        fetch(SOURCE, mirror=tmp_path / "m")
    (copy / "SHA256SUMS").write_text("")
    with pytest.raises(SourceError, match="test fixture at .* is not listed in .*SHA256SUMS"):
        fetch(SOURCE, mirror=tmp_path / "m")


def test_a_build_from_fixtures_is_cached_apart_from_the_real_files(fixture_mirror, tmp_path):
    from semrel.dataset_scripts import builder

    other = tmp_path / "elsewhere"
    other.mkdir()
    assert builder("str-2021", mirror=fixture_mirror).hash != builder("str-2021", mirror=other).hash
    assert builder("str-2021", mirror=other).hash == builder("str-2021", mirror=tmp_path).hash


# ---- a cached build is used only while its upstream files are in the mirror, unchanged ----

def _flip_a_byte(path):
    data = bytearray(path.read_bytes())
    data[40] ^= 1
    path.write_bytes(bytes(data))


def _same_size_and_mtime(path):
    stat = path.stat()
    _flip_a_byte(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # only ctime tells


def _not_found(path):
    return (f"{SOURCE.file_name} of 'str-2021' not found; looked at: {path}. Download it from "
            f"{SOURCE.url} (sha256 {SOURCE.sha256}) into one of them.")


def _mismatch(path):
    sums, actual = path.parent / "SHA256SUMS", hashlib.sha256(path.read_bytes()).hexdigest()
    return (f"{SOURCE.file_name} of 'str-2021': sha256 mismatch at {path}: expected "
            f"{sums.read_text().split()[0]} (test fixture, {sums}), got {actual}")


WARM_CACHE_CASES = {  # what happens to the mirror after a build -> the error of the next load
    "file deleted": (lambda path: path.unlink(), SourceNotFound, _not_found),
    "a byte changed": (_flip_a_byte, SourceError, _mismatch),
    "a byte changed, size and mtime kept": (_same_size_and_mtime, SourceError, _mismatch),
}


@pytest.mark.parametrize("settled_ns", [0, 2_000_000_000], ids=["stat memo", "recent files"])
@pytest.mark.parametrize("case", WARM_CACHE_CASES)
def test_a_warm_cache_is_refused_when_the_mirror_changed(case, settled_ns, tmp_path, monkeypatch):
    """The same error as a cold build, whether the file is re-checked by its signature
    (settled) or hashed again (changed in the last two seconds)."""
    from semrel.dataset_scripts import load, sources

    monkeypatch.setattr(sources, "SETTLED_NS", settled_ns)
    mirror = fixture_copy(tmp_path / "mirror", "str-2021", monkeypatch)
    path = mirror / "str-2021" / SOURCE.file_name
    rows = load("str-2021", "cv-fold-0", mirror=mirror, cache_dir=tmp_path / "cache")["test"].to_list()
    assert load("str-2021", "cv-fold-0", mirror=mirror, cache_dir=tmp_path / "cache")["test"].to_list() == rows
    change, error, message = WARM_CACHE_CASES[case]
    expected = message(path) if error is SourceNotFound else None
    change(path)
    expected = expected or message(path)
    monkeypatch.setattr(sources, "_DIGESTS", {})  # as a new process
    with pytest.raises(error) as raised:
        load("str-2021", "cv-fold-0", mirror=mirror, cache_dir=tmp_path / "cache")
    assert str(raised.value) == expected
    with pytest.raises(error) as cold:
        load("str-2021", "cv-fold-0", mirror=mirror, cache_dir=tmp_path / "cold-cache")
    assert str(cold.value) == expected


def test_a_warm_load_reads_an_unchanged_file_by_stat_alone(tmp_path, monkeypatch):
    from semrel.dataset_scripts import load, sources

    monkeypatch.setattr(sources, "SETTLED_NS", 0)
    mirror = fixture_copy(tmp_path / "mirror", "str-2021", monkeypatch)
    load("str-2021", "cv-fold-0", mirror=mirror, cache_dir=tmp_path / "cache")
    hashed = []
    monkeypatch.setattr(sources, "sha256_of", lambda path: hashed.append(str(path)) or hashlib.sha256(
        open(path, "rb").read()).hexdigest())
    monkeypatch.setattr(sources, "_DIGESTS", {})  # a new process: only the cache's record
    load("str-2021", "cv-fold-0", mirror=mirror, cache_dir=tmp_path / "cache")
    assert hashed == []
    os.utime(mirror / "str-2021" / SOURCE.file_name)  # touched: same bytes, read again, once
    for _ in range(2):
        load("str-2021", "cv-fold-0", mirror=mirror, cache_dir=tmp_path / "cache")
    assert hashed == [str(mirror / "str-2021" / SOURCE.file_name)]


def test_a_cache_without_its_record_of_sources_is_built_again(tmp_path, monkeypatch):
    from semrel.dataset_scripts import builder
    from semrel.dataset_scripts.base import SOURCES_FILE

    mirror = fixture_copy(tmp_path / "mirror", "str-2021", monkeypatch)
    b = builder("str-2021", "cv-fold-0", mirror=mirror, cache_dir=tmp_path / "cache")
    b.download_and_prepare()
    record = Path(b._output_dir, SOURCES_FILE)
    kept = [r["source"] for r in json.loads(record.read_text())]
    assert kept == [asdict(SOURCE)]
    record.unlink()
    (mirror / "str-2021" / SOURCE.file_name).unlink()
    with pytest.raises(SourceNotFound, match="sem_text_rel_ranked.csv of 'str-2021' not found"):
        builder("str-2021", "cv-fold-0", mirror=mirror, cache_dir=tmp_path / "cache").download_and_prepare()
    assert not record.exists()
    shutil.copy(FIXTURES / "str-2021" / SOURCE.file_name, mirror / "str-2021" / SOURCE.file_name)
    builder("str-2021", "cv-fold-0", mirror=mirror, cache_dir=tmp_path / "cache").download_and_prepare()
    assert [r["source"] for r in json.loads(record.read_text())] == kept


def test_a_warm_cache_of_the_real_files_is_refused_without_them(mirror, cache_dir, tmp_path):
    from semrel.dataset_scripts import load

    load("str-2021", "cv-fold-0", mirror=mirror, cache_dir=cache_dir)
    empty = tmp_path / "empty"
    (empty / "str-2021").mkdir(parents=True)
    with pytest.raises(SourceNotFound) as raised:
        load("str-2021", "cv-fold-0", mirror=empty, cache_dir=cache_dir)
    assert str(raised.value) == _not_found(empty / "str-2021" / SOURCE.file_name)


def test_a_corrected_user_file_is_built_again_not_served_from_the_cache(tmp_path, upstream):
    from semrel.dataset_scripts import load

    user = tmp_path / "user"
    shutil.copytree(FIXTURES / "czech-news-sts" / "user", user)
    first = load("czech-news-sts", "train-n1", mirror=upstream, data_dir=user, cache_dir=tmp_path / "cache")
    path = user / "train-n1.tsv"
    lines = path.read_bytes().split(b"\n")
    lines[0] = lines[0].rsplit(b"\t", 1)[0] + b"\t3"
    path.write_bytes(b"\n".join(lines))
    again = load("czech-news-sts", "train-n1", mirror=upstream, data_dir=user, cache_dir=tmp_path / "cache")
    fresh = load("czech-news-sts", "train-n1", mirror=upstream, data_dir=user, cache_dir=tmp_path / "fresh")
    assert again["train"].to_list() == fresh["train"].to_list() != first["train"].to_list()
