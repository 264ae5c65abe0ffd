"""check_install.py WORK LIBRARY [BUILD PYTHONDIR] - the binding installed as
a user installs it, offline, and used from outside the repository.

A plain venv in WORK/venv (`python3 -m venv`, no system site packages: the
setuptools and pip ensurepip puts there, no `wheel`), and `pip install
--no-index --no-build-isolation` of a copy of bindings/python:

0. With BUILD: libdsml installed from BUILD (`cmake --install`, Runtime and
   Development) into WORK/prefix and found through PKG_CONFIG_PATH: the
   install must link it (no CMake build), and `import dsml` from / with no
   DSML_LIBRARY or PYTHONPATH must load it and the compiled fast path
   (when the machine can build it); the time it took is printed.
1. DSML_LIBDSML=build: libdsml built with CMake and carried in the venv.
2. The same install carrying LIBRARY (the libdsml the other tests check);
   the binding's unittest suites run against the installed package from /.
3. With BUILD: `cmake --install BUILD` of the Python component into
   WORK/prefix; the package under PYTHONDIR loads that prefix's libdsml.

The interpreter is this one, or else /usr/bin/python3, whichever has venv
and ensurepip with setuptools; with neither the check is skipped (exit 77),
saying what is missing.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
import time

BINDING = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(os.path.dirname(BINDING))
SKIP = 77

PROBE = """
import ensurepip, venv
assert "setuptools" in ensurepip._get_packages(), "ensurepip brings no setuptools"
"""

SHOW = "import dsml, os; print(os.path.realpath(dsml.library_path))"
FAST = "import dsml._fast as f; print(f.origin)"


def interpreter():
    tried = []
    for python in dict.fromkeys([sys.executable, "/usr/bin/python3"]):
        if not os.path.exists(python):
            continue
        r = subprocess.run([python, "-c", PROBE], capture_output=True, text=True)
        if r.returncode == 0:
            return python
        tried.append("%s: %s" % (python, r.stderr.strip().splitlines()[-1]))
    print("SKIPPED: no interpreter with venv and ensurepip bringing setuptools "
          "(scripts/install-deps installs python3-venv python3-pip "
          "python3-setuptools); " + "; ".join(tried))
    sys.exit(SKIP)


def clean_env(**extra):
    """The environment of a user's shell: no hint where dsml or libdsml is."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DSML_LIBRARY", "PYTHONPATH", "LD_PRELOAD")
           and not k.startswith("PIP_")}
    env.update(extra)
    return env


def run(cmd, **kw):
    print("$ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def loaded(python, env):
    r = subprocess.run([python, "-c", SHOW], cwd="/", env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("import dsml from / failed:\n" + r.stderr)
    return r.stdout.strip()


def inside(path, root):
    return os.path.commonpath([path, os.path.realpath(root)]) == os.path.realpath(root)


def pip_install(venv_python, source, **env):
    cmd = [venv_python, "-m", "pip", "install", "--no-index", "--no-build-isolation",
           "--force-reinstall", "--no-deps", "--no-cache-dir", "-v", source]
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, env=clean_env(DSML_SOURCE_DIR=REPO, **env),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(r.stdout, flush=True)
    if r.returncode != 0:
        sys.exit("pip install failed")
    return r.stdout


def can_build_speedups():
    """Whether this machine has Python's headers (the fast path is built)."""
    include = sysconfig.get_paths()["include"]
    return os.path.exists(os.path.join(include, "Python.h"))


def main(argv):
    work, library = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    python = interpreter()
    shutil.rmtree(work, ignore_errors=True)
    source = os.path.join(work, "python")
    shutil.copytree(BINDING, source, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__", "lib*.so*"))
    venv = os.path.join(work, "venv")
    run([python, "-m", "venv", venv])
    venv_python = os.path.join(venv, "bin", "python")
    prefix = os.path.join(work, "prefix")
    cmake = os.environ.get("CMAKE_COMMAND", "cmake")
    # a sanitized libdsml (the asan preset) loads only with its runtime first
    preload = {"LD_PRELOAD": os.environ["LD_PRELOAD"]} if "LD_PRELOAD" in os.environ else {}

    if len(argv) > 2:
        for component in ("Runtime", "Development"):
            run([cmake, "--install", argv[2], "--prefix", prefix, "--component", component])
        pcdir = os.path.join(prefix, "lib", "pkgconfig")
        started = time.monotonic()
        log = pip_install(venv_python, source, PKG_CONFIG_PATH=pcdir)
        took = time.monotonic() - started
        if "dsml: cmake" in log:
            sys.exit("pip install built libdsml although pkg-config finds one in " + pcdir)
        path = loaded(venv_python, clean_env(**preload))
        if not inside(path, prefix):
            sys.exit("the installed dsml loads %s, not the libdsml in %s" % (path, prefix))
        r = subprocess.run([venv_python, "-c", FAST], cwd="/", env=clean_env(**preload),
                           capture_output=True, text=True)
        if can_build_speedups() and not inside(r.stdout.strip() or "/nonexistent", venv):
            sys.exit("the installed dsml does not load its compiled fast path: %s%s"
                     % (r.stdout, r.stderr))
        print("linked the libdsml pkg-config found, installed in %.1f s, imported from /: "
              "%s; fast path: %s" % (took, path, r.stdout.strip()))

    pip_install(venv_python, source, DSML_LIBDSML="build")
    path = loaded(venv_python, clean_env())
    if not inside(path, venv):
        sys.exit("the installed dsml loads %s, not the libdsml in %s" % (path, venv))
    print("built with CMake, installed, imported from /: " + path)

    pip_install(venv_python, source, DSML_LIBDSML=library)
    path = loaded(venv_python, clean_env(**preload))
    with open(path, "rb") as a, open(library, "rb") as b:
        if not inside(path, venv) or a.read() != b.read():
            sys.exit("the installed dsml loads %s, not a copy of %s" % (path, library))
    run([venv_python, "-B", "-m", "unittest", "discover", "-s",
         os.path.join(BINDING, "tests"), "-t", os.path.join(BINDING, "tests")],
        cwd="/", env=clean_env(DSML_TEST_INSTALLED="1", **preload))

    if len(argv) > 2:
        build, pythondir = argv[2], argv[3]
        run([cmake, "--install", build, "--prefix", prefix, "--component", "Python"])
        path = loaded(python, clean_env(PYTHONPATH=os.path.join(prefix, pythondir),
                                        **preload))
        if not inside(path, os.path.join(prefix)):
            sys.exit("the dsml installed by cmake loads %s, not the one in %s"
                     % (path, prefix))
        print("installed by cmake --install, imported from /: " + path)
    print("install check passed")


if __name__ == "__main__":
    main(sys.argv[1:])
