"""Builds the dsml wheel: the Python package and the libdsml it loads.

Where libdsml comes from is chosen with the environment variable
DSML_LIBDSML:

  unset, "build"  built from this repository with CMake (Release, the
                  shared library only) and copied into the package;
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
"""

import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))


def _source_dir():
    return os.environ.get("DSML_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))


def _speedups():
    """The optional extension (its sources are set by BuildExt)."""
    if os.environ.get("DSML_SPEEDUPS") in ("off", "0", "no"):
        return []
    return [Extension("dsml._speedups", sources=["dsml/_speedups.c"],
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
                ext.sources = ["dsml/_speedups.c"] + sorted(
                    os.path.relpath(p, HERE)
                    for p in glob.glob(os.path.join(HERE, lib, "*", "*.c")))
                ext.include_dirs = [os.path.join(copy, "include"), lib]
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


def _pkg_config_library():
    try:
        libdir = subprocess.check_output(
            ["pkg-config", "--variable=libdir", "dsml"], text=True).strip()
    except (OSError, subprocess.CalledProcessError):
        sys.exit("dsml: DSML_LIBDSML=pkg-config, but `pkg-config dsml` finds no "
                 "libdsml (set PKG_CONFIG_PATH to the directory of dsml.pc)")
    return _soname(libdir)


class BuildPy(build_py):
    """Adds libdsml to the package: a copy, or the recorded path of one."""

    def run(self):
        super().run()
        package = os.path.join(self.build_lib, "dsml")
        for old in glob.glob(os.path.join(package, "libdsml*")) + \
                glob.glob(os.path.join(package, "_library.py")):
            os.remove(old)  # from an earlier build in this directory
        choice = os.environ.get("DSML_LIBDSML") or "build"
        if choice == "pkg-config":
            path = _pkg_config_library()
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


class BdistWheel(bdist_wheel):
    """The wheel holds a native library, and the extension module when one
    is built: then this Python and platform, else any Python 3."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        if self.distribution.has_ext_modules():
            return super().get_tag()
        return ("py3", "none", super().get_tag()[2])


setup(cmdclass={"build_py": BuildPy, "build_ext": BuildExt, "bdist_wheel": BdistWheel},
      ext_modules=_speedups())
