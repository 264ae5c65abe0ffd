"""Builds the dsml wheel: the Python package and the libdsml it loads.

Where libdsml comes from is chosen with the environment variable
DSML_LIBDSML:

  unset           an installed libdsml of this release when `pkg-config
                  dsml` finds one (PKG_CONFIG_PATH for another prefix),
                  else "build";
  "build"         built from this repository with CMake (Release, the
                  shared library only) and copied into the package, even
                  when pkg-config finds one;
  "pkg-config"    an installed libdsml, found with `pkg-config dsml`; the
                  package records its path instead of carrying a copy;
  a file path     that libdsml.so is copied into the package (for instance
                  the one a test run has just checked).

With a C compiler and Python's headers (python3-dev) the package also gets
its compiled fast path, dsml._speedups, built from dsml/_speedups.c and the
library's sources; without them it is left out (the ctypes path does
everything), and DSML_SPEEDUPS=off leaves it out on purpose.

DSML_SOURCE_DIR names the repository when this directory is not inside it.
Everything else is in pyproject.toml.

The wheel is written by setuptools' bdist_wheel (setuptools 70.1 and later)
or the `wheel` package's when one is there, else by BdistWheel below, so
that `pip install --no-index --no-build-isolation` works in a plain venv,
whose setuptools may predate 70.1 and which has no `wheel`.
"""

import base64
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile

from setuptools import Command, Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:  # no wheel package either: BdistWheel writes it
        bdist_wheel = None

HERE = os.path.dirname(os.path.abspath(__file__))


def _source_dir():
    return os.environ.get("DSML_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))


def _speedups():
    """The optional extension (its sources are set by BuildExt)."""
    if os.environ.get("DSML_SPEEDUPS") in ("off", "0", "no"):
        return []
    return [Extension("dsml._speedups", sources=["dsml/_speedups.c", "dsml/_pages.c"],
                      libraries=["cjson", "utf8proc", "pcre2-8", "m"],
                      extra_compile_args=["-std=c11", "-fvisibility=hidden"],
                      optional=True)]


class BuildExt(build_ext):
    """Compiles the library's sources into the extension: a copy of lib/ and
    include/ under build/speedups (setuptools takes relative paths only)."""

    def run(self):
        source = _source_dir()
        copy = os.path.join("build", "speedups")
        if self.extensions and os.path.isdir(os.path.join(source, "lib")):
            for part in ("lib", "include"):
                target = os.path.join(HERE, copy, part)
                if os.path.isdir(target):
                    shutil.rmtree(target)
                shutil.copytree(os.path.join(source, part), target,
                                ignore=shutil.ignore_patterns("*.map", "*.txt"))
            lib = os.path.join(copy, "lib")
            for ext in self.extensions:
                ext.sources = ["dsml/_speedups.c", "dsml/_pages.c"] + sorted(
                    os.path.relpath(p, HERE)
                    for p in glob.glob(os.path.join(HERE, lib, "*", "*.c")))
                ext.include_dirs = [os.path.join(copy, "include"), lib, "dsml"]
        elif self.extensions:
            print("dsml: no libdsml sources at %s: no compiled fast path" % source)
            self.extensions = []
        super().run()


def _run(cmd):
    print("dsml: " + " ".join(cmd), flush=True)
    try:
        subprocess.check_call(cmd)
    except OSError as exc:
        sys.exit("dsml: cannot run %s (%s); scripts/install-deps build installs "
                 "what building libdsml needs" % (cmd[0], exc))
    except subprocess.CalledProcessError as exc:
        sys.exit("dsml: %s failed with status %d" % (cmd[0], exc.returncode))


def _cmake_build(work):
    """Build libdsml from the repository; returns the path of libdsml.so.N."""
    source = _source_dir()
    if not os.path.isfile(os.path.join(source, "include", "dsml", "dsml.h")):
        sys.exit("dsml: no libdsml source tree at %s; set DSML_SOURCE_DIR to the "
                 "repository, or DSML_LIBDSML=pkg-config to use an installed "
                 "libdsml" % source)
    build = os.path.join(work, "build")
    stage = os.path.join(work, "stage")
    configure = ["cmake", "-S", source, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                 "-DBUILD_SHARED_LIBS=ON", "-DDSML_INSTALL=ON",
                 "-DCMAKE_INSTALL_LIBDIR=lib"]
    if shutil.which("ninja") and not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        configure += ["-G", "Ninja"]
    _run(configure)
    _run(["cmake", "--build", build, "--target", "dsml", "--parallel"])
    _run(["cmake", "--install", build, "--prefix", stage, "--component", "Runtime"])
    return _soname(os.path.join(stage, "lib"))


def _soname(libdir):
    """libdsml.so.N in libdir (the name the loader asks for)."""
    names = sorted(glob.glob(os.path.join(libdir, "libdsml.so.*")), key=len)
    if not names:
        sys.exit("dsml: no libdsml.so.* in %s" % libdir)
    return names[0]


def _pkg_config(*args):
    """pkg-config's answer about dsml, or None."""
    try:
        return subprocess.check_output(["pkg-config"] + list(args) + ["dsml"], text=True,
                                       stderr=subprocess.DEVNULL).strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _binding_release():
    with open(os.path.join(HERE, "dsml", "__init__.py")) as f:
        version = re.search(r'__version__ = "([^"]+)"', f.read()).group(1)
    return version.split(".")[:2]


def _pkg_config_library(required=True):
    """libdsml.so.N of the libdsml pkg-config finds, when its release is
    the binding's (major.minor); else None, or an exit when required."""
    libdir = _pkg_config("--variable=libdir")
    version = _pkg_config("--modversion")
    if libdir and version and version.split(".")[:2] == _binding_release():
        names = glob.glob(os.path.join(libdir, "libdsml.so.*"))
        if names:
            return _soname(libdir)
    if required:
        sys.exit("dsml: DSML_LIBDSML=pkg-config, but `pkg-config dsml` finds no "
                 "libdsml %s (found: %s; set PKG_CONFIG_PATH to the directory of "
                 "dsml.pc)" % (".".join(_binding_release()), version or "none"))
    return None


class BuildPy(build_py):
    """Adds libdsml to the package: a copy, or the recorded path of one."""

    def run(self):
        super().run()
        package = os.path.join(self.build_lib, "dsml")
        for old in glob.glob(os.path.join(package, "libdsml*")) + \
                glob.glob(os.path.join(package, "_library.py")):
            os.remove(old)  # from an earlier build in this directory
        choice = os.environ.get("DSML_LIBDSML")
        path = None
        if not choice:
            path = _pkg_config_library(required=False)
            choice = "pkg-config" if path else "build"
        if choice == "pkg-config":
            path = path or _pkg_config_library()
            print("dsml: using the installed %s" % path, flush=True)
            with open(os.path.join(package, "_library.py"), "w") as f:
                f.write('"""Where libdsml was found when this package was built."""\n'
                        "PATH = %r\n" % path)
            return
        if choice == "build":
            path = _cmake_build(os.path.join(os.path.dirname(self.build_lib), "libdsml"))
        else:
            path = os.path.abspath(choice)
        target = os.path.join(package, os.path.basename(path))
        shutil.copyfile(path, target)
        os.chmod(target, 0o755)


def _wheel_tag(distribution):
    """(python, abi, platform): this Python and platform when the extension
    is built, else any Python 3 on this platform (the native library)."""
    platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
    if distribution.has_ext_modules():
        python = "cp%d%d" % sys.version_info[:2]
        return python, python, platform
    return "py3", "none", platform


if bdist_wheel is not None:
    class BdistWheel(bdist_wheel):
        """The wheel holds a native library, and the extension module when
        one is built."""

        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):
            if self.distribution.has_ext_modules():
                return super().get_tag()
            return ("py3", "none", super().get_tag()[2])
