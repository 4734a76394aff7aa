"""Where the build checks (check-kernel-resources.py, check-scaler-loop.py) find the CUDA binary
tools: the given path, else $CUOBJDUMP / $NVDISASM, else third_party/cuobjdump (put there by
scripts/fetch-cuobjdump.sh), else PATH."""
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_tool(tool, given=None, caller="check"):
    """The path of `tool` (cuobjdump, nvdisasm); exits naming the fetch script if none is found."""
    for path in (given, os.environ.get(tool.upper()), os.path.join(ROOT, "third_party/cuobjdump", tool),
                 shutil.which(tool)):
        if path and os.access(path, os.X_OK):
            return path
    sys.exit(f"{caller}: no {tool} (run scripts/fetch-cuobjdump.sh, or set {tool.upper()})")
