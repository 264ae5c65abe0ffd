"""check_install.py WORK LIBRARY [BUILD PYTHONDIR] - the binding installed as
a user installs it, offline, and used from outside the repository.

1. A fresh venv in WORK/venv (with the interpreter's own site packages, where
   Debian's setuptools and wheel live); `pip install --no-index
   --no-build-isolation` of a copy of bindings/python, which builds libdsml
   with CMake; `import dsml` from / with no DSML_LIBRARY or PYTHONPATH must
   load the libdsml inside the venv.
2. The same install carrying LIBRARY (the libdsml the other tests check);
   the binding's unittest suites run against the installed package from /.
3. With BUILD: `cmake --install BUILD` of the Runtime and Python components
   into WORK/prefix; the package under PYTHONDIR loads that prefix's libdsml.

The interpreter is this one, or else /usr/bin/python3, whichever has venv,
ensurepip and setuptools (with wheel before setuptools 70.1); with neither
the check is skipped (exit 77), saying what is missing.
"""

import os
import shutil
import subprocess
import sys

BINDING = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(os.path.dirname(BINDING))
SKIP = 77

PROBE = """
import ensurepip, venv, setuptools
if tuple(int(p) for p in setuptools.__version__.split(".")[:2]) < (70, 1):
    import wheel
"""

SHOW = "import dsml, os; print(os.path.realpath(dsml.library_path))"


def interpreter():
    tried = []
    for python in dict.fromkeys([sys.executable, "/usr/bin/python3"]):
        if not os.path.exists(python):
            continue
        r = subprocess.run([python, "-c", PROBE], capture_output=True, text=True)
        if r.returncode == 0:
            return python
        tried.append("%s: %s" % (python, r.stderr.strip().splitlines()[-1]))
    print("SKIPPED: no interpreter with venv, ensurepip, setuptools and wheel "
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
    run([venv_python, "-m", "pip", "install", "--no-index", "--no-build-isolation",
         "--force-reinstall", "--no-deps", "--no-cache-dir", source],
        env=clean_env(DSML_SOURCE_DIR=REPO, **env))


def main(argv):
    work, library = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    python = interpreter()
    shutil.rmtree(work, ignore_errors=True)
    source = os.path.join(work, "python")
    shutil.copytree(BINDING, source, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__", "lib*.so*"))
    venv = os.path.join(work, "venv")
    run([python, "-m", "venv", "--system-site-packages", venv])
    venv_python = os.path.join(venv, "bin", "python")

    pip_install(venv_python, source)
    path = loaded(venv_python, clean_env())
    if not inside(path, venv):
        sys.exit("the installed dsml loads %s, not the libdsml in %s" % (path, venv))
    print("built with CMake, installed, imported from /: " + path)

    pip_install(venv_python, source, DSML_LIBDSML=library)
    preload = {"LD_PRELOAD": os.environ["LD_PRELOAD"]} if "LD_PRELOAD" in os.environ else {}
    path = loaded(venv_python, clean_env(**preload))
    with open(path, "rb") as a, open(library, "rb") as b:
        if not inside(path, venv) or a.read() != b.read():
            sys.exit("the installed dsml loads %s, not a copy of %s" % (path, library))
    run([venv_python, "-B", "-m", "unittest", "discover", "-s",
         os.path.join(BINDING, "tests"), "-t", os.path.join(BINDING, "tests")],
        cwd="/", env=clean_env(DSML_TEST_INSTALLED="1", **preload))

    if len(argv) > 2:
        build, pythondir = argv[2], argv[3]
        prefix = os.path.join(work, "prefix")
        for component in ("Runtime", "Python"):
            run([os.environ.get("CMAKE_COMMAND", "cmake"), "--install", build, "--prefix", prefix,
                 "--component", component])
        path = loaded(python, clean_env(PYTHONPATH=os.path.join(prefix, pythondir),
                                        **preload))
        if not inside(path, os.path.join(prefix)):
            sys.exit("the dsml installed by cmake loads %s, not the one in %s"
                     % (path, prefix))
        print("installed by cmake --install, imported from /: " + path)
    print("install check passed")


if __name__ == "__main__":
    main(sys.argv[1:])