else:
    class BdistWheel(Command):
        """bdist_wheel for a setuptools without one and no `wheel`: the
        built package and a .dist-info (METADATA, WHEEL, entry_points.txt,
        RECORD) zipped as PEP 427 says."""

        description = "build a wheel"
        user_options = [("dist-dir=", "d", "where to put the wheel"),
                        ("bdist-dir=", "b", "unused"), ("plat-name=", "p", "unused"),
                        ("python-tag=", None, "unused"), ("keep-temp", "k", "unused"),
                        ("py-limited-api=", None, "unused")]
        boolean_options = ["keep-temp"]

        def initialize_options(self):
            self.dist_dir = self.bdist_dir = self.plat_name = None
            self.python_tag = self.py_limited_api = None
            self.keep_temp = False

        def finalize_options(self):
            self.dist_dir = self.dist_dir or "dist"

        def egg2dist(self, egginfo, distinfo):
            """The .dist-info of the .egg-info setuptools writes (its
            dist_info command calls this too)."""
            if os.path.isdir(distinfo):
                shutil.rmtree(distinfo)
            os.makedirs(distinfo)
            shutil.copyfile(os.path.join(egginfo, "PKG-INFO"),
                            os.path.join(distinfo, "METADATA"))
            for n in ("entry_points.txt", "top_level.txt"):
                if os.path.exists(os.path.join(egginfo, n)):
                    shutil.copyfile(os.path.join(egginfo, n), os.path.join(distinfo, n))

        def run(self):
            self.run_command("build")
            build_lib = self.get_finalized_command("build").build_lib
            dist = self.distribution
            name, version = dist.get_name().replace("-", "_"), dist.get_version()
            tag = "-".join(_wheel_tag(dist))
            info = "%s-%s.dist-info" % (name, version)
            files = {}
            for root, _, names in os.walk(build_lib):
                for n in names:
                    path = os.path.join(root, n)
                    with open(path, "rb") as f:
                        files[os.path.relpath(path, build_lib)] = f.read()
            egg_info = self.get_finalized_command("egg_info")
            self.run_command("egg_info")
            meta = os.path.join(os.path.dirname(os.path.abspath(build_lib)), info)
            self.egg2dist(egg_info.egg_info, meta)
            for n in os.listdir(meta):
                with open(os.path.join(meta, n), "rb") as f:
                    files[info + "/" + n] = f.read()
            files[info + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: dsml setup.py\n"
                                      "Root-Is-Purelib: false\nTag: %s\n" % tag).encode()
            record = []
            for path, data in sorted(files.items()):
                digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
                record.append("%s,sha256=%s,%d" % (path, digest.rstrip(b"=").decode(),
                                                   len(data)))
            record.append(info + "/RECORD,,")
            files[info + "/RECORD"] = ("\n".join(record) + "\n").encode()
            os.makedirs(self.dist_dir, exist_ok=True)
            wheel = os.path.join(self.dist_dir, "%s-%s-%s.whl" % (name, version, tag))
            with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
                for path, data in files.items():
                    z.writestr(path, data)
            print("dsml: wrote " + wheel, flush=True)


setup(cmdclass={"build_py": BuildPy, "build_ext": BuildExt, "bdist_wheel": BdistWheel},
      ext_modules=_speedups())
