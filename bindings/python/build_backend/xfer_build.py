# SPDX-License-Identifier: Apache-2.0
"""The PEP 517 build backend of the xfer Python package, in the standard library alone.

The package is pure Python (ctypes, no compiled code), so a wheel is a zip of xfer/*.py plus its
.dist-info. Writing it here instead of using setuptools keeps `pip install bindings/python`
offline (pyproject.toml requires nothing, so pip's isolated build environment installs nothing)
and the source tree clean: every file is written into the folder pip names (wheel_directory,
sdist_directory, metadata_directory), never next to the sources (no build/, no *.egg-info). The
file build_backend/__pycache__ keeps Python from writing byte code for this module when pip
imports it from here.

Metadata comes from pyproject.toml's [project] table: name, version, description, readme (a
file name), license, requires-python, dependencies, optional-dependencies. Hooks: build_wheel, build_sdist,
build_editable (a wheel holding one .pth file naming this folder), the prepare_metadata_* hooks
and the get_requires_* hooks (all empty). Thread-safety: pip calls each hook in its own process.
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PACKAGE = "xfer"
# What an sdist carries besides the package: enough to build the wheel again and run the tests.
_SDIST_EXTRA = ["pyproject.toml", "build_backend/xfer_build.py", "README.md"]
_SDIST_DIRS = ["tests", "examples"]


# ------------------------------------------------------------------ pyproject.toml
def _parse_toml_subset(text):
    """The part of TOML that pyproject.toml uses here, for Pythons without tomllib (< 3.11):
    [table] and [a.b] headers, key = "string", key = ["list", "of", "strings"] (may span lines),
    key = {text = "..."} inline tables of strings, comments."""
    data, table = {}, None
    lines = iter(text.splitlines())
    for line in lines:
        line = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if not line:
            continue
        m = re.match(r"^\[([A-Za-z0-9_.-]+)\]$", line)
        if m:
            table = data
            for part in m.group(1).split("."):
                table = table.setdefault(part, {})
            continue
        key, _, value = (x.strip() for x in line.partition("="))
        while value.startswith("[") and value.count("[") > value.count("]"):
            value += " " + next(lines).split("#", 1)[0].strip()
        key = key.strip('"')
        if value.startswith("["):
            parsed = re.findall(r'"((?:[^"\\]|\\.)*)"', value)
        elif value.startswith("{"):
            parsed = dict(re.findall(r'([A-Za-z0-9_-]+)\s*=\s*"((?:[^"\\]|\\.)*)"', value))
        elif value.startswith('"'):
            parsed = value[1:value.rindex('"')]
        else:
            parsed = value
        (table if table is not None else data)[key] = parsed
    return data


def _project():
    path = os.path.join(_ROOT, "pyproject.toml")
    with open(path, "rb") as f:
        raw = f.read()
    try:
        import tomllib
        data = tomllib.loads(raw.decode("utf-8"))
    except ImportError:
        data = _parse_toml_subset(raw.decode("utf-8"))
    project = data.get("project")
    if not project or "name" not in project or "version" not in project:
        raise RuntimeError(f"{path}: [project] needs name and version")
    return project


def _metadata(project):
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    if project.get("description"):
        lines.append(f"Summary: {project['description']}")
    lic = project.get("license")
    if isinstance(lic, dict) and lic.get("text"):
        lines.append(f"License: {lic['text']}")
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    for dep in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {dep}")
    for extra, deps in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for dep in deps:
            lines.append(f'Requires-Dist: {dep}; extra == "{extra}"')
    body = ""
    readme = project.get("readme")
    if isinstance(readme, str) and os.path.isfile(os.path.join(_ROOT, readme)):
        lines.append("Description-Content-Type: text/markdown" if readme.endswith(".md") else
                     "Description-Content-Type: text/plain")
        with open(os.path.join(_ROOT, readme), encoding="utf-8") as f:
            body = "\n" + f.read()
    return "\n".join(lines) + "\n" + body


def _dist_name(project):
    return re.sub(r"[-_.]+", "_", project["name"]).lower(), project["version"]


# ------------------------------------------------------------------ wheels
_WHEEL_FILE = "Wheel-Version: 1.0\nGenerator: xfer_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _package_files():
    """(name in the wheel, bytes) of every .py file of the package, sorted."""
    out = []
    base = os.path.join(_ROOT, _PACKAGE)
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, "rb") as f:
                    out.append((os.path.relpath(path, _ROOT).replace(os.sep, "/"), f.read()))
    return out


def _dist_info_files(project):
    name, version = _dist_name(project)
    info = f"{name}-{version}.dist-info"
    return info, [(f"{info}/METADATA", _metadata(project).encode()), (f"{info}/WHEEL", _WHEEL_FILE.encode()),
                  (f"{info}/top_level.txt", f"{_PACKAGE}\n".encode())]


def _write_wheel(wheel_directory, payload):
    project = _project()
    name, version = _dist_name(project)
    info, meta = _dist_info_files(project)
    files = payload + meta
    record = [_record_line(n, d) for n, d in files] + [f"{info}/RECORD,,"]
    filename = f"{name}-{version}-py3-none-any.whl"
    # A fixed timestamp makes the wheel the same bytes for the same sources.
    stamp = (2020, 1, 1, 0, 0, 0)
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files + [(f"{info}/RECORD", ("\n".join(record) + "\n").encode())]:
            zi = zipfile.ZipInfo(n, stamp)
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, d)
    return filename


def _write_metadata(metadata_directory):
    info, meta = _dist_info_files(_project())
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    for n, d in meta:
        with open(os.path.join(metadata_directory, n), "wb") as f:
            f.write(d)
    return info


# ------------------------------------------------------------------ PEP 517 / PEP 660 hooks
def get_requires_for_build_wheel(config_settings=None):
    """Nothing: the standard library builds the wheel."""
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """Writes NAME-VERSION.dist-info (METADATA, WHEEL, top_level.txt) into metadata_directory."""
    return _write_metadata(metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _write_metadata(metadata_directory)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """Writes xfer-VERSION-py3-none-any.whl (xfer/*.py and its dist-info) into wheel_directory;
    returns its file name."""
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel whose xfer.pth puts this source folder on sys.path (pip install -e)."""
    return _write_wheel(wheel_directory, [(f"_{_PACKAGE}_editable.pth", (_ROOT + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    """Writes xfer-VERSION.tar.gz (the package, tests, examples, pyproject.toml, this backend and
    PKG-INFO) into sdist_directory; returns its file name."""
    project = _project()
    name, version = _dist_name(project)
    base = f"{name}-{version}"
    filename = f"{base}.tar.gz"
    members = [rel for rel, _ in _package_files()]
    members += [p for p in _SDIST_EXTRA if os.path.isfile(os.path.join(_ROOT, p))]
    for d in _SDIST_DIRS:
        for folder, dirs, files in os.walk(os.path.join(_ROOT, d)):
            dirs[:] = sorted(x for x in dirs if x != "__pycache__")
            members += sorted(os.path.relpath(os.path.join(folder, f), _ROOT) for f in files
                              if not f.endswith(".pyc"))
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel in members:
            tar.add(os.path.join(_ROOT, rel), arcname=f"{base}/{rel}", recursive=False)
        pkg_info = _metadata(project).encode()
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size, ti.mtime, ti.mode = len(pkg_info), int(time.time()), 0o644
        tar.addfile(ti, io.BytesIO(pkg_info))
    return filename
